package cluster_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka: a producer id is never handed out twice (ProducerIdManager's
// blocks only move forward). Partitions copied into a fresh node bring
// producer state the node never handed out: a new idempotent producer
// that got one of those ids again would see its first batches answered
// as duplicates of the adopted producer's and never appended (here: a
// 4-record batch with the adopted producer's id, epoch and sequence
// numbers, acknowledged and dropped).
func TestAdoptedProducerStateRaisesProducerIDs(t *testing.T) {
	src := t.TempDir()
	a := startBroker(t, src, nil)
	createTopic(t, a.addr, "adopted", 1, nil)
	produceBatch(t, a.addr, "adopted", "old", 4)
	a.stop(t)

	dst := t.TempDir()
	if err := os.CopyFS(filepath.Join(dst, "adopted-0"), os.DirFS(filepath.Join(src, "adopted-0"))); err != nil {
		t.Fatal(err)
	}
	b := startBroker(t, dst, nil)
	produceBatch(t, b.addr, "adopted", "new", 4)
	recs := consumeN(t, b.addr, "adopted", 8)
	if len(recs) != 8 {
		t.Fatalf("read %d records, want 8", len(recs))
	}
	for i, r := range recs {
		want := fmt.Sprintf("old-%d", i)
		if i >= 4 {
			want = fmt.Sprintf("new-%d", i-4)
		}
		if string(r.Value) != want || r.Offset != int64(i) {
			t.Errorf("offset %d: %q, want %q at %d", r.Offset, r.Value, want, i)
		}
	}
}

// Kafka: the same, for partition directories a Kafka 4.4.0 broker wrote
// (internal/kafkafixtures): their .snapshot files name producer ids 0, 1
// and 1000, so the node's first producer id is above 1000, whether or
// not the producers' state was still live when the logs loaded.
func TestKafkaPartitionsRaiseProducerIDs(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"fixture-0", "fixture-1"} {
		src := filepath.Join("..", "internal", "kafkafixtures", "testdata", "kafka-4.4.0", p)
		if err := os.CopyFS(filepath.Join(dir, p), os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
	}
	b := startBroker(t, dir, nil)
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionTimeoutMillis = -1
	resp, err := req.RequestWith(ctx(t), client(t, b.addr))
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v %+v", err, resp)
	}
	if resp.ProducerID <= 1000 {
		t.Errorf("producer id %d, one the adopted partitions' snapshots hold (0, 1 or 1000) or below", resp.ProducerID)
	}
}

// produceBatch produces n records in one batch with a new idempotent
// producer: its sequence numbers are 0..n-1.
func produceBatch(t *testing.T, addr, topic, prefix string, n int) {
	t.Helper()
	c := client(t, addr, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(time.Second))
	defer c.Close()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Value: fmt.Appendf(nil, "%s-%d", prefix, i)}
	}
	produceSync(t, c, recs...)
}
