package replica_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/varve/varve/record"
	"github.com/varve/varve/replica"
	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

func openManager(t *testing.T, dirs ...string) *replica.Manager {
	t.Helper()
	m, err := replica.Open(replica.Config{
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

// Kafka: LogManager.shutdown flushes every log, writes the three
// checkpoints, and only then the clean-shutdown marker; the next start
// reads them back.
func TestCleanShutdownWritesCheckpointsThenMarker(t *testing.T) {
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
	// Partitions went to the least loaded dir: two each.
	for _, d := range []string{d1, d2} {
		dirs, _ := filepath.Glob(filepath.Join(d, "orders-*"))
		if len(dirs) != 2 {
			t.Fatalf("%s holds %d partitions, want 2", d, len(dirs))
		}
		if _, err := os.Stat(filepath.Join(d, segment.CleanShutdownFile)); err != nil {
			t.Fatalf("no clean-shutdown marker in %s", d)
		}
		for _, name := range []string{segment.RecoveryPointCheckpointFile, segment.LogStartOffsetCheckpointFile, segment.ReplicationCheckpointFile} {
			cp, err := segment.ReadCheckpoint(nil, filepath.Join(d, name))
			if err != nil || len(cp) != 2 {
				t.Fatalf("%s in %s: %v %v", name, d, cp, err)
			}
		}
	}
	m = openManager(t, d1, d2)
	defer m.Close()
	for p := int32(0); p < 4; p++ {
		part, ok := m.Partition(tp("orders", p))
		if !ok {
			t.Fatalf("partition %d lost", p)
		}
		want := int64(2 * (10 + p))
		if part.HighWatermark() != want || part.Log.EndOffset() != want || part.TopicID != id {
			t.Fatalf("partition %d: hw %d end %d id %v", p, part.HighWatermark(), part.Log.EndOffset(), part.TopicID)
		}
		if !part.Log.Recovery().CleanShutdown {
			t.Fatalf("partition %d reopened as unclean after a clean shutdown", p)
		}
	}
	for _, d := range []string{d1, d2} {
		if _, err := os.Stat(filepath.Join(d, segment.CleanShutdownFile)); err == nil {
			t.Fatal("the marker must be deleted at start (KAFKA-10471)")
		}
	}
}

// Without the marker, every partition is validated from its recovery
// point.
func TestMissingMarkerMeansRecovery(t *testing.T) {
	d := t.TempDir()
	m := openManager(t, d)
	part, _ := m.CreatePartition(tp("t", 0), replica.TopicID{1})
	for i := 0; i < 20; i++ {
		part.AppendAsLeader(segmenttest.Batch(t, 1, 500, int64(i), 0))
	}
	m.Close()
	os.Remove(filepath.Join(d, segment.CleanShutdownFile))
	m = openManager(t, d)
	defer m.Close()
	p, _ := m.Partition(tp("t", 0))
	if p.Log.Recovery().CleanShutdown || p.Log.EndOffset() != 20 {
		t.Fatalf("recovery %+v, end %d", p.Log.Recovery(), p.Log.EndOffset())
	}
}

// Kafka: a deleted partition's directory is renamed *-delete and removed
// in the background; one left by a crash is removed at the next start.
func TestDeletePartition(t *testing.T) {
	d := t.TempDir()
	m := openManager(t, d)
	part, _ := m.CreatePartition(tp("gone", 0), replica.TopicID{2})
	part.AppendAsLeader(segmenttest.Batch(t, 1, 10, 1, 0))
	if err := m.DeletePartition(tp("gone", 0)); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Partition(tp("gone", 0)); ok {
		t.Fatal("partition still served after delete")
	}
	// A leftover from a crash during deletion.
	os.MkdirAll(filepath.Join(d, "gone-1.abc-delete"), 0o755)
	m.Close()
	m = openManager(t, d)
	defer m.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		entries, _ := os.ReadDir(d)
		left := false
		for _, e := range entries {
			left = left || strings.HasPrefix(e.Name(), "gone")
		}
		if !left {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("deleted partition directories were not removed")
		}
		time.Sleep(10 * time.Millisecond)
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
	buf, _ := p.Log.ReadBytes(0, 1<<20)
	h, _ := record.ParseHeader(buf)
	if h.PartitionLeaderEpoch != p.LeaderEpoch() {
		t.Fatalf("stored leader epoch %d, want %d", h.PartitionLeaderEpoch, p.LeaderEpoch())
	}
	if _, err := p.DeleteRecordsBefore(2); err != nil || p.Log.StartOffset() != 2 {
		t.Fatalf("delete records: %v, start %d", err, p.Log.StartOffset())
	}
	if _, err := p.DeleteRecordsBefore(4); err == nil {
		t.Fatal("deleting records past the high watermark must fail")
	}
}
