package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/varve/varve/internal/localcluster"
)

// compound applies the compound faults (Kind.Compound) to a Cluster's
// nodes, on the partitions of one topic. Each finds its roles over the
// Kafka protocol when it strikes, notes every step in the History, and
// leaves no node down or link cut when it fails.
type compound struct {
	c          *Cluster
	roles      *Roles
	topic      string
	partitions int32
	h          *History
	// watch is how often an ISR or a reassignment is polled while the
	// fault waits for the moment to strike.
	watch time.Duration
	// complete bounds the wait for a reassignment to complete once the
	// killed node is back.
	complete time.Duration
}

// Compound is the Cluster's Compound for faults on topic's partitions.
func (c *Cluster) Compound(h *History, roles *Roles, topic string, partitions int) Compound {
	x := &compound{c: c, roles: roles, topic: topic, partitions: int32(partitions), h: h,
		watch: 10 * time.Millisecond, complete: time.Minute}
	return x.apply
}

func (x *compound) apply(ctx context.Context, f Fault) (func() error, error) {
	switch f.Kind {
	case KillAtISRChange:
		return x.killAtISRChange(ctx, f)
	case KillMidReassign:
		return x.killMidReassign(ctx, f)
	case DropTailThenKill:
		return x.dropTailThenKill(ctx, f)
	}
	return nil, fmt.Errorf("chaos: %v is not a compound fault", f.Kind)
}

func (x *compound) node(id int32) *localcluster.Node { return x.c.Local.Node(int(id)) }

// state is partition p as the node with id asks sees it.
func (x *compound) state(ctx context.Context, asking int32, p int32) (PartitionState, error) {
	i, err := x.roles.NodeIndex(asking)
	if err != nil {
		return PartitionState{}, err
	}
	ps, err := x.roles.Partitions(ctx, i, x.topic)
	if err != nil {
		return PartitionState{}, err
	}
	s, ok := ps[p]
	if !ok || s.Leader < 0 {
		return s, fmt.Errorf("chaos: partition %d of %s has no leader", p, x.topic)
	}
	return s, nil
}

// killAtISRChange: the leader's AlterPartition must be what shrinks the
// ISR, not the controller's fencing of a silent broker, so the follower
// is cut from the leader alone and keeps heartbeating to the active
// controller: the partition is one whose leader is not the active
// controller, and the follower the replica that is neither. The kill
// comes as soon as a node's Metadata (polled on every node every
// x.watch) shows the shrunk ISR: the controller has committed the
// change, and the leader may not have had its answer yet.
func (x *compound) killAtISRChange(ctx context.Context, f Fault) (func() error, error) {
	for attempt := 1; ; attempt++ {
		undo, moved, err := x.killAtISRChangeOnce(ctx, f)
		if !moved || attempt == 3 {
			return undo, err
		}
		// A node restarted by the fault before may only now have
		// registered again and been fenced (its old session outlived
		// the restart), moving the leadership: start over on the
		// cluster as it is now.
		x.h.Note("%v; trying again", err)
		time.Sleep(time.Second)
	}
}

// killAtISRChangeOnce is one attempt of killAtISRChange; moved reports
// that the partition's leadership moved while the fault waited for the
// ISR to shrink (the cut is healed and no node was killed then).
func (x *compound) killAtISRChangeOnce(ctx context.Context, f Fault) (undo func() error, moved bool, err error) {
	ctrl, err := x.roles.ActiveController(ctx)
	if err != nil {
		return nil, false, err
	}
	p, s, follower, err := x.partitionAwayFrom(ctx, ctrl, f.Partition)
	if err != nil {
		// After kills the survivors lead everything; preferred
		// elections spread leadership over the replicas again.
		x.h.Note("preferred-replica elections of %s: %v", x.topic, x.roles.ElectPreferred(ctx, x.topic, x.partitions))
		p, s, follower, err = x.partitionAwayFrom(ctx, ctrl, f.Partition)
	}
	if err != nil {
		return nil, false, err
	}
	victim := s.Leader
	if f.Target == ActiveController {
		victim = ctrl
	}
	heal, err := x.c.Net.Cut(int(follower)-1, int(s.Leader)-1, false)
	if err != nil {
		return nil, false, err
	}
	x.h.Note("cut node%d from node%d, leader of partition %d (epoch %d, isr %v; active controller node%d)",
		follower, s.Leader, p, s.Epoch, s.ISR, ctrl)
	start := time.Now()
	shrunk, err := x.awaitISRWithout(ctx, p, follower, s.Leader)
	if err != nil {
		return nil, errors.Is(err, errLeaderMoved), errors.Join(err, heal())
	}
	if err := x.node(victim).Kill(); err != nil {
		return nil, false, errors.Join(err, heal())
	}
	x.h.Note("kill node%d (%s) as the ISR of partition %d shrank to %v, %v after the cut",
		victim, f.Target, p, shrunk, time.Since(start).Round(time.Millisecond))
	return func() error {
		err := errors.Join(heal(), x.node(victim).Start())
		x.h.Note("healed the cut and started node%d", victim)
		return err
	}, false, nil
}

