package cluster

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/varve/varve/config"
)

// fakeMarkers answers WriteTxnMarkers as a script says: per call, the
// code for each partition (missing: written).
type fakeMarkers struct {
	mu    sync.Mutex
	calls []*kmsg.WriteTxnMarkersRequest
	fail  func(call int, topic string, p int32) (int16, error)
}

func (f *fakeMarkers) writeTxnMarkers(_ context.Context, _ int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, req)
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = p
				if f.fail != nil {
					code, err := f.fail(len(f.calls), t.Topic, p)
					if err != nil {
						return nil, err
					}
					rp.ErrorCode = code
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	return resp, nil
}

func (f *fakeMarkers) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func newTxnTestBroker(t *testing.T, dir string, f *fakeMarkers) (*Broker, *kgo.Client) {
	t.Helper()
	cfg, err := config.Parse(map[string]string{"log.dirs": dir, "listeners": "PLAINTEXT://127.0.0.1:0",
		"varve.metrics.listener": "", "num.network.threads": "1", "num.io.threads": "2",
		"transaction.state.log.num.partitions": "1"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	b.txns.markers = f
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close(); b.Shutdown(context.Background()) })
	return b, cl
}

func txnRequest[R kmsg.Response](t *testing.T, cl *kgo.Client, req kmsg.Request) R {
	t.Helper()
	resp, err := cl.Request(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.(R)
}

// describeState polls DescribeTransactions until id is in state want.
func describeState(t *testing.T, cl *kgo.Client, id, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var got string
	for time.Now().Before(deadline) {
		req := kmsg.NewPtrDescribeTransactionsRequest()
		req.TransactionalIDs = []string{id}
		resp := txnRequest[*kmsg.DescribeTransactionsResponse](t, cl, req)
		if got = resp.TransactionStates[0].State; got == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("transaction %s is %q, want %q", id, got, want)
}

// openTxn creates topics ta and tb, opens a transaction of id over
// their two partitions each, and ends it (commit or abort).
func openTxn(t *testing.T, cl *kgo.Client, id string, commit bool) {
	t.Helper()
	ct := kmsg.NewPtrCreateTopicsRequest()
	for _, name := range []string{"ta", "tb"} {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 2, 1
		ct.Topics = append(ct.Topics, rt)
	}
	txnRequest[*kmsg.CreateTopicsResponse](t, cl, ct)
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorType, fc.CoordinatorKey, fc.CoordinatorKeys = 1, id, []string{id}
	txnRequest[*kmsg.FindCoordinatorResponse](t, cl, fc)
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID, init.TransactionTimeoutMillis = &id, 60000
	ir := txnRequest[*kmsg.InitProducerIDResponse](t, cl, init)
	if ir.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %s", kerr.ErrorForCode(ir.ErrorCode))
	}
	ap := kmsg.NewPtrAddPartitionsToTxnRequest()
	ap.TransactionalID, ap.ProducerID, ap.ProducerEpoch = id, ir.ProducerID, ir.ProducerEpoch
	for _, name := range []string{"ta", "tb"} {
		rt := kmsg.NewAddPartitionsToTxnRequestTopic()
		rt.Topic, rt.Partitions = name, []int32{0, 1}
		ap.Topics = append(ap.Topics, rt)
	}
	apr, err := ap.RequestWith(context.Background(), pinned(t, cl, kmsg.AddPartitionsToTxn.Int16(), 3))
	if err != nil || apr.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("AddPartitionsToTxn: %v %+v", err, apr)
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = id, ir.ProducerID, ir.ProducerEpoch, commit
	if er := txnRequest[*kmsg.EndTxnResponse](t, cl, end); er.ErrorCode != 0 {
		t.Fatalf("EndTxn: %s", kerr.ErrorForCode(er.ErrorCode))
	}
}

// pinned is a client like cl at most at version v of key.
func pinned(t *testing.T, cl *kgo.Client, key, v int16) *kgo.Client {
	t.Helper()
	seeds := cl.OptValue(kgo.SeedBrokers).([]string)
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(key, v)
	c, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.MaxVersions(vs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// Kafka: TransactionMarkerChannelManager. The markers of a committed
// transaction go to each partition's leader, grouped by leader; the
// partitions that fail are tried again until written, and only then is
// CompleteCommit written.
func TestMarkersRetriedUntilWritten(t *testing.T) {
	f := &fakeMarkers{fail: func(call int, topic string, p int32) (int16, error) {
		switch {
		case call == 1 && topic == "tb" && p == 1:
			return kerr.NotLeaderForPartition.Code, nil
		case call == 2:
			return 0, errors.New("connection refused")
		}
		return 0, nil
	}}
	_, cl := newTxnTestBroker(t, t.TempDir(), f)
	openTxn(t, cl, "m", true)
	describeState(t, cl, "m", "CompleteCommit")
	if n := f.count(); n != 3 {
		t.Fatalf("%d WriteTxnMarkers requests, want 3 (all, then tb-1 twice)", n)
	}
	f.mu.Lock()
	first, last := f.calls[0].Markers[0], f.calls[2].Markers[0]
	f.mu.Unlock()
	if !first.Committed || len(first.Topics) != 2 || len(last.Topics) != 1 || last.Topics[0].Topic != "tb" ||
		len(last.Topics[0].Partitions) != 1 || last.Topics[0].Partitions[0] != 1 {
		t.Fatalf("first request %+v, last %+v", first, last)
	}
}

// Kafka: a leader answering INVALID_PRODUCER_EPOCH or
// TRANSACTION_COORDINATOR_FENCED means a newer coordinator or producer
// epoch took over: the markers are abandoned, not retried.
func TestMarkersAbandonedOnStaleEpoch(t *testing.T) {
	f := &fakeMarkers{fail: func(int, string, int32) (int16, error) { return kerr.TransactionCoordinatorFenced.Code, nil }}
	_, cl := newTxnTestBroker(t, t.TempDir(), f)
	openTxn(t, cl, "s", false)
	describeState(t, cl, "s", "PrepareAbort")
	time.Sleep(300 * time.Millisecond) // past two retry backoffs
	if n := f.count(); n != 1 {
		t.Fatalf("%d WriteTxnMarkers requests, want 1", n)
	}
}

// Kafka: loadTransactionsForTxnTopicPartition. A transaction left in
// PrepareCommit by a node that stopped has its markers sent again by
// the node that loads the partition, which then completes it.
func TestMarkersResentAfterRestart(t *testing.T) {
	dir := t.TempDir()
	never := &fakeMarkers{fail: func(int, string, int32) (int16, error) { return kerr.NotEnoughReplicas.Code, nil }}
	b, cl := newTxnTestBroker(t, dir, never)
	openTxn(t, cl, "r", true)
	describeState(t, cl, "r", "PrepareCommit")
	cl.Close()
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	ok := &fakeMarkers{}
	_, cl2 := newTxnTestBroker(t, dir, ok)
	describeState(t, cl2, "r", "CompleteCommit")
	ok.mu.Lock()
	defer ok.mu.Unlock()
	if len(ok.calls) != 1 || len(ok.calls[0].Markers[0].Topics) != 2 {
		t.Fatalf("after the restart: %d requests", len(ok.calls))
	}
}
