package replica

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"pgregory.net/rapid"

	"github.com/varve/varve/record"
)

// TestReplicationProperties drives three replicas through random
// interleavings of appends (acks=all), follower fetches, ISR checks,
// crashes that lose a replica's unflushed tail, restarts and elections,
// with the controller's rules simulated: a crashed broker leaves the ISR
// at once (it is fenced), leaders are elected from the live ISR only
// (unclean election off), and AlterPartition proposals are accepted.
// Invariants, after every step:
//   - every acknowledged record is in the leader's log, at its offset;
//   - records below two replicas' high watermarks agree at every offset;
//   - a leader's high watermark never decreases within its leadership;
//   - no replica's log holds a batch of an epoch its cache does not know.
//
// Kafka: KIP-101, KIP-279, KIP-595; Partition.maybeIncrementLeaderHW.
func TestReplicationProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := newSimCluster()
		for step := range rapid.IntRange(20, 150).Draw(t, "steps") {
			c.now += int64(rapid.IntRange(0, 4000).Draw(t, "dt"))
			id := int32(rapid.IntRange(1, 3).Draw(t, "node"))
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0, 1, 2:
				c.append()
			case 3, 4, 5:
				c.fetch(id)
			case 6:
				c.tick()
			case 7:
				c.crash(id, rapid.Float64Range(0, 1).Draw(t, "lost"))
			case 8:
				c.restart(id)
			case 9:
				c.electNew()
			}
			if err := c.check(); err != nil {
				t.Fatalf("step %d: %v\n%s", step, err, c)
			}
		}
		if err := c.heal(); err != nil {
			t.Fatalf("after healing: %v\n%s", err, c)
		}
	})
}

// heal restarts every broker and lets the followers fetch until they are
// back in the ISR: then every replica must hold the leader's log exactly.
func (c *simCluster) heal() error {
	for id := int32(1); id <= 3; id++ {
		c.restart(id)
	}
	if c.leader < 0 {
		return nil // every ISR member crashed: offline, as unclean election is off
	}
	for range 20 {
		c.now += 100
		for id := int32(1); id <= 3; id++ {
			c.fetch(id)
		}
	}
	if err := c.check(); err != nil {
		return err
	}
	want := c.nodes[c.leader].log.String()
	for id, n := range c.nodes {
		if got := n.log.String(); got != want {
			return fmt.Errorf("node %d's log %s differs from leader %d's %s", id, got, c.leader, want)
		}
	}
	if len(c.isr) != 3 {
		return fmt.Errorf("ISR %v after every replica caught up", c.isr)
	}
	return nil
}

type simCluster struct {
	cfg      ReplicationConfig
	nodes    map[int32]*node
	down     map[int32]bool
	isr      []int32
	leader   int32
	epoch    int32
	pepoch   int32
	now      int64
	next     int
	acked    map[int64]string         // offset -> value of every acknowledged record
	pending  map[int64]pendingProduce // appended with acks=all, not yet acknowledged
	leaderHW int64
	trace    []string // what happened, for a failure's report
}

func (c *simCluster) note(format string, args ...any) {
	c.trace = append(c.trace, fmt.Sprintf("t=%d ", c.now)+fmt.Sprintf(format, args...))
}

// pendingProduce is an acks=all produce waiting on the leader of epoch.
type pendingProduce struct {
	value string
	epoch int32
}

func newSimCluster() *simCluster {
	c := &simCluster{cfg: ReplicationConfig{MinInsyncReplicas: 2, ReplicaLagTimeMaxMs: 5000},
		nodes: map[int32]*node{}, down: map[int32]bool{}, isr: []int32{1, 2, 3},
		acked: map[int64]string{}, pending: map[int64]pendingProduce{}}
	for id := int32(1); id <= 3; id++ {
		cfg := c.cfg
		cfg.LocalID = id
		l := &memLog{}
		c.nodes[id] = &node{id: id, log: l, r: NewReplication(cfg, l, nil, 0)}
	}
	c.leader = -1
	c.electNew()
	return c
}

func (c *simCluster) decision() LeaderAndISR {
	return LeaderAndISR{Leader: c.leader, LeaderEpoch: c.epoch, PartitionEpoch: c.pepoch,
		ISR: slices.Clone(c.isr), Replicas: []int32{1, 2, 3}}
}

// electNew elects the first live ISR member other than the current
// leader (or the current one if it is the only choice), bumping the epoch.
func (c *simCluster) electNew() {
	var pick int32 = -1
	for _, id := range c.isr {
		if !c.down[id] && (pick < 0 || id != c.leader) {
			pick = id
		}
	}
	if pick < 0 {
		c.leader = -1 // offline: no clean choice
		return
	}
	c.leader, c.epoch, c.pepoch = pick, c.epoch+1, c.pepoch+1
	c.leaderHW = -1
	c.note("elect %d epoch %d isr %v", pick, c.epoch, c.isr)
	c.publish()
}

func (c *simCluster) publish() {
	s := c.decision()
	for id, n := range c.nodes {
		if c.down[id] || c.leader < 0 {
			continue
		}
		if id == c.leader {
			n.r.BecomeLeader(s, c.now)
		} else {
			n.r.BecomeFollower(s)
		}
	}
}

func (c *simCluster) append() {
	if c.leader < 0 {
		return
	}
	n := c.nodes[c.leader]
	c.next++
	v := fmt.Sprintf("v%d", c.next)
	b := record.NewBatchBuilder(record.CompressionNone)
	b.Append(record.Record{Value: []byte(v)})
	batch, _ := b.Build()
	last, err := n.r.AppendAsLeader(batch, -1, c.now)
	if err == nil {
		c.pending[last] = pendingProduce{v, c.epoch}
	}
	c.note("append %s at %d on %d: %v", v, last, c.leader, err)
	c.settle()
}

