package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	stdnet "net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/group"
	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
)

// The group coordinator's wiring: one group.Coordinator per partition
// of __consumer_offsets, each behind its own mutex (groups of different
// partitions never wait for each other), one timer goroutine that calls
// Tick when a deadline is due, and a loader goroutine that replays the
// partitions at start. The coordinators write through the partitions'
// own append path (AppendAsLeader), so the flush policy and the log
// cleaner apply to __consumer_offsets as to any topic.

// offsetsLoadBufferBytes is how much of a partition a load reads at a
// time (Kafka's offsets.load.buffer.size default).
const offsetsLoadBufferBytes = 5 << 20

type groupCoordinator struct {
	b      *Broker
	shards []*groupShard

	create sync.Mutex // serialises creating __consumer_offsets

	timer *coordinatorTimer // coordinator_timer.go
	stop  chan struct{}
	done  sync.WaitGroup
}

// groupShard is one partition's coordinator and the mutex serialising
// every call into it.
type groupShard struct {
	mu sync.Mutex
	c  *group.Coordinator
}

func (b *Broker) newGroupCoordinator() *groupCoordinator {
	n := b.cfg.OffsetsTopicNumPartitions
	if t, ok := b.meta.image().Topic(group.OffsetsTopic); ok {
		n = len(t.Partitions) // the topic as it exists decides where groups live
	}
	gc := &groupCoordinator{b: b, timer: newCoordinatorTimer(), stop: make(chan struct{})}
	if b.ctrl != nil {
		b.OnLeadershipChange(gc.onLeadership)
	}
	cfg := b.groupConfig()
	for p := 0; p < n; p++ {
		gc.shards = append(gc.shards, &groupShard{c: group.New(int32(p), cfg, offsetsLog{b: b, partition: int32(p)})})
	}
	return gc
}

// offsetsLog appends a coordinator's records to its partition.
type offsetsLog struct {
	b         *Broker
	partition int32
}

func (l offsetsLog) Append(batch []byte) error {
	part, err := l.b.partition(group.OffsetsTopic, l.partition)
	if err == nil {
		_, err = part.AppendAsLeader(batch)
	}
	if err != nil {
		return fmt.Errorf("append to %s-%d: %w: %w", group.OffsetsTopic, l.partition, kerr.ErrorForCode(errorCode(err)), err)
	}
	return nil
}

// start loads the partitions of __consumer_offsets if it exists and
// starts the timer goroutine.
func (gc *groupCoordinator) start() {
	gc.done.Add(1)
	go gc.timerLoop()
	if gc.b.ctrl != nil {
		return // onLeadership loads the partitions this node leads
	}
	if _, ok := gc.b.meta.image().Topic(group.OffsetsTopic); !ok {
		return // created on the first FindCoordinator for a group, as Kafka does
	}
	for _, s := range gc.shards {
		s.do(func(c *group.Coordinator) { c.BeginLoad() })
	}
	gc.done.Add(1)
	go func() {
		defer gc.done.Done()
		for _, s := range gc.shards {
			if err := gc.load(s); err != nil && !gc.stopping() {
				gc.b.log.Error("loading __consumer_offsets failed; its groups are unavailable", "err", err)
			}
		}
	}()
}

// load replays one partition into its coordinator, chunk by chunk; the
// coordinator answers COORDINATOR_LOAD_IN_PROGRESS meanwhile.
func (gc *groupCoordinator) load(s *groupShard) error {
	var p int32
	s.do(func(c *group.Coordinator) { p = c.Partition() })
	part, err := gc.b.partition(group.OffsetsTopic, p)
	if err != nil {
		return fmt.Errorf("%s-%d: %w", group.OffsetsTopic, p, err)
	}
	start := time.Now()
	// To the log end, not the high watermark: a new leader's own log is
	// the partition's from now on, and its high watermark may lag until
	// its followers fetch again.
	end := part.EndOffset()
	for off := part.StartOffset(); off < end; {
		if gc.stopping() {
			return nil
		}
		buf, err := part.ReadBytes(off, offsetsLoadBufferBytes)
		if err != nil {
			return fmt.Errorf("read %s-%d at %d: %w", group.OffsetsTopic, p, off, err)
		}
		next := off
		s.do(func(c *group.Coordinator) { next, err = c.Load(buf) })
		if err != nil {
			return err
		}
		if next <= off || len(buf) == 0 {
			break
		}
		off = next
	}
	var rep group.LoadReport
	s.do(func(c *group.Coordinator) { rep = c.FinishLoad(time.Now()) })
	gc.kick(s)
	level := slog.LevelDebug
	if rep.Records > 0 {
		level = slog.LevelInfo
	}
	gc.b.log.Log(context.Background(), level, "loaded group coordinator partition", "partition", p, "groups", rep.Groups,
		"offsets", rep.Offsets, "records", rep.Records, "skipped", rep.Skipped, "took", time.Since(start))
	return nil
}

