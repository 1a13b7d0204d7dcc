package cluster

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/varve/varve/config"
	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

// Kafka has no such metric; NATS counts lost stream data. A partition
// whose active segment disappeared while the broker was down reopens
// shorter than its recovery point, and varve_log_lost_offsets_total
// counts the offsets it lost.
func TestLostOffsetsMetric(t *testing.T) {
	dir := t.TempDir()
	cfg, err := config.Parse(map[string]string{
		"log.dirs": dir, "listeners": "PLAINTEXT://127.0.0.1:0", "varve.metrics.listener": "",
	})
	if err != nil {
		t.Fatal(err)
	}
	b := newBrokerForTest(t, cfg)
	if _, err := b.createTopic(topicSpec{name: "lost", partitions: 1, rf: 1}); err != nil {
		t.Fatal(err)
	}
	p, ok := b.parts.Partition(segment.TopicPartition{Topic: "lost", Partition: 0})
	if !ok {
		t.Fatal("partition lost-0 missing")
	}
	for i := range 6 {
		if _, err := p.AppendAsLeader(segmenttest.Batch(t, 1, 10, int64(i), 0)); err != nil {
			t.Fatal(err)
		}
	}
	active := filepath.Join(dir, "lost-0", "00000000000000000000.log") // the only segment: the active one
	shutdownForTest(t, b)
	if err := os.Remove(active); err != nil {
		t.Fatal(err)
	}
	b = newBrokerForTest(t, cfg)
	defer shutdownForTest(t, b)
	if got := gatherCounter(t, b, "varve_log_lost_offsets_total"); got != 6 {
		t.Fatalf("varve_log_lost_offsets_total = %v, want 6", got)
	}
}

func newBrokerForTest(t *testing.T, cfg *config.Broker) *Broker {
	t.Helper()
	b, err := New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	return b
}

func shutdownForTest(t *testing.T, b *Broker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

func gatherCounter(t *testing.T, b *Broker, name string) float64 {
	t.Helper()
	mfs, err := b.metrics.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("metric %s not registered", name)
	return 0
}
