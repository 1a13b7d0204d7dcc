package cluster_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/record"
)

// txnRecords builds a transactional batch of producer pid with the given
// values.
func txnRecords(t *testing.T, pid int64, epoch int16, seq int32, values ...string) []byte {
	t.Helper()
	bb := record.NewBatchBuilder(record.CompressionNone)
	bb.SetProducer(pid, epoch, seq)
	bb.SetTransactional(true)
	for _, v := range values {
		bb.Append(record.Record{Value: []byte(v)})
	}
	b, err := bb.Build()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func plainRecords(t *testing.T, values ...string) []byte {
	t.Helper()
	bb := record.NewBatchBuilder(record.CompressionNone)
	for _, v := range values {
		bb.Append(record.Record{Value: []byte(v)})
	}
	b, err := bb.Build()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// produceTxn sends records to topic/0 as a transactional producer would,
// with a transactional id, and returns the partition's error code.
func produceTxn(t *testing.T, c *kgo.Client, topic string, txnID *string, records []byte) int16 {
	t.Helper()
	return produceTxnAt(t, c, 11, topic, txnID, records)
}

// produceTxnAt is produceTxn at Produce version at most (11 at most:
// verified, not added: KIP-890 part 1).
func produceTxnAt(t *testing.T, c *kgo.Client, version int16, topic string, txnID *string, records []byte) int16 {
	t.Helper()
	pr := kmsg.NewPtrProduceRequest()
	pr.Acks, pr.TimeoutMillis, pr.TransactionID = -1, 5000, txnID
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = records
	rt.Partitions = append(rt.Partitions, rp)
	pr.Topics = append(pr.Topics, rt)
	kresp, err := c.Request(ctx(t), produceAt{pr, version})
	if err != nil {
		t.Fatalf("produce: %v", err)
	}
	return kresp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
}

type marker struct {
	pid              int64
	epoch            int16
	coordinatorEpoch int32
	commit           bool
	topic            string
}

// writeMarkers sends one WriteTxnMarkers request and returns each
// marker's partition-0 error code.
func writeMarkers(t *testing.T, c *kgo.Client, ms ...marker) []int16 {
	t.Helper()
	return writeMarkersTo(t, c, ms...)
}

// writeMarkersTo sends one WriteTxnMarkers request through r, the client
// (which routes it to the partitions' leaders) or one broker.
func writeMarkersTo(t *testing.T, r interface {
	Request(context.Context, kmsg.Request) (kmsg.Response, error)
}, ms ...marker) []int16 {
	t.Helper()
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	for _, m := range ms {
		rm := kmsg.NewWriteTxnMarkersRequestMarker()
		rm.ProducerID, rm.ProducerEpoch, rm.CoordinatorEpoch, rm.Committed = m.pid, m.epoch, m.coordinatorEpoch, m.commit
		rt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
		rt.Topic, rt.Partitions = m.topic, []int32{0}
		rm.Topics = append(rm.Topics, rt)
		req.Markers = append(req.Markers, rm)
	}
	kresp, err := r.Request(ctx(t), req)
	if err != nil {
		t.Fatalf("write txn markers: %v", err)
	}
	resp := kresp.(*kmsg.WriteTxnMarkersResponse)
	var out []int16
	for _, m := range resp.Markers {
		out = append(out, m.Topics[0].Partitions[0].ErrorCode)
	}
	return out
}

func consumeValues(t *testing.T, addr, topic string, n int, isolation kgo.IsolationLevel) []string {
	t.Helper()
	c := client(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(isolation))
	var out []string
	cx := ctx(t)
	for len(out) < n {
		fs := c.PollFetches(cx)
		if cx.Err() != nil {
			t.Fatalf("consumed %v, want %d records", out, n)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		for _, r := range fs.Records() {
			out = append(out, string(r.Value))
		}
	}
	return out
}

func listLatest(t *testing.T, c *kgo.Client, topic string, isolation int8) int64 {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = isolation
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx(t), c)
	if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("list offsets: %v %+v", err, resp)
	}
	return resp.Topics[0].Partitions[0].Offset
}

var txnID = func() *string { s := "app-1"; return &s }()

// Kafka: KIP-98. Two transactions interleave with plain records; the
// coordinator aborts one and commits the other with WriteTxnMarkers. A
// read_committed consumer (franz-go) gets the plain and committed
// records only and a read_uncommitted one gets all of them; before the
// markers, read_committed stops at the last stable offset, which
// ListOffsets(read_committed) reports as the latest offset.
func TestReadCommittedDropsAbortedRecords(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	createTopic(t, b.addr, "tx", 1, nil)
	c := client(t, b.addr)
	if code := produceTxn(t, c, "tx", nil, plainRecords(t, "p0")); code != 0 { // 0
		t.Fatalf("plain produce: %d", code)
	}
	for _, step := range []struct {
		records []byte
	}{
		{txnRecords(t, 1000, 0, 0, "a1", "a2")}, // 1, 2
		{plainRecords(t, "p1")},                 // 3
		{txnRecords(t, 1001, 0, 0, "b1")},       // 4
		{txnRecords(t, 1000, 0, 2, "a3")},       // 5
	} {
		if code := produceTxn(t, c, "tx", txnID, step.records); code != 0 {
			t.Fatalf("produce: %v", kerr.ErrorForCode(code))
		}
	}
	if got := listLatest(t, c, "tx", 1); got != 1 {
		t.Fatalf("read_committed latest offset with transactions open = %d, want 1", got)
	}
	if got := listLatest(t, c, "tx", 0); got != 6 {
		t.Fatalf("read_uncommitted latest offset = %d, want 6", got)
	}
	if got := consumeValues(t, b.addr, "tx", 1, kgo.ReadCommitted()); !slices.Equal(got, []string{"p0"}) {
		t.Fatalf("read_committed before the markers: %v", got)
	}
	// Acknowledged markers are reported from the goroutines that wait
	// for them, in no set order and possibly after the answer.
	var mu sync.Mutex
	var heard []string
	b.SetTxnMarkerWritten(func(topic string, p int32, pid int64, epoch int16, committed bool) {
		mu.Lock()
		defer mu.Unlock()
		heard = append(heard, fmt.Sprintf("%s/%d %d %v", topic, p, pid, committed))
	})
	codes := writeMarkers(t, c, marker{pid: 1000, coordinatorEpoch: 1, topic: "tx"}, marker{pid: 1001, coordinatorEpoch: 1, commit: true, topic: "tx"})
	if !slices.Equal(codes, []int16{0, 0}) {
		t.Fatalf("markers: %v", codes)
	}
	want := []string{"tx/0 1000 false", "tx/0 1001 true"}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		got := slices.Sorted(slices.Values(heard))
		mu.Unlock()
		if slices.Equal(got, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("markers heard %v, want %v", got, want)
		}
	}
	if code := produceTxn(t, c, "tx", nil, plainRecords(t, "p2")); code != 0 {
		t.Fatalf("plain produce: %d", code)
	}
	committed := []string{"p0", "p1", "b1", "p2"}
	if got := consumeValues(t, b.addr, "tx", len(committed), kgo.ReadCommitted()); !slices.Equal(got, committed) {
		t.Fatalf("read_committed = %v, want %v", got, committed)
	}
	all := []string{"p0", "a1", "a2", "p1", "b1", "a3", "p2"}
	if got := consumeValues(t, b.addr, "tx", len(all), kgo.ReadUncommitted()); !slices.Equal(got, all) {
		t.Fatalf("read_uncommitted = %v, want %v", got, all)
	}
	if got := listLatest(t, c, "tx", 1); got != 9 {
		t.Fatalf("read_committed latest after the markers = %d, want the high watermark 9", got)
	}
}

