package cluster_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
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
