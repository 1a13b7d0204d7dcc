package replica_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/replica"
	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

func openReplicated(t *testing.T, dir string, id int32) *replica.Manager {
	t.Helper()
	m, err := replica.OpenReplicated(logdir.Config{LogDirs: []string{dir},
		LogConfig: func(string) segment.Config { return segment.DefaultConfig() }},
		replica.ManagerConfig{NodeID: id})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func readEpochFile(t *testing.T, m *replica.Manager, tp segment.TopicPartition) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(m.Dir(tp), replica.LeaderEpochCheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Kafka: LeaderEpochFileCache and its leader-epoch-checkpoint: a new
// leader records (epoch, log end) at once (KAFKA-7415) and the file is
// rewritten whenever the cache changes; it is read back when the
// partition opens, and truncated with the log (KIP-101).
func TestLeaderEpochCheckpointFile(t *testing.T) {
	dir, part := t.TempDir(), tp("epochs", 0)
	m := openReplicated(t, dir, 1)
	p, err := m.CreatePartition(part, replica.TopicID{3})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.MakeLeader(part, replica.LeaderAndISR{Leader: 1, LeaderEpoch: 3, ISR: []int32{1}, Replicas: []int32{1}}); err != nil {
		t.Fatal(err)
	}
	if got := readEpochFile(t, m, part); got != "0\n1\n3 0\n" {
		t.Fatalf("after the first leadership: %q", got)
	}
	if _, err := p.AppendRecordsToLeader(segmenttest.Batch(t, 4, 10, 1, 0), 1, 1); err != nil {
		t.Fatal(err)
	}
	if err := m.MakeLeader(part, replica.LeaderAndISR{Leader: 1, LeaderEpoch: 5, ISR: []int32{1}, Replicas: []int32{1}}); err != nil {
		t.Fatal(err)
	}
	if got := readEpochFile(t, m, part); got != "0\n2\n3 0\n5 4\n" {
		t.Fatalf("after the second leadership: %q", got)
	}
	if _, err := p.AppendRecordsToLeader(segmenttest.Batch(t, 2, 10, 2, 0), 1, 1); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	m = openReplicated(t, dir, 1)
	defer m.Close()
	p, _ = m.Partition(part)
	if got := p.EpochEntries(); !slices.Equal(got, []replica.EpochEntry{{3, 0}, {5, 4}}) {
		t.Fatalf("reopened cache %v", got)
	}
	// A follower of epoch 6 told by its leader that epoch 3 ends at 4
	// truncates its log there and drops epoch 5 from the file.
	if err := m.MakeFollower(part, replica.LeaderAndISR{Leader: 2, LeaderEpoch: 6, ISR: []int32{1, 2}, Replicas: []int32{1, 2}}); err != nil {
		t.Fatal(err)
	}
	if err := p.HandleFetchResponse(replica.FetchResponse{Diverging: &replica.EpochEnd{Epoch: 3, EndOffset: 4}}); err != nil {
		t.Fatal(err)
	}
	if p.EndOffset() != 4 {
		t.Fatalf("log end %d after truncation to 4", p.EndOffset())
	}
	if got := readEpochFile(t, m, part); got != "0\n1\n3 0\n" {
		t.Fatalf("after truncation: %q", got)
	}
}

// Kafka: Partition.appendRecordsToLeader: NOT_LEADER_OR_FOLLOWER on a
// follower; acks=all with an ISR below min.insync.replicas appends
// nothing (NOT_ENOUGH_REPLICAS) while acks=1 appends; KIP-320 fencing of
// a request's CurrentLeaderEpoch; a replica fetch from a broker that is
// not assigned the partition is refused.
func TestPartitionLeaderRules(t *testing.T) {
	m := openReplicated(t, t.TempDir(), 1)
	defer m.Close()
	part := tp("rules", 0)
	p, _ := m.CreatePartition(part, replica.TopicID{4})
	if err := m.MakeFollower(part, replica.LeaderAndISR{Leader: 2, LeaderEpoch: 1, ISR: []int32{1, 2}, Replicas: []int32{1, 2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.AppendRecordsToLeader(segmenttest.Batch(t, 1, 10, 1, 0), -1, 1); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("append on a follower: %v", err)
	}
	if err := m.MakeLeader(part, replica.LeaderAndISR{Leader: 1, LeaderEpoch: 2, ISR: []int32{1}, Replicas: []int32{1, 2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.AppendRecordsToLeader(segmenttest.Batch(t, 1, 10, 1, 0), -1, 2); !errors.Is(err, kerr.NotEnoughReplicas) || p.EndOffset() != 0 {
		t.Fatalf("acks=all below min.insync.replicas: %v, log end %d", err, p.EndOffset())
	}
	if _, err := p.AppendRecordsToLeader(segmenttest.Batch(t, 1, 10, 1, 0), 1, 2); err != nil || p.EndOffset() != 1 {
		t.Fatalf("acks=1: %v, log end %d", err, p.EndOffset())
	}
	for _, c := range []struct {
		epoch int32
		want  error
	}{{-1, nil}, {2, nil}, {1, kerr.FencedLeaderEpoch}, {3, kerr.UnknownLeaderEpoch}} {
		if err := p.CheckLeaderEpoch(c.epoch); !errors.Is(err, c.want) && !(err == nil && c.want == nil) {
			t.Fatalf("current leader epoch %d: %v, want %v", c.epoch, err, c.want)
		}
	}
	_, _, err := p.ReadForFollower(replica.FetchRequest{ReplicaID: 7, FetchOffset: 0, LastFetchedEpoch: -1, CurrentLeaderEpoch: -1}, 1<<20, true)
	if !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("fetch from a broker that is not a replica: %v", err)
	}
	// The follower 2 catches up: its addition to the ISR is proposed
	// (KIP-497), and the high watermark, held while the ISR is below
	// min.insync.replicas, moves once the controller agrees.
	if _, _, err := p.ReadForFollower(replica.FetchRequest{ReplicaID: 2, FetchOffset: 1, LastFetchedEpoch: 2, CurrentLeaderEpoch: 2}, 1<<20, true); err != nil || p.HighWatermark() != 0 {
		t.Fatalf("caught-up follower: %v, hw %d", err, p.HighWatermark())
	}
	a, ok := p.TakeAlterPartition()
	if !ok || !slices.Equal(a.ISR, []int32{1, 2}) || a.LeaderEpoch != 2 {
		t.Fatalf("AlterPartition %+v %v", a, ok)
	}
	p.HandleAlterPartitionResponse(replica.LeaderAndISR{Leader: 1, LeaderEpoch: 2, PartitionEpoch: 1, ISR: a.ISR, Replicas: []int32{1, 2}}, nil, 0)
	if p.HighWatermark() != 1 {
		t.Fatalf("hw %d after the ISR grew", p.HighWatermark())
	}
}

// A partition never told its role behaves as a single node always did;
// the single node's image (leader, ISR {self}) keeps it so: every append
// is committed at once.
func TestSingleNodeImageKeepsCommitAtOnce(t *testing.T) {
	m := openReplicated(t, t.TempDir(), 1)
	defer m.Close()
	part := tp("single", 0)
	p, _ := m.CreatePartition(part, replica.TopicID{5})
	if _, err := p.AppendAsLeader(segmenttest.Batch(t, 3, 10, 1, 0)); err != nil || p.HighWatermark() != 3 {
		t.Fatalf("before any decision: %v, hw %d", err, p.HighWatermark())
	}
	if err := m.MakeLeader(part, replica.LeaderAndISR{Leader: 1, LeaderEpoch: 0, ISR: []int32{1}, Replicas: []int32{1}}); err != nil {
		t.Fatal(err)
	}
	if p.HighWatermark() != 3 || !p.IsLeader() {
		t.Fatalf("after the image: hw %d, leader %v", p.HighWatermark(), p.IsLeader())
	}
	if _, err := p.AppendRecordsToLeader(segmenttest.Batch(t, 2, 10, 2, 0), -1, 1); err != nil || p.HighWatermark() != 5 {
		t.Fatalf("acks=all with ISR {self}: %v, hw %d", err, p.HighWatermark())
	}
	if done, err := p.ProduceStatus(5); !done || err != nil {
		t.Fatalf("produce status %v %v", done, err)
	}
}
