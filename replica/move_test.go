package replica_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/replica"
	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

// Kafka: ReplicaManager.alterReplicaLogDirs and
// Partition.maybeReplaceCurrentWithFutureReplica: after a move to
// another log dir the partition serves from the moved log, keeps its
// high watermark and leader epoch, and its leader-epoch-checkpoint is
// written in the new directory from then on.
func TestPartitionMovedToAnotherLogDir(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	m, err := replica.OpenReplicated(logdir.Config{LogDirs: []string{d1, d2},
		LogConfig: func(string) segment.Config { c := segment.DefaultConfig(); c.SegmentBytes = 4096; return c }},
		replica.ManagerConfig{NodeID: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	part := tp("moving", 0)
	p, err := m.CreatePartition(part, replica.TopicID{4})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.MakeLeader(part, replica.LeaderAndISR{Leader: 1, LeaderEpoch: 3, ISR: []int32{1}, Replicas: []int32{1}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		if _, err := p.AppendRecordsToLeader(segmenttest.Batch(t, 2, 200, int64(i), 0), 1, 1); err != nil {
			t.Fatal(err)
		}
	}
	hw := p.HighWatermark()
	if err := m.LogDirs().AlterLogDir(part, d2); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for filepath.Dir(m.Dir(part)) != d2 || len(m.LogDirs().Futures()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("not moved: %q", m.Dir(part))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if p.HighWatermark() != hw || p.EndOffset() != 80 || !p.Online() {
		t.Fatalf("after the move: hw %d (was %d), end %d, online %v", p.HighWatermark(), hw, p.EndOffset(), p.Online())
	}
	if got := readEpochFile(t, m, part); got != "0\n1\n3 0\n" {
		t.Fatalf("epoch checkpoint after the move: %q", got)
	}
	if err := m.MakeLeader(part, replica.LeaderAndISR{Leader: 1, LeaderEpoch: 4, ISR: []int32{1}, Replicas: []int32{1}}); err != nil {
		t.Fatal(err)
	}
	if got := readEpochFile(t, m, part); got != "0\n2\n3 0\n4 80\n" {
		t.Fatalf("epoch checkpoint after a leadership in the new dir: %q", got)
	}
	if _, err := p.AppendRecordsToLeader(segmenttest.Batch(t, 2, 200, 99, 0), 1, 1); err != nil {
		t.Fatal(err)
	}
	if b, err := p.ReadBytes(0, 1); err != nil || len(b) == 0 {
		t.Fatalf("read the moved log: %v", err)
	}
}

// Kafka: replaceCurrentWithFutureLog runs under the partition's lock, so
// an append that arrives during the swap waits for it and lands in the
// moved log instead of failing.
func TestAppendWaitsForLogSwap(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	m, err := replica.Open(logdir.Config{LogDirs: []string{d1, d2}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	part := tp("swap", 0)
	p, err := m.CreatePartition(part, replica.TopicID{5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.AppendAsLeader(segmenttest.Batch(t, 2, 10, 1, 0)); err != nil {
		t.Fatal(err)
	}
	held, release := make(chan struct{}), make(chan struct{})
	m.LogDirs().SetMoveHook(func(_ segment.TopicPartition, s logdir.MoveStep) bool {
		if s == logdir.StepSourceClosed {
			close(held)
			<-release
		}
		return true
	})
	if err := m.LogDirs().AlterLogDir(part, d2); err != nil {
		t.Fatal(err)
	}
	<-held
	appended := make(chan error, 1)
	go func() {
		_, err := p.AppendAsLeader(segmenttest.Batch(t, 2, 10, 2, 0))
		appended <- err
	}()
	select {
	case err := <-appended:
		t.Fatalf("append during the swap returned at once: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-appended; err != nil {
		t.Fatalf("append during the swap: %v", err)
	}
	if filepath.Dir(m.Dir(part)) != d2 || p.EndOffset() != 4 || p.HighWatermark() != 4 {
		t.Fatalf("after the swap: dir %s end %d hw %d", m.Dir(part), p.EndOffset(), p.HighWatermark())
	}
}
