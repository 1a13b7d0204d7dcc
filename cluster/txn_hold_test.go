package cluster

import (
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// describeTxn is DescribeTransactions' answer for id.
func describeTxn(t *testing.T, cl *kgo.Client, id string) kmsg.DescribeTransactionsResponseTransactionState {
	t.Helper()
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{id}
	return txnRequest[*kmsg.DescribeTransactionsResponse](t, cl, req).TransactionStates[0]
}

// addAsync sends AddPartitionsToTxn v3 for ta/0 and delivers its code.
func addAsync(t *testing.T, cl *kgo.Client, id string, pid int64, epoch int16) <-chan int16 {
	done := make(chan int16, 1)
	ap := kmsg.NewPtrAddPartitionsToTxnRequest()
	ap.TransactionalID, ap.ProducerID, ap.ProducerEpoch = id, pid, epoch
	ap.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "ta", Partitions: []int32{0}}}
	c := pinned(t, cl, kmsg.AddPartitionsToTxn.Int16(), 3)
	go func() {
		resp, err := ap.RequestWith(t.Context(), c)
		if err != nil {
			done <- -1
			return
		}
		done <- resp.Topics[0].Partitions[0].ErrorCode
	}()
	return done
}

// Kafka answers CONCURRENT_TRANSACTIONS to a request that arrives while
// the previous transaction's markers are written, and the client sleeps
// its retry back-off (20 ms) before asking again. Varve holds the
// request until the markers are written and then answers it as if it
// had arrived then: the next transaction's AddPartitionsToTxn waits for
// the commit's markers and succeeds.
func TestHeldUntilMarkersWritten(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	f := &fakeMarkers{fail: func(int, string, int32) (int16, error) {
		once.Do(func() { <-release })
		return 0, nil
	}}
	_, cl := newTxnTestBroker(t, t.TempDir(), f)
	openTxn(t, cl, "held", true)
	d := describeTxn(t, cl, "held")
	if d.State != "PrepareCommit" {
		t.Fatalf("state %s, want PrepareCommit while the markers are blocked", d.State)
	}
	done := addAsync(t, cl, "held", d.ProducerID, d.ProducerEpoch)
	select {
	case code := <-done:
		t.Fatalf("AddPartitionsToTxn answered %v before the markers were written", kerr.ErrorForCode(code))
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("AddPartitionsToTxn after the markers: %v", kerr.ErrorForCode(code))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("AddPartitionsToTxn still held after the markers were written")
	}
	if d := describeTxn(t, cl, "held"); d.State != "Ongoing" {
		t.Fatalf("state %s, want Ongoing", d.State)
	}
}

// The hold is bounded: markers that cannot be written leave the answer
// CONCURRENT_TRANSACTIONS once txnHoldMax has passed, and the client
// retries as it would against Kafka.
func TestHoldIsBounded(t *testing.T) {
	old := txnHoldMax
	t.Cleanup(func() { txnHoldMax = old }) // after the broker's shutdown
	txnHoldMax = 300 * time.Millisecond
	f := &fakeMarkers{fail: func(int, string, int32) (int16, error) { return kerr.NotLeaderForPartition.Code, nil }}
	_, cl := newTxnTestBroker(t, t.TempDir(), f)
	openTxn(t, cl, "stuck", true)
	d := describeTxn(t, cl, "stuck")
	start := time.Now()
	select {
	case code := <-addAsync(t, cl, "stuck", d.ProducerID, d.ProducerEpoch):
		if code != kerr.ConcurrentTransactions.Code {
			t.Fatalf("AddPartitionsToTxn: %v, want CONCURRENT_TRANSACTIONS", kerr.ErrorForCode(code))
		}
		if waited := time.Since(start); waited < txnHoldMax {
			t.Fatalf("answered after %v, before the hold's end", waited)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("AddPartitionsToTxn never answered")
	}
}

// Kafka: InitProducerId for an id with an ongoing transaction fences
// the producer, aborts the transaction and answers
// CONCURRENT_TRANSACTIONS so that the client retries and gets the next
// epoch. Held until the abort's markers are written, it answers the
// next epoch at once: at transaction.version 2 the fence bumps the
// epoch (1), the abort bumps it again (2), the retry once more (3).
func TestInitProducerIDHeldThroughTheFence(t *testing.T) {
	_, cl := newTxnTestBroker(t, t.TempDir(), &fakeMarkers{})
	openTxn(t, cl, "fence", true)
	describeState(t, cl, "fence", "CompleteCommit")
	d := describeTxn(t, cl, "fence")
	if code := <-addAsync(t, cl, "fence", d.ProducerID, d.ProducerEpoch); code != 0 {
		t.Fatalf("AddPartitionsToTxn: %v", kerr.ErrorForCode(code))
	}
	id := "fence"
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID, init.TransactionTimeoutMillis = &id, 60000
	ir := txnRequest[*kmsg.InitProducerIDResponse](t, cl, init)
	if ir.ErrorCode != 0 || ir.ProducerID != d.ProducerID || ir.ProducerEpoch != d.ProducerEpoch+3 {
		t.Fatalf("InitProducerId: %v pid %d epoch %d, want pid %d epoch %d", kerr.ErrorForCode(ir.ErrorCode),
			ir.ProducerID, ir.ProducerEpoch, d.ProducerID, d.ProducerEpoch+3)
	}
}