// Kafka: the fetch response's LastStableOffset and AbortedTransactions
// (FetchResponse v4+): null for read_uncommitted, the aborted
// transactions overlapping the fetched range for read_committed.
func TestFetchReturnsAbortedTransactions(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	createTopic(t, b.addr, "ab", 1, nil)
	c := client(t, b.addr)
	produceTxn(t, c, "ab", txnID, txnRecords(t, 7, 0, 0, "x1", "x2")) // 0, 1
	produceTxn(t, c, "ab", txnID, txnRecords(t, 8, 0, 0, "y1"))       // 2
	if codes := writeMarkers(t, c, marker{pid: 7, topic: "ab"}); codes[0] != 0 {
		t.Fatalf("abort: %v", codes)
	}
	id := topicID(t, c, "ab")
	for _, v := range []int16{4, 11, 12, 17} {
		for _, iso := range []int8{0, 1} {
			req := kmsg.NewPtrFetchRequest()
			req.SetVersion(v)
			req.ReplicaID, req.MaxBytes, req.IsolationLevel = -1, 1<<20, iso
			req.SessionEpoch = -1
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic, rt.TopicID = "ab", id
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LastFetchedEpoch = 1<<20, -1, -1
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			resp, err := req.RequestWith(ctx(t), c)
			if err != nil {
				t.Fatalf("fetch v%d: %v", v, err)
			}
			p := resp.Topics[0].Partitions[0]
			if p.ErrorCode != 0 || p.HighWatermark != 4 || p.LastStableOffset != 2 {
				t.Fatalf("fetch v%d isolation %d: error %d hw %d lso %d, want hw 4 lso 2", v, iso, p.ErrorCode, p.HighWatermark, p.LastStableOffset)
			}
			switch {
			case iso == 0 && p.AbortedTransactions != nil:
				t.Fatalf("fetch v%d read_uncommitted: aborted transactions %+v, want null", v, p.AbortedTransactions)
			case iso == 1 && (len(p.AbortedTransactions) != 1 || p.AbortedTransactions[0].ProducerID != 7 || p.AbortedTransactions[0].FirstOffset != 0):
				t.Fatalf("fetch v%d read_committed: aborted transactions %+v", v, p.AbortedTransactions)
			}
		}
	}
}