// ensureTopic creates __consumer_offsets (compacted, Kafka's internal
// topic configuration) if it does not exist yet, and makes this node the
// coordinator of its partitions.
func (gc *groupCoordinator) ensureTopic() error {
	gc.create.Lock()
	defer gc.create.Unlock()
	if _, ok := gc.b.meta.image().Topic(group.OffsetsTopic); ok {
		return nil
	}
	configs := map[string]string{
		"cleanup.policy":   "compact",
		"segment.bytes":    strconv.Itoa(gc.b.cfg.OffsetsTopicSegmentBytes),
		"compression.type": "producer",
	}
	// offsets.topic.replication.factor is capped at the live brokers
	// (one, on a single node), as Kafka's docs advise for small clusters.
	rf := int16(1)
	if gc.b.ctrl != nil {
		rf = int16(min(gc.b.cfg.OffsetsTopicReplicationFactor, max(liveBrokers(gc.b.meta.image()), 1)))
	}
	_, err := gc.b.createTopic(topicSpec{name: group.OffsetsTopic, partitions: int32(len(gc.shards)), rf: rf, configs: configs})
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return err
	}
	if gc.b.ctrl != nil {
		return nil // onLeadership loads the partitions this node leads
	}
	now := time.Now()
	for _, s := range gc.shards {
		s.do(func(c *group.Coordinator) {
			c.BeginLoad()
			c.FinishLoad(now)
		})
		gc.kick(s)
	}
	return nil
}

// shutdown answers parked requests (NOT_COORDINATOR), refuses new ones
// and stops the goroutines. It runs before the network server shuts
// down, which waits for in-flight requests such as parked JoinGroups.
func (gc *groupCoordinator) shutdown() {
	if gc.stopping() {
		return
	}
	close(gc.stop)
	for _, s := range gc.shards {
		s.do(func(c *group.Coordinator) { c.Stop() })
	}
	gc.done.Wait()
}

func (gc *groupCoordinator) stopping() bool {
	select {
	case <-gc.stop:
		return true
	default:
		return false
	}
}

// shard is the coordinator of groupID's partition.
func (gc *groupCoordinator) shard(groupID string) *groupShard {
	return gc.shards[group.PartitionFor(groupID, len(gc.shards))]
}

// do runs fn on groupID's coordinator and wakes the timer goroutine if
// fn brought a deadline forward.
func (gc *groupCoordinator) do(groupID string, fn func(c *group.Coordinator)) {
	s := gc.shard(groupID)
	s.do(fn)
	gc.kick(s)
}

func (s *groupShard) do(fn func(c *group.Coordinator)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s.c)
}

// kick wakes the timer goroutine when s's next deadline is earlier than
// what it sleeps until.
func (gc *groupCoordinator) kick(s *groupShard) {
	var next time.Time
	var ok bool
	s.do(func(c *group.Coordinator) { next, ok = c.NextDeadline() })
	gc.timer.kick(next, ok)
}

// timerLoop ticks the partitions as their deadlines come.
func (gc *groupCoordinator) timerLoop() {
	defer gc.done.Done()
	gc.timer.loop(gc.stop, gc.tickDue)
}

// tickDue ticks every partition with a deadline at or before now and
// returns the earliest deadline left.
func (gc *groupCoordinator) tickDue(now time.Time) time.Time {
	var earliest time.Time
	for _, s := range gc.shards {
		s.do(func(c *group.Coordinator) {
			if next, ok := c.NextDeadline(); ok && !next.After(now) {
				c.Tick(now)
			}
			if next, ok := c.NextDeadline(); ok && (earliest.IsZero() || next.Before(earliest)) {
				earliest = next
			}
		})
	}
	return earliest
}

// clientHost is how Kafka shows a member's host: InetAddress.toString,
// "/" and the address.
func clientHost(r *vnet.Request) string {
	if a, ok := r.Conn.Remote.(*stdnet.TCPAddr); ok {
		return "/" + a.IP.String()
	}
	if r.Conn.Remote != nil {
		return "/" + r.Conn.Remote.String()
	}
	return ""
}

// onLeadership makes this node the coordinator of exactly the
// __consumer_offsets partitions it leads, as the replica manager applies
// the metadata image: Kafka's GroupCoordinator.onElection (load the
// partition, answering COORDINATOR_LOAD_IN_PROGRESS meanwhile) and
// onResignation (unload it: parked joins get NOT_COORDINATOR, clients
// find the new coordinator). It runs on the goroutine applying images,
// after the partition became leader or follower.
func (gc *groupCoordinator) onLeadership(topic string, partition int32, isLeader bool, epoch int32) {
	if topic != group.OffsetsTopic || int(partition) >= len(gc.shards) || gc.stopping() {
		return
	}
	s := gc.shards[partition]
	if !isLeader {
		s.do(func(c *group.Coordinator) {
			c.Stop()
			s.c = group.New(partition, gc.b.groupConfig(), offsetsLog{b: gc.b, partition: partition})
		})
		gc.b.log.Info("no longer the group coordinator of a __consumer_offsets partition", "partition", partition)
		return
	}
	s.do(func(c *group.Coordinator) { c.BeginLoad() })
	gc.done.Add(1)
	go func() {
		defer gc.done.Done()
		if err := gc.load(s); err != nil && !gc.stopping() {
			gc.b.log.Error("loading a __consumer_offsets partition failed; its groups are unavailable", "partition", partition, "epoch", epoch, "err", err)
		}
	}()
}

// liveBrokers counts the registered, unfenced brokers.
func liveBrokers(img *metadata.Image) int {
	n := 0
	for _, br := range img.Brokers() {
		if !br.Fenced {
			n++
		}
	}
	return n
}
