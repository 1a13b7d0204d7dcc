package replica_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/record"
	"github.com/varve/varve/replica"
	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

func openManager(t *testing.T, dirs ...string) *replica.Manager {
	t.Helper()
	m, err := replica.Open(logdir.Config{
		LogDirs: dirs, RecoveryThreadsPerDataDir: 2,
		LogConfig: func(string) segment.Config { c := segment.DefaultConfig(); c.SegmentBytes = 4096; return c },
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func tp(topic string, p int32) segment.TopicPartition {
	return segment.TopicPartition{Topic: topic, Partition: p}
}

// Kafka: ReplicaManager.checkpointHighWatermarks writes every partition's
// high watermark to replication-offset-checkpoint; a restart reads it
// back, with the topic ids and the data.
func TestHighWatermarksCheckpointedAtShutdown(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	m := openManager(t, d1, d2)
	id := replica.TopicID{7}
	for p := int32(0); p < 4; p++ {
		part, err := m.CreatePartition(tp("orders", p), id)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 10+int(p); i++ {
			if _, err := part.AppendAsLeader(segmenttest.Batch(t, 2, 300, int64(i), 0)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	got := map[segment.TopicPartition]int64{}
	for _, d := range []string{d1, d2} {
		cp, err := segment.ReadCheckpoint(nil, filepath.Join(d, segment.ReplicationCheckpointFile))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range cp {
			got[k] = v
		}
	}
	m = openManager(t, d1, d2)
	defer m.Close()
	for p := int32(0); p < 4; p++ {
		want := int64(2 * (10 + p))
		if got[tp("orders", p)] != want {
			t.Fatalf("checkpointed hw of partition %d: %d, want %d", p, got[tp("orders", p)], want)
		}
		part, ok := m.Partition(tp("orders", p))
		if !ok {
			t.Fatalf("partition %d lost", p)
		}
		if part.HighWatermark() != want || part.EndOffset() != want || part.TopicID != id {
			t.Fatalf("partition %d: hw %d end %d id %v", p, part.HighWatermark(), part.EndOffset(), part.TopicID)
		}
	}
}

// Kafka: Partition.maybeIncrementLeaderHW / DelayedFetch: an append wakes
// waiters and advances the high watermark; reads stop at it.
func TestAppendWakesWaitersAndAdvancesHW(t *testing.T) {
	m := openManager(t, t.TempDir())
	defer m.Close()
	p, _ := m.CreatePartition(tp("w", 0), replica.TopicID{3})
	wait := p.Wait()
	if _, err := p.AppendAsLeader(segmenttest.Batch(t, 3, 10, 1, 0)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-wait:
	case <-time.After(time.Second):
		t.Fatal("append did not wake the waiter")
	}
	if p.HighWatermark() != 3 {
		t.Fatalf("hw %d", p.HighWatermark())
	}
	buf, _ := p.ReadBytes(0, 1<<20)
	h, _ := record.ParseHeader(buf)
	if h.PartitionLeaderEpoch != p.LeaderEpoch() {
		t.Fatalf("stored leader epoch %d, want %d", h.PartitionLeaderEpoch, p.LeaderEpoch())
	}
	if _, err := p.DeleteRecordsBefore(2); err != nil || p.StartOffset() != 2 {
		t.Fatalf("delete records: %v, start %d", err, p.StartOffset())
	}
	if _, err := p.DeleteRecordsBefore(4); err == nil {
		t.Fatal("deleting records past the high watermark must fail")
	}
}

// Concurrent CreatePartition calls for one partition yield one
// Partition; the others get ErrPartitionExists after it is published.
func TestConcurrentCreateYieldsOnePartition(t *testing.T) {
	m := openManager(t, t.TempDir(), t.TempDir())
	defer m.Close()
	const n = 16
	var wg sync.WaitGroup
	parts := make(chan *replica.Partition, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := m.CreatePartition(tp("race", 0), replica.TopicID{4})
			switch {
			case err == nil:
				parts <- p
			case errors.Is(err, replica.ErrPartitionExists):
				if _, ok := m.Partition(tp("race", 0)); !ok {
					t.Error("ErrPartitionExists before the partition was published")
				}
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	close(parts)
	var got []*replica.Partition
	for p := range parts {
		got = append(got, p)
	}
	if len(got) != 1 {
		t.Fatalf("%d partitions created, want 1", len(got))
	}
	if p, _ := m.Partition(tp("race", 0)); p != got[0] {
		t.Fatal("the published partition is not the one created")
	}
	dirs := 0
	for _, d := range m.Logs() {
		if d.TopicPartition() == tp("race", 0) {
			dirs++
		}
	}
	if dirs != 1 {
		t.Fatalf("%d logs for one partition", dirs)
	}
}

// A deleted partition wakes its waiters and is no longer served.
func TestDeletePartitionWakesWaiters(t *testing.T) {
	d := t.TempDir()
	m := openManager(t, d)
	defer m.Close()
	p, _ := m.CreatePartition(tp("gone", 0), replica.TopicID{2})
	wait := p.Wait()
	if err := m.DeletePartition(tp("gone", 0)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-wait:
	case <-time.After(time.Second):
		t.Fatal("delete did not wake the waiter")
	}
	if _, ok := m.Partition(tp("gone", 0)); ok {
		t.Fatal("partition still served")
	}
	if _, err := os.Stat(filepath.Join(d, "gone-0")); !os.IsNotExist(err) {
		t.Fatalf("partition directory still there: %v", err)
	}
	if err := m.DeletePartition(tp("gone", 0)); !errors.Is(err, replica.ErrUnknownPartition) {
		t.Fatalf("second delete: %v", err)
	}
}
