package cluster

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/txn"
)

// fakeCoordinatorNode answers verify-only requests: a partition is in
// the transaction when its number is even. The first request waits for
// release.
type fakeCoordinatorNode struct {
	mu      sync.Mutex
	reqs    []*kmsg.AddPartitionsToTxnRequest
	release chan struct{}
	fail    error
	top     int16 // the answer's top-level error code
}

func (f *fakeCoordinatorNode) send(_ context.Context, _ int32, req *kmsg.AddPartitionsToTxnRequest) (*kmsg.AddPartitionsToTxnResponse, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	first := len(f.reqs) == 1
	f.mu.Unlock()
	if first {
		<-f.release
	}
	if f.fail != nil {
		return nil, f.fail
	}
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	if resp.ErrorCode = f.top; f.top != 0 {
		return resp, nil
	}
	for _, rt := range req.Transactions {
		if !rt.VerifyOnly || req.Version != verifyVersion {
			return nil, errors.New("not a verify-only v5 request")
		}
		ot := kmsg.NewAddPartitionsToTxnResponseTransaction()
		ot.TransactionalID = rt.TransactionalID
		for _, t := range rt.Topics {
			tt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			tt.Topic = t.Topic
			for _, p := range t.Partitions {
				pp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
				pp.Partition = p
				if p%2 != 0 {
					pp.ErrorCode = kerr.InvalidTxnState.Code
				}
				tt.Partitions = append(tt.Partitions, pp)
			}
			ot.Topics = append(ot.Topics, tt)
		}
		resp.Transactions = append(resp.Transactions, ot)
	}
	return resp, nil
}

// Kafka: AddPartitionsToTxnManager. One request in flight per
// coordinator node; the questions asked meanwhile go in one next
// request, the partitions of one producer's transaction merged, and a
// question of an older epoch than one already waiting is answered
// INVALID_PRODUCER_EPOCH without being sent.
func TestTxnVerifierBatchesPerNode(t *testing.T) {
	f := &fakeCoordinatorNode{release: make(chan struct{})}
	v := newTxnVerifier(f.send, 5*time.Second)
	tp := func(p int32) txn.TopicPartition { return txn.TopicPartition{Topic: "out", Partition: p} }
	type ask struct {
		id    string
		epoch int16
		p     int32
		want  int16
	}
	results := make(chan [2]int16, 8)
	run := func(i int, a ask) {
		go func() { results <- [2]int16{int16(i), v.verify(2, a.id, 7, a.epoch, tp(a.p))} }()
	}
	asks := []ask{
		{"a", 1, 0, 0}, // sent alone, held by the fake
		{"a", 1, 2, 0}, // the next batch
		{"a", 1, 3, kerr.InvalidTxnState.Code},
		{"b", 1, 4, 0},
		{"a", 0, 6, kerr.InvalidProducerEpoch.Code}, // older than a's epoch 1 already waiting
	}
	run(0, asks[0])
	waitFor(t, func() bool { f.mu.Lock(); defer f.mu.Unlock(); return len(f.reqs) == 1 })
	for i := 1; i < len(asks)-1; i++ {
		run(i, asks[i])
	}
	waitFor(t, func() bool {
		v.mu.Lock()
		defer v.mu.Unlock()
		next := v.nodes[2].next
		return next != nil && len(next.txns) == 2 && len(next.txns["a"].tps) == 2
	})
	run(len(asks)-1, asks[len(asks)-1])
	// The older epoch is answered at once, before the release.
	if r := <-results; r[0] != 4 || r[1] != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("first answer: question %d, code %d; want the older epoch refused", r[0], r[1])
	}
	close(f.release)
	for range len(asks) - 1 {
		r := <-results
		if want := asks[r[0]].want; r[1] != want {
			t.Errorf("question %d (%+v): %d, want %d", r[0], asks[r[0]], r[1], want)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) != 2 || len(f.reqs[1].Transactions) != 2 {
		t.Fatalf("%d requests, the second with %d transactions; want 2 and 2", len(f.reqs), len(f.reqs[len(f.reqs)-1].Transactions))
	}
	for _, rt := range f.reqs[1].Transactions {
		if rt.TransactionalID == "a" && (len(rt.Topics) != 1 || len(rt.Topics[0].Partitions) != 2) {
			t.Errorf("a's partitions were not merged: %+v", rt.Topics)
		}
	}
}

// A batch that cannot be sent answers NETWORK_EXCEPTION, which the
// producer is told as NOT_ENOUGH_REPLICAS (retriable).
func TestTxnVerifierUnreachableNode(t *testing.T) {
	f := &fakeCoordinatorNode{release: make(chan struct{}), fail: errors.New("connection refused")}
	close(f.release)
	v := newTxnVerifier(f.send, time.Second)
	tp := txn.TopicPartition{Topic: "out", Partition: 0}
	code := v.verify(3, "a", 1, 0, tp)
	if code != kerr.NetworkException.Code {
		t.Fatalf("code %d, want NETWORK_EXCEPTION", code)
	}
	if err := produceVerifyError(code, "a", tp); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Errorf("the producer is told %v", err)
	}
}

// Kafka: AddPartitionsToTxnManager. The coordinator's refusal of the
// inter-broker request itself (CLUSTER_AUTHORIZATION_FAILED: the
// brokers' principal lacks ClusterAction) is not shown to the client,
// which is told the verification did not complete: INVALID_TXN_STATE.
func TestTxnVerifierClusterAuthorization(t *testing.T) {
	f := &fakeCoordinatorNode{release: make(chan struct{}), top: kerr.ClusterAuthorizationFailed.Code}
	close(f.release)
	v := newTxnVerifier(f.send, time.Second)
	tp := txn.TopicPartition{Topic: "out", Partition: 0}
	if code := v.verify(3, "a", 1, 0, tp); code != kerr.InvalidTxnState.Code {
		t.Fatalf("code %s, want INVALID_TXN_STATE", kerr.ErrorForCode(code))
	}
}

// Kafka: AddPartitionsToTxnManager and KIP-890. The coordinator's answer
// as the asking request's client is told it: PRODUCER_FENCED is
// INVALID_PRODUCER_EPOCH; TRANSACTION_ABORTABLE stays for a client that
// knows it and is INVALID_TXN_STATE for one that does not; the rest pass.
func TestVerifiedFor(t *testing.T) {
	for _, tc := range []struct {
		code  int16
		knows bool
		want  int16
	}{
		{kerr.ProducerFenced.Code, true, kerr.InvalidProducerEpoch.Code},
		{kerr.ProducerFenced.Code, false, kerr.InvalidProducerEpoch.Code},
		{kerr.TransactionAbortable.Code, true, kerr.TransactionAbortable.Code},
		{kerr.TransactionAbortable.Code, false, kerr.InvalidTxnState.Code},
		{kerr.InvalidTxnState.Code, true, kerr.InvalidTxnState.Code},
		{kerr.ConcurrentTransactions.Code, false, kerr.ConcurrentTransactions.Code},
		{0, false, 0},
	} {
		if got := verifiedFor(tc.code, tc.knows); got != tc.want {
			t.Errorf("verifiedFor(%s, %v) = %s, want %s", kerr.ErrorForCode(tc.code), tc.knows, kerr.ErrorForCode(got), kerr.ErrorForCode(tc.want))
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
	}
}