// settle acknowledges the pending produces whose offsets the leader's
// high watermark passed with enough replicas, as a DelayedProduce would.
func (c *simCluster) settle() {
	if c.leader < 0 {
		return
	}
	r := c.nodes[c.leader].r
	for off, p := range c.pending {
		v := p.value
		if p.epoch != c.epoch { // its leader lost the leadership: NOT_LEADER_OR_FOLLOWER
			delete(c.pending, off)
			continue
		}
		if done, err := r.ProduceStatus(off + 1); done {
			if err == nil {
				c.acked[off] = v
			}
			c.note("produce %d:%s done: %v (hw %d)", off, v, err, r.HighWatermark())
			delete(c.pending, off)
		}
	}
}

func (c *simCluster) fetch(id int32) {
	f := c.nodes[id]
	if c.down[id] || c.leader < 0 || id == c.leader {
		return
	}
	req, ok := f.r.NextFetch(c.now)
	if !ok {
		return
	}
	l := c.nodes[c.leader]
	d := l.r.Fetch(req)
	resp := FetchResponse{Err: d.Err, HighWatermark: d.HighWatermark, LogStartOffset: d.LogStartOffset, Diverging: d.Diverging}
	if d.Err == nil && d.Diverging == nil {
		resp.Records = l.log.read(req.FetchOffset, d.ReadUpTo)
	}
	f.r.HandleFetchResponse(resp)
	c.note("fetch %d from %d: offset %d epoch %d -> diverging %v err %v; %s", id, c.leader, req.FetchOffset, req.LastFetchedEpoch, d.Diverging, d.Err, f.log)
	c.alter()
	c.settle()
}

func (c *simCluster) tick() {
	if c.leader >= 0 {
		c.nodes[c.leader].r.Tick(c.now)
		c.alter()
		c.settle()
	}
}

// alter accepts the leader's AlterPartition, as the controller does for
// a valid one: the ISR may only add live replicas.
func (c *simCluster) alter() {
	l := c.nodes[c.leader]
	a, ok := l.r.TakeAlterPartition()
	if !ok {
		return
	}
	for _, id := range a.ISR {
		if c.down[id] {
			l.r.HandleAlterPartitionResponse(LeaderAndISR{}, kerr.IneligibleReplica, c.now)
			return
		}
	}
	c.isr, c.pepoch = slices.Clone(a.ISR), c.pepoch+1
	c.note("isr %v", c.isr)
	l.r.HandleAlterPartitionResponse(c.decision(), nil, c.now)
}

// crash stops a broker, losing a fraction of its log past its high
// watermark (what was not yet flushed), and fences it: it leaves the ISR,
// and a leader that crashed is replaced.
func (c *simCluster) crash(id int32, lost float64) {
	if c.down[id] {
		return
	}
	n := c.nodes[id]
	hw, end := n.r.HighWatermark(), n.log.EndOffset()
	n.log.TruncateTo(end - int64(float64(end-hw)*lost))
	c.down[id] = true
	c.note("crash %d (hw %d, log %s)", id, hw, n.log)
	c.isr = slices.DeleteFunc(c.isr, func(x int32) bool { return x == id })
	c.pepoch++
	if id == c.leader || c.leader < 0 {
		c.electNew()
	} else {
		c.publish()
	}
	c.settle()
}

func (c *simCluster) restart(id int32) {
	if !c.down[id] {
		return
	}
	n := c.nodes[id]
	epochs := &EpochCache{entries: n.r.EpochCache().Entries()}
	n.r = NewReplication(n.r.cfg, n.log, epochs, n.r.HighWatermark())
	delete(c.down, id)
	c.note("restart %d", id)
	if c.leader < 0 {
		c.electNew()
		return
	}
	c.publish()
}

func (c *simCluster) check() error {
	if c.leader >= 0 {
		l := c.nodes[c.leader]
		vals := l.log.values(l.log.EndOffset())
		for off, v := range c.acked {
			if int(off) >= len(vals) || vals[off] != fmt.Sprintf("%d:%s", off, v) {
				return fmt.Errorf("acknowledged %d:%s is not in leader %d's log %v", off, v, c.leader, vals)
			}
		}
		if hw := l.r.HighWatermark(); hw < c.leaderHW {
			return fmt.Errorf("leader %d's high watermark went back from %d to %d", c.leader, c.leaderHW, hw)
		}
		c.leaderHW = l.r.HighWatermark()
	}
	seen := map[string]string{}
	for id, n := range c.nodes {
		for _, v := range n.log.values(n.r.HighWatermark()) {
			off := v[:slices.Index([]byte(v), ':')]
			if prev, ok := seen[off]; ok && prev != v {
				return fmt.Errorf("committed offset %s differs: %s and %s (node %d)", off, prev, v, id)
			}
			seen[off] = v
		}
		latest := n.r.EpochCache().Latest().Epoch
		for _, b := range n.log.batches {
			if e := header(b).PartitionLeaderEpoch; e > latest {
				return fmt.Errorf("node %d holds a batch of epoch %d, its cache ends at %d", id, e, latest)
			}
		}
	}
	return nil
}

func (c *simCluster) String() string {
	h := &harness{nodes: c.nodes}
	s := strings.Join(c.trace, "\n") + "\n"
	s += fmt.Sprintf("leader=%d epoch=%d isr=%v down=%v acked=%v\n", c.leader, c.epoch, c.isr, c.down, c.acked)
	for _, id := range h.ids() {
		s += h.describe(c.nodes[id])
	}
	return s
}
