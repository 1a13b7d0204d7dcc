package replica_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/record"
	"github.com/varve/varve/replica"
	"github.com/varve/varve/segment"
)

// cluster3 is three replica Managers in one process: a leader endpoint
// that calls the leader's Manager directly (ServeReplicaFetch), a
// controller that answers AlterPartition as Kafka's does (leader and
// partition epochs must match), links that a test cuts, and one clock.
type cluster3 struct {
	t     *testing.T
	ms    map[int32]*replica.Manager
	down  sync.Map // int32 -> bool: the node is cut off
	nowMs atomic.Int64
	tp    segment.TopicPartition

	mu    sync.Mutex
	state replica.LeaderAndISR // the controller's
	alter int                  // AlterPartitions applied
}

const lagMs = 30000

func newCluster3(t *testing.T) *cluster3 { return newCluster3With(t, 10*time.Millisecond) }

// newCluster3With is newCluster3 with replica.fetch.backoff.ms backoff.
func newCluster3With(t *testing.T, backoff time.Duration) *cluster3 {
	c := &cluster3{t: t, ms: map[int32]*replica.Manager{}, tp: tp("repl", 0)}
	c.nowMs.Store(1_000_000)
	for id := int32(1); id <= 3; id++ {
		m, err := replica.OpenReplicated(logdir.Config{LogDirs: []string{t.TempDir()},
			LogConfig: func(string) segment.Config { return segment.DefaultConfig() }},
			replica.ManagerConfig{NodeID: id, ReplicaLagTimeMaxMs: lagMs, NowMs: c.nowMs.Load,
				MinInsyncReplicas: func(string) int { return 2 }, ISRCheckInterval: time.Hour,
				Fetch: replica.FetcherConfig{MaxWait: 50 * time.Millisecond, Backoff: backoff}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		if _, err := m.CreatePartition(c.tp, replica.TopicID{9}); err != nil {
			t.Fatal(err)
		}
		c.ms[id] = m
	}
	return c
}

func (c *cluster3) isDown(id int32) bool { v, _ := c.down.Load(id); return v == true }

// Fetch implements replica.LeaderEndpoint.
func (c *cluster3) Fetch(ctx context.Context, leader int32, req replica.ReplicaFetch) (replica.ReplicaFetchResponse, error) {
	if c.isDown(leader) || c.isDown(req.ReplicaID) {
		time.Sleep(5 * time.Millisecond)
		return replica.ReplicaFetchResponse{}, errors.New("link cut")
	}
	return replica.ReplicaFetchResponse{Partitions: c.ms[leader].ServeReplicaFetch(ctx, req)}, nil
}

// AlterPartition implements replica.AlterPartitionSender as the
// controller: stale epochs are refused, else the ISR is installed with
// the next partition epoch.
func (c *cluster3) AlterPartition(_ context.Context, items []replica.AlterPartitionItem) ([]replica.AlterPartitionResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []replica.AlterPartitionResult
	for _, it := range items {
		if c.isDown(it.Leader) {
			return nil, errors.New("controller unreachable")
		}
		r := replica.AlterPartitionResult{TP: it.TP}
		switch {
		case it.LeaderEpoch != c.state.LeaderEpoch:
			r.Err = kerr.FencedLeaderEpoch
		case it.PartitionEpoch != c.state.PartitionEpoch:
			r.Err = kerr.InvalidUpdateVersion
		default:
			c.state.ISR, c.state.PartitionEpoch = slices.Clone(it.ISR), c.state.PartitionEpoch+1
			c.alter++
			r.New = c.state
		}
		out = append(out, r)
	}
	return out, nil
}

// elect makes leader the leader with the next leader epoch and the
// given ISR, and tells every live replica.
func (c *cluster3) elect(leader int32, isr ...int32) {
	c.mu.Lock()
	c.state = replica.LeaderAndISR{Leader: leader, LeaderEpoch: c.state.LeaderEpoch + 1, PartitionEpoch: c.state.PartitionEpoch + 1,
		ISR: isr, Replicas: []int32{1, 2, 3}}
	s := c.state
	c.mu.Unlock()
	for id, m := range c.ms {
		if c.isDown(id) {
			continue
		}
		c.tell(id, m, s)
	}
}

func (c *cluster3) tell(id int32, m *replica.Manager, s replica.LeaderAndISR) {
	var err error
	if id == s.Leader {
		err = m.MakeLeader(c.tp, s)
	} else {
		err = m.MakeFollower(c.tp, s)
	}
	if err != nil {
		c.t.Fatalf("node %d: %v", id, err)
	}
}

func (c *cluster3) part(id int32) *replica.Partition {
	p, _ := c.ms[id].Partition(c.tp)
	return p
}

// produce appends values as one batch on leader with acks=all and waits
// for the DelayedProduce's answer.
func (c *cluster3) produce(leader int32, acks int16, values ...string) error {
	_, err := c.produceAs(leader, acks, -1, 0, values...)
	return err
}

// produceAs is produce by an idempotent producer (pid >= 0) whose batch
// starts at sequence seq.
func (c *cluster3) produceAs(leader int32, acks int16, pid int64, seq int32, values ...string) (segment.AppendInfo, error) {
	b := record.NewBatchBuilder(record.CompressionNone)
	if pid >= 0 {
		b.SetProducer(pid, 0, seq)
	}
	for _, v := range values {
		b.Append(record.Record{Value: []byte(v)})
	}
	batch, err := b.Build()
	if err != nil {
		return segment.AppendInfo{}, err
	}
	p := c.part(leader)
	info, err := p.AppendRecordsToLeader(batch, acks, 2)
	if err != nil || acks != -1 {
		return info, err
	}
	pur := replica.NewPurgatory(replica.PurgatoryConfig{})
	defer pur.Close()
	done := make(chan error, 1)
	d := replica.NewDelayedProduce([]replica.ProducePartition{{Partition: p, RequiredOffset: info.LastOffset + 1}}, nil,
		func(parts []replica.ProducePartition) { done <- parts[0].Err })
	pur.Watch(d, 10*time.Second, d.Keys()...)
	return info, <-done
}

// values lists the record values of node id's log, in offset order.
func (c *cluster3) values(id int32) []string {
	p := c.part(id)
	var out []string
	for off := p.StartOffset(); off < p.EndOffset(); {
		buf, err := p.ReadBytes(off, 1<<20)
		if err != nil {
			c.t.Fatal(err)
		}
		for rec, err := range record.Records(buf) {
			if err != nil {
				c.t.Fatal(err)
			}
			out = append(out, string(rec.Value))
			off = rec.Offset + 1
		}
	}
	return out
}

func (c *cluster3) waitFor(what string, cond func() bool) {
	c.t.Helper()
	waitFor(c.t, what, cond)
}

// Kafka: ISR replication (Partition, ReplicaManager, the fetcher
// threads). acks=all waits for every ISR member; a stopped follower
// leaves the ISR after replica.lag.time.max.ms (AlterPartition, KIP-497)
// and acks=all with min.insync.replicas=2 goes on; after the leader's
// death a follower leads with the next epoch, the old leader comes back
// as a follower, truncates its divergent tail (KIP-595's diverging
// epoch) and converges: every acknowledged record is on all three,
// exactly once.
func TestThreeReplicasAcksAllFailover(t *testing.T) {
	c := newCluster3(t)
	c.elect(1, 1, 2, 3)
	for _, m := range c.ms {
		m.Start(c, c)
	}
	var acked []string
	mustProduce := func(leader int32, vs ...string) {
		t.Helper()
		if err := c.produce(leader, -1, vs...); err != nil {
			t.Fatalf("acks=all produce of %v on %d: %v", vs, leader, err)
		}
		acked = append(acked, vs...)
	}
	mustProduce(1, "a0", "a1")

	// The high watermark waits for every ISR member.
	c.down.Store(int32(3), true)
	b := record.NewBatchBuilder(record.CompressionNone)
	b.Append(record.Record{Value: []byte("b0")})
	batch, _ := b.Build()
	info, err := c.part(1).AppendRecordsToLeader(batch, -1, 2)
	if err != nil {
		t.Fatal(err)
	}
	c.waitFor("follower 2 to fetch b0", func() bool { return c.part(2).EndOffset() == info.LastOffset+1 })
	time.Sleep(100 * time.Millisecond) // more fetch rounds of follower 2
	if hw := c.part(1).HighWatermark(); hw > info.LastOffset {
		t.Fatalf("high watermark %d passed b0 (offset %d) while follower 3 lacks it", hw, info.LastOffset)
	}

	// Follower 3 out of sync past replica.lag.time.max.ms: the ISR shrinks.
	c.nowMs.Add(lagMs + 1)
	c.ms[1].CheckISR()
	c.waitFor("the ISR to shrink to {1,2}", func() bool { _, s := c.part(1).State(); return slices.Equal(s.ISR, []int32{1, 2}) })
	c.waitFor("b0 to commit without follower 3", func() bool { return c.part(1).HighWatermark() > info.LastOffset })
	acked = append(acked, "b0")
	mustProduce(1, "c0") // min.insync.replicas=2 holds with {1,2}

	// Follower 3 back: it catches up and rejoins the ISR.
	c.down.Store(int32(3), false)
	c.waitFor("the ISR to grow back to {1,2,3}", func() bool { _, s := c.part(1).State(); return len(s.ISR) == 3 })
	mustProduce(1, "d0", "d1")
	idem, err := c.produceAs(1, -1, 7000, 0, "p0", "p1")
	if err != nil {
		t.Fatal(err)
	}
	acked = append(acked, "p0", "p1")

	// The leader dies with an unreplicated tail (acks=1, never acknowledged
	// under acks=all): the controller elects 2 with the next epoch.
	c.down.Store(int32(1), true)
	if err := c.produce(1, 1, "lost0", "lost1"); err != nil {
		t.Fatal(err)
	}
	c.elect(2, 2, 3)
	// Kafka: a follower rebuilds producer state from what it replicates,
	// so the producer's retry after failover is a duplicate for the new
	// leader (same offsets, nothing written).
	retry, err := c.produceAs(2, -1, 7000, 0, "p0", "p1")
	if err != nil || !retry.Duplicate || retry.FirstOffset != idem.FirstOffset {
		t.Fatalf("retry on the new leader: %+v, %v; first append at %d", retry, err, idem.FirstOffset)
	}
	mustProduce(2, "e0")
	mustProduce(2, "e1", "e2")

	// The old leader comes back as a follower of the new epoch.
	c.down.Store(int32(1), false)
	c.mu.Lock()
	s := c.state
	c.mu.Unlock()
	c.tell(1, c.ms[1], s)
	c.waitFor("node 1 to converge", func() bool { return c.part(1).EndOffset() == c.part(2).EndOffset() })
	mustProduce(2, "f0")
	c.waitFor("every replica to have f0", func() bool {
		return c.part(1).EndOffset() == c.part(2).EndOffset() && c.part(3).EndOffset() == c.part(2).EndOffset()
	})
	want := c.values(2)
	for id := int32(1); id <= 3; id++ {
		got := c.values(id)
		if !slices.Equal(got, want) {
			t.Fatalf("node %d has %v, the leader %v", id, got, want)
		}
		for _, v := range acked {
			if n := count(got, v); n != 1 {
				t.Fatalf("node %d has acknowledged %s %d times: %v", id, v, n, got)
			}
		}
		// The unacknowledged tail is gone everywhere, unless a fetch of
		// follower 2 in flight when the leader "died" took it first: then
		// the new leader has it and so does everyone (checked above).
		if n := count(got, "lost0"); n > 1 || (n == 1 && !slices.Contains(want, "lost0")) {
			t.Fatalf("node %d kept the dead leader's divergent tail: %v", id, got)
		}
	}
	if e := c.part(1).EpochEntries(); len(e) == 0 || e[len(e)-1].Epoch != s.LeaderEpoch {
		t.Fatalf("node 1's epoch cache %v does not end in epoch %d", e, s.LeaderEpoch)
	}
	c.mu.Lock()
	t.Log(fmt.Sprintf("final log %v, %d AlterPartitions", want, c.alter))
	c.mu.Unlock()
}

func count(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

// A follower told of a new leader before the leader itself (each node
// applies the metadata on its own) is answered UNKNOWN_LEADER_EPOCH or
// NOT_LEADER_OR_FOLLOWER; it asks again within milliseconds rather than
// after replica.fetch.backoff.ms, which would hold the new leader's first
// acks=all produces that long after every failover.
func TestFollowerAheadOfItsLeaderRetriesSoon(t *testing.T) {
	c := newCluster3With(t, time.Minute)
	for _, m := range c.ms {
		m.Start(c, c)
	}
	// The followers hear of epoch 1 first; the leader a moment later.
	c.mu.Lock()
	c.state = replica.LeaderAndISR{Leader: 1, LeaderEpoch: 1, PartitionEpoch: 1, ISR: []int32{1, 2, 3}, Replicas: []int32{1, 2, 3}}
	s := c.state
	c.mu.Unlock()
	c.tell(2, c.ms[2], s)
	c.tell(3, c.ms[3], s)
	time.Sleep(100 * time.Millisecond) // their first fetches are refused
	c.tell(1, c.ms[1], s)
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- c.produce(1, -1, "x") }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("acks=all never completed")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("acks=all took %v: the followers waited out replica.fetch.backoff.ms (1 minute here)", d)
	}
}