// Kafka: ProducerAppendInfo.appendEndTxnMarker's checks, as the
// coordinator sees them: an older producer epoch is
// INVALID_PRODUCER_EPOCH, an older coordinator epoch
// TRANSACTION_COORDINATOR_FENCED, a partition not hosted
// UNKNOWN_TOPIC_OR_PARTITION.
func TestWriteTxnMarkersErrors(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	createTopic(t, b.addr, "fence", 1, nil)
	c := client(t, b.addr)
	produceTxn(t, c, "fence", txnID, txnRecords(t, 50, 3, 0, "v"))
	var mu sync.Mutex // the function runs on a handler goroutine
	var heard []int16
	b.SetTxnMarkerWritten(func(_ string, _ int32, _ int64, epoch int16, _ bool) {
		mu.Lock()
		defer mu.Unlock()
		heard = append(heard, epoch)
	})
	// Straight to the broker: the client would refuse the unknown topic
	// itself.
	codes := writeMarkersTo(t, c.Broker(int(brokerID(t, c))),
		marker{pid: 50, epoch: 2, coordinatorEpoch: 5, topic: "fence"},
		marker{pid: 50, epoch: 3, coordinatorEpoch: 5, commit: true, topic: "fence"},
		marker{pid: 50, epoch: 3, coordinatorEpoch: 4, topic: "fence"},
		marker{pid: 50, epoch: 3, coordinatorEpoch: 5, topic: "nosuch"},
	)
	want := []int16{kerr.InvalidProducerEpoch.Code, 0, kerr.TransactionCoordinatorFenced.Code, kerr.UnknownTopicOrPartition.Code}
	if !slices.Equal(codes, want) {
		t.Fatalf("codes %v, want %v", codes, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(heard) != 1 || heard[0] != 3 {
		t.Fatalf("markers heard %v: only the written one should be", heard)
	}
}

// Kafka: a marker is appended with requiredAcks=-1: the answer waits for
// the high watermark to pass it.
func TestWriteTxnMarkersWaitsForTheISR(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	createTopic(t, b.addr, "isr", 1, nil)
	c := client(t, b.addr)
	produceTxn(t, c, "isr", txnID, txnRecords(t, 60, 0, 0, "v"))
	part := b.PartitionReplica("isr", 0)
	part.SetFollowerEndOffset(1)
	done := make(chan []int16, 1)
	go func() { done <- writeMarkers(t, c, marker{pid: 60, commit: true, topic: "isr"}) }()
	waitParked(t, b, 1)
	select {
	case codes := <-done:
		t.Fatalf("answered %v before the high watermark passed the marker", codes)
	case <-time.After(200 * time.Millisecond):
	}
	if lso := part.LastStableOffset(); lso != 0 {
		t.Fatalf("LSO with the marker unreplicated = %d, want 0", lso)
	}
	part.SetFollowerEndOffset(math.MaxInt64)
	select {
	case codes := <-done:
		if codes[0] != 0 {
			t.Fatalf("marker: %v", codes)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("not answered after the high watermark passed the marker")
	}
	if lso := part.LastStableOffset(); lso != 2 {
		t.Fatalf("LSO after the marker replicated = %d, want 2", lso)
	}
}

// The transactional produce check is one function the broker can swap
// (KIP-890's verification will replace it); by default a transactional
// batch needs a transactional id.
func TestTxnProduceCheckIsReplaceable(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	createTopic(t, b.addr, "gate", 1, nil)
	c := client(t, b.addr)
	if code := produceTxn(t, c, "gate", nil, txnRecords(t, 70, 0, 0, "v")); code != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Fatalf("without a transactional id: %d", code)
	}
	var mu sync.Mutex // the check runs on a handler goroutine
	var seen []string
	b.SetTxnProduceCheck(func(id *string, topic string, p int32, records []byte) error {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, fmt.Sprintf("%s/%d", topic, p))
		return kerr.InvalidTxnState
	})
	if code := produceTxn(t, c, "gate", txnID, txnRecords(t, 70, 0, 0, "v")); code != kerr.InvalidTxnState.Code {
		t.Fatalf("replaced check: %d", code)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seen, []string{"gate/0"}) {
		t.Fatalf("check saw %v", seen)
	}
	b.SetTxnProduceCheck(nil)
	if code := produceTxn(t, c, "gate", txnID, txnRecords(t, 70, 0, 0, "v")); code != 0 {
		t.Fatalf("restored check: %d", code)
	}
	var _ cluster.TxnProduceCheck = cluster.RefuseTransactionalWithoutID
}

func brokerID(t *testing.T, c *kgo.Client) int32 {
	t.Helper()
	resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx(t), c)
	if err != nil || len(resp.Brokers) == 0 {
		t.Fatalf("metadata: %v", err)
	}
	return resp.Brokers[0].NodeID
}