// errLeaderMoved: a partition's leadership moved while a fault waited
// for its ISR to change.
var errLeaderMoved = errors.New("chaos: the partition's leader moved")

// partitionAwayFrom finds, from partition from on, a partition with
// three replicas all in sync whose leader is not node avoid, and its
// replica that is neither; it looks for up to 5 s (an election may be
// under way).
func (x *compound) partitionAwayFrom(ctx context.Context, avoid, from int32) (int32, PartitionState, int32, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for {
		p, s, follower, err := x.findAwayFrom(ctx, avoid, from)
		if err == nil || ctx.Err() != nil {
			return p, s, follower, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (x *compound) findAwayFrom(ctx context.Context, avoid, from int32) (int32, PartitionState, int32, error) {
	for i := range x.partitions {
		p := (from + i) % x.partitions
		s, err := x.state(ctx, avoid, p)
		if err != nil || s.Leader == avoid || len(s.Replicas) < 3 || len(s.ISR) < len(s.Replicas) {
			continue
		}
		for _, r := range s.Replicas {
			if r != s.Leader && r != avoid {
				return p, s, r, nil
			}
		}
	}
	return 0, PartitionState{}, 0, fmt.Errorf("chaos: no partition of %s with a full ISR led by a node other than node%d", x.topic, avoid)
}

// awaitISRWithout polls every node's Metadata until one shows
// partition p's ISR without node out, and returns that ISR; it fails
// with errLeaderMoved if one shows another leader than leader first.
func (x *compound) awaitISRWithout(ctx context.Context, p, out, leader int32) ([]int32, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		for i := range x.c.Local.Nodes() {
			qctx, qcancel := context.WithTimeout(ctx, time.Second)
			ps, err := x.roles.Partitions(qctx, i, x.topic)
			qcancel()
			s, ok := ps[p]
			switch {
			case err != nil || !ok:
			case s.Leader != leader:
				return nil, fmt.Errorf("%w: partition %d is led by node%d, not node%d, before its ISR dropped node%d",
					errLeaderMoved, p, s.Leader, leader, out)
			case !slices.Contains(s.ISR, out):
				return s.ISR, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("chaos: the ISR of partition %d never dropped node%d: %w", p, out, ctx.Err())
		case <-time.After(x.watch):
		}
	}
}

// killMidReassign moves partition p (the fault's) from its replicas to
// the one that does not lead it and the node that holds none, with that
// node cut from the leader so that it cannot catch up: AddingReplicas
// stays non-empty until the cut heals. The kill strikes once
// ListPartitionReassignments shows the reassignment, the cut heals at
// once, and the undo starts the node again and waits for the
// reassignment to complete.
func (x *compound) killMidReassign(ctx context.Context, f Fault) (func() error, error) {
	ctrl, err := x.roles.ActiveController(ctx)
	if err != nil {
		return nil, err
	}
	p := f.Partition
	s, err := x.state(ctx, ctrl, p)
	if err != nil {
		return nil, err
	}
	spare, other := int32(-1), int32(-1)
	for _, n := range x.c.Local.Nodes() {
		id := int32(n.ID)
		switch {
		case !slices.Contains(s.Replicas, id) && spare < 0:
			spare = id
		case id != s.Leader && slices.Contains(s.Replicas, id) && other < 0:
			other = id
		}
	}
	if spare < 0 || other < 0 {
		return nil, fmt.Errorf("chaos: partition %d (replicas %v) has no node to move to: %v needs a replication factor below the node count", p, s.Replicas, f.Kind)
	}
	target := []int32{other, spare}
	heal, err := x.c.Net.Cut(int(spare)-1, int(s.Leader)-1, false)
	if err != nil {
		return nil, err
	}
	x.h.Note("cut node%d from node%d, leader of partition %d (replicas %v); reassign it to %v", spare, s.Leader, p, s.Replicas, target)
	adding, err := x.reassignStarted(ctx, int(ctrl)-1, p, target)
	if err != nil {
		return nil, errors.Join(err, heal())
	}
	victim := s.Leader
	if f.Target == ActiveController {
		victim = ctrl // as found before the cut: asking now might need the cut link
	}
	if err := x.node(victim).Kill(); err != nil {
		return nil, errors.Join(err, heal())
	}
	x.h.Note("kill node%d (%s) with node%v being added to partition %d", victim, f.Target, adding, p)
	if err := heal(); err != nil {
		return nil, errors.Join(err, x.node(victim).Start())
	}
	return func() error {
		if err := x.node(victim).Start(); err != nil {
			return err
		}
		x.h.Note("started node%d", victim)
		return x.awaitReassigned(ctx, p, target)
	}, nil
}

// reassignStarted asks node index ctrl (the active controller's) to
// start the reassignment of p to target, and waits for it to show the
// reassignment with replicas being added.
func (x *compound) reassignStarted(ctx context.Context, ctrl int, p int32, target []int32) ([]int32, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := x.roles.Reassign(ctx, ctrl, x.topic, p, target); err != nil {
		return nil, err
	}
	for {
		adding, _, ok, err := x.roles.Reassigning(ctx, ctrl, x.topic, p)
		if err == nil && ok && len(adding) > 0 {
			return adding, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("chaos: the reassignment of partition %d to %v never showed replicas being added (last: %v, %v): %w",
				p, target, adding, err, ctx.Err())
		case <-time.After(x.watch):
		}
	}
}

// awaitReassigned waits until no reassignment of p is listed and every
// node's Metadata shows its replicas as target, in any order.
func (x *compound) awaitReassigned(ctx context.Context, p int32, target []int32) error {
	ctx, cancel := context.WithTimeout(ctx, x.complete)
	defer cancel()
	start := time.Now()
	want := slices.Sorted(slices.Values(target))
	var last string
	for {
		ongoing, err := x.reassigning(ctx, p)
		done := err == nil && !ongoing
		for i := range x.c.Local.Nodes() {
			if !done {
				break
			}
			ps, err := x.roles.Partitions(ctx, i, x.topic)
			got := slices.Sorted(slices.Values(ps[p].Replicas))
			done = err == nil && slices.Equal(got, want)
			last = fmt.Sprintf("node index %d: replicas %v isr %v (%v)", i, ps[p].Replicas, ps[p].ISR, err)
		}
		if done {
			x.h.Note("partition %d reassigned to %v, %v after the restart", p, target, time.Since(start).Round(time.Millisecond))
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("chaos: the reassignment of partition %d to %v did not complete (ongoing %v; %s): %w",
				p, target, ongoing, last, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// reassigning asks the active controller's node whether p is being
// reassigned.
func (x *compound) reassigning(ctx context.Context, p int32) (bool, error) {
	ctrl, err := x.roles.ActiveController(ctx)
	if err != nil {
		return false, err
	}
	_, _, ongoing, err := x.roles.Reassigning(ctx, int(ctrl)-1, x.topic, p)
	return ongoing, err
}

// dropTailThenKill kills a follower of partition p (the fault's; which
// follower is drawn from the fault's node), drops its unflushed tail of
// every partition of the topic (DropUnflushed), starts it, and kills
// the partition's leader as soon as the follower serves again: the
// follower may still be in the ISR then, though it has lost records
// the ISR acknowledged.
func (x *compound) dropTailThenKill(ctx context.Context, f Fault) (func() error, error) {
	p := f.Partition
	s, err := x.state(ctx, 1, p)
	if err != nil {
		return nil, err
	}
	var followers []int32
	for _, r := range s.Replicas {
		if r != s.Leader {
			followers = append(followers, r)
		}
	}
	if len(followers) == 0 {
		return nil, fmt.Errorf("chaos: partition %d (replicas %v) has no follower", p, s.Replicas)
	}
	follower := followers[f.Node%len(followers)]
	fn := x.node(follower)
	if err := fn.Kill(); err != nil {
		return nil, err
	}
	dropped, err := DropUnflushed(fn.LogDir(), x.topic)
	x.h.Note("kill node%d, a follower of partition %d (leader node%d, epoch %d, isr %v); dropped its unflushed records %v",
		follower, p, s.Leader, s.Epoch, s.ISR, dropped)
	if err != nil {
		return nil, errors.Join(err, fn.Start())
	}
	if err := fn.Start(); err != nil {
		return nil, err
	}
	x.h.Note("started node%d", follower)
	if err := x.node(s.Leader).Kill(); err != nil {
		return nil, err
	}
	x.h.Note("kill node%d, leader of partition %d", s.Leader, p)
	return func() error {
		err := x.node(s.Leader).Start()
		x.h.Note("started node%d", s.Leader)
		return err
	}, nil
}
