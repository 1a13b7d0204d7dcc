package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Kind is a kind of fault.
type Kind uint8

const (
	// Kill sends SIGKILL, waits Hold, and starts the node again.
	Kill Kind = iota
	// Pause sends SIGSTOP, waits Hold, and sends SIGCONT.
	Pause
	// Restart stops the node cleanly (SIGTERM), then starts it.
	Restart
	// Cut cuts the link from Node to Peer (both ways unless OneWay) for
	// Hold, through the Runner's NetCut.
	Cut
	// Isolate cuts Node from every other node, both ways, for Hold,
	// through the Runner's Isolate (a minority of one split from the
	// majority).
	Isolate
	// KillAtISRChange cuts a follower of Partition from its leader until
	// the leader's AlterPartition shrinking the ISR has taken effect,
	// then SIGKILLs the fault's target at once (the partition's leader,
	// or the active controller); after Hold it starts the target and
	// heals the cut. A compound fault: the Runner's Compound applies it.
	KillAtISRChange
	// KillMidReassign moves Partition's replicas off its leader with a
	// reassignment the new replica cannot finish (it is cut from the
	// leader), SIGKILLs the fault's target while AddingReplicas is not
	// empty, heals the cut, and after Hold starts the target and waits
	// for the reassignment to complete. It needs a node that holds no
	// replica of the partition (replication factor below the node
	// count). A compound fault.
	KillMidReassign
	// DropTailThenKill SIGKILLs a follower of Partition, drops from its
	// log directory every record of the run's topic past its recovery
	// point (what a power failure takes from a log that was never
	// fsynced), starts it, and SIGKILLs the partition's leader as soon
	// as the follower serves; after Hold it starts the leader. A
	// compound fault.
	DropTailThenKill
)

var kindNames = [...]string{"kill", "pause", "restart", "cut", "isolate",
	"kill-at-isr-change", "kill-mid-reassign", "drop-tail-then-kill"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Compound reports whether k is a fault of several steps on several
// nodes, which the Runner hands to its Compound.
func (k Kind) Compound() bool { return k >= KillAtISRChange && k <= DropTailThenKill }

// Target is how a fault picks its node: the one drawn, or the one that
// holds a role when the fault strikes (found by the Runner's Locate).
type Target uint8

const (
	// Drawn is Fault.Node as the schedule drew it.
	Drawn Target = iota
	// PartitionLeader is the node leading Fault.Partition of the run's
	// topic when the fault strikes.
	PartitionLeader
	// ActiveController is the node of the controller quorum's leader
	// (the active controller) when the fault strikes.
	ActiveController
)

func (t Target) String() string {
	return [...]string{"drawn", "partition leader", "active controller"}[t]
}

// Fault is one fault of a Schedule.
type Fault struct {
	At        time.Duration // from the start of the run (the History's clock)
	Kind      Kind
	Node      int           // index into Runner.Nodes (Target Drawn)
	Target    Target        // how the node is chosen when the fault strikes
	Partition int32         // Target PartitionLeader: whose leader
	Peer      int           // Cut only: the other end
	OneWay    bool          // Cut only: drop Node->Peer traffic alone
	Hold      time.Duration // how long the node stays down, stopped or cut
}

func (f Fault) String() string {
	s := fmt.Sprintf("%v %s node %d", f.At.Round(time.Millisecond), f.Kind, f.Node)
	switch f.Target {
	case PartitionLeader:
		s = fmt.Sprintf("%v %s the leader of partition %d", f.At.Round(time.Millisecond), f.Kind, f.Partition)
	case ActiveController:
		s = fmt.Sprintf("%v %s the active controller", f.At.Round(time.Millisecond), f.Kind)
	}
	if f.Kind == Cut {
		s += fmt.Sprintf(" from %d (one way: %v)", f.Peer, f.OneWay)
	}
	return s + fmt.Sprintf(" for %v", f.Hold.Round(time.Millisecond))
}

// Schedule is the faults of one run, in time order, and the seed that
// drew them: NewSchedule with the same seed and options draws it again.
type Schedule struct {
	Seed   uint64
	Faults []Fault
}

func (s Schedule) String() string {
	lines := []string{fmt.Sprintf("seed %d, %d faults", s.Seed, len(s.Faults))}
	for _, f := range s.Faults {
		lines = append(lines, "  "+f.String())
	}
	return strings.Join(lines, "\n")
}

// ScheduleOptions bound what NewSchedule draws.
type ScheduleOptions struct {
	Count     int           // how many faults
	Kinds     []Kind        // drawn uniformly; Cut needs Nodes >= 2
	Nodes     int           // how many nodes a fault may hit
	First     time.Duration // time of the earliest fault
	Gap       [2]time.Duration
	Hold      [2]time.Duration
	OneWayCut bool // whether a Cut may be one way
	// Targets are drawn uniformly for each fault; none: every fault
	// strikes its drawn node.
	Targets []Target
	// Partitions bounds Fault.Partition (Target PartitionLeader).
	Partitions int32
	// KindHold, when it has a kind, replaces Hold for that kind (a pause
	// must outlast the session timeout to matter).
	KindHold map[Kind][2]time.Duration
}

// NewSchedule draws a schedule from seed: Count faults, one at a time,
// each Gap after the previous one has healed, each held for Hold (both
// drawn uniformly from their ranges).
func NewSchedule(seed uint64, o ScheduleOptions) Schedule {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s := Schedule{Seed: seed}
	at := o.First
	for range o.Count {
		f := Fault{At: at, Kind: o.Kinds[rng.IntN(len(o.Kinds))], Node: rng.IntN(max(o.Nodes, 1))}
		hold := o.Hold
		if h, ok := o.KindHold[f.Kind]; ok {
			hold = h
		}
		f.Hold = between(rng, hold)
		if f.Kind == Cut {
			f.Peer = (f.Node + 1 + rng.IntN(max(o.Nodes-1, 1))) % max(o.Nodes, 1)
			f.OneWay = o.OneWayCut && rng.IntN(2) == 0
		}
		if len(o.Targets) > 0 {
			f.Target = o.Targets[rng.IntN(len(o.Targets))]
			f.Partition = int32(rng.IntN(int(max(o.Partitions, 1))))
		}
		s.Faults = append(s.Faults, f)
		at += f.Hold + between(rng, o.Gap)
	}
	return s
}

func between(rng *rand.Rand, r [2]time.Duration) time.Duration {
	if r[1] <= r[0] {
		return r[0]
	}
	return r[0] + time.Duration(rng.Int64N(int64(r[1]-r[0])))
}

// Node is a process a fault acts on.
type Node interface {
	Name() string
	Kill() error   // SIGKILL; returns once the process is gone
	Start() error  // start again; returns once it serves
	Stop() error   // a clean shutdown (SIGTERM)
	Pause() error  // SIGSTOP
	Resume() error // SIGCONT
}

// NetCut cuts traffic from node from to node to (and back unless
// oneWay) and returns how to heal the cut. The cluster harness supplies
// it (nft rules between per-node loopback addresses); a run without one
// cannot apply Cut faults.
type NetCut func(from, to int, oneWay bool) (heal func() error, err error)

// ErrNoNetCut is returned for a Cut or Isolate fault when the Runner
// has no NetCut or Isolate.
var ErrNoNetCut = errors.New("chaos: a cut fault needs a NetCut")

// ErrNoLocate is returned for a fault with a Target other than Drawn
// when the Runner has no Locate.
var ErrNoLocate = errors.New("chaos: a fault on a role needs a Locate")

// ErrNoCompound is returned for a compound fault (Kind.Compound) when
// the Runner has no Compound.
var ErrNoCompound = errors.New("chaos: a compound fault needs a Compound")

// Compound starts compound fault f (its node, peer and partition as
// drawn; it finds the roles it acts on itself, and notes its steps in
// the History) and returns what ends it. The cluster harness supplies
// it.
type Compound func(ctx context.Context, f Fault) (undo func() error, err error)

// Locate finds the node (an index into Runner.Nodes) that fault f
// strikes, from its Target, when it strikes. The cluster harness
// supplies it (Metadata and DescribeQuorum over the Kafka protocol).
type Locate func(ctx context.Context, f Fault) (node int, err error)

// Runner applies a Schedule to nodes, noting every step in a History.
type Runner struct {
	Nodes    []Node
	Cut      NetCut                                        // nil: Cut faults fail with ErrNoNetCut
	Isolate  func(node int) (heal func() error, err error) // nil: Isolate faults fail with ErrNoNetCut
	Locate   Locate                                        // nil: faults on roles fail with ErrNoLocate
	Compound Compound                                      // nil: compound faults fail with ErrNoCompound
	// Settle, if set, runs before each fault and must return nil before
	// the fault strikes: a cluster harness waits there for every
	// partition's ISR to be full again, so that one fault at a time
	// means one node short at a time. Its error ends the run (a cluster
	// that does not recover is a finding, not a reason to go on).
	Settle  func(ctx context.Context) error
	History *History
}

// Run applies each fault at its time (or once Settle returns, if that
// is later) and undoes it after its hold. It stops at the first fault
// that cannot be applied or undone, or when ctx ends (leaving no node
// stopped or cut).
func (r *Runner) Run(ctx context.Context, s Schedule) error {
	for _, f := range s.Faults {
		if err := r.sleep(ctx, f.At-r.History.Now()); err != nil {
			return err
		}
		if r.Settle != nil {
			if err := r.Settle(ctx); err != nil {
				return fmt.Errorf("before fault %v (seed %d): %w", f, s.Seed, err)
			}
		}
		if err := r.apply(ctx, f); err != nil {
			return fmt.Errorf("fault %v (seed %d): %w", f, s.Seed, err)
		}
	}
	return nil
}

// locate resolves f's node and says why it was chosen ("" for Drawn).
func (r *Runner) locate(ctx context.Context, f Fault) (Fault, string, error) {
	if f.Target == Drawn {
		return f, "", nil
	}
	if r.Locate == nil {
		return f, "", ErrNoLocate
	}
	node, err := r.Locate(ctx, f)
	if err != nil {
		return f, "", fmt.Errorf("locate %s: %w", f.Target, err)
	}
	if f.Kind == Cut && node == f.Peer {
		// The drawn peer is the node itself now: cut it from the drawn
		// node instead, which differs from the drawn peer.
		f.Peer = f.Node
	}
	f.Node = node
	why := " (" + f.Target.String() + ")"
	if f.Target == PartitionLeader {
		why = fmt.Sprintf(" (leader of partition %d)", f.Partition)
	}
	return f, why, nil
}

func (r *Runner) apply(ctx context.Context, f Fault) error {
	if f.Kind.Compound() {
		return r.applyCompound(ctx, f)
	}
	f, why, err := r.locate(ctx, f)
	if err != nil {
		return err
	}
	if f.Node < 0 || f.Node >= len(r.Nodes) {
		return fmt.Errorf("no node %d", f.Node)
	}
	n := r.Nodes[f.Node]
	switch f.Kind {
	case Cut:
		r.History.Note("%s %s from %s%s (one way: %v)", f.Kind, n.Name(), r.Nodes[f.Peer].Name(), why, f.OneWay)
	default:
		r.History.Note("%s %s%s", f.Kind, n.Name(), why)
	}
	undo, err := r.inflict(f, n)
	if err != nil {
		return err
	}
	sleepErr := r.sleep(ctx, f.Hold)
	if err := undo(); err != nil {
		return err
	}
	return sleepErr
}

// applyCompound applies compound fault f through the Runner's
// Compound and undoes it after its hold.
func (r *Runner) applyCompound(ctx context.Context, f Fault) error {
	if r.Compound == nil {
		return ErrNoCompound
	}
	r.History.Note("%s (%s, partition %d)", f.Kind, f.Target, f.Partition)
	undo, err := r.Compound(ctx, f)
	if err != nil {
		return err
	}
	sleepErr := r.sleep(ctx, f.Hold)
	if err := undo(); err != nil {
		return err
	}
	return sleepErr
}

// inflict starts fault f on n and returns what ends it.
func (r *Runner) inflict(f Fault, n Node) (undo func() error, err error) {
	healed := func(what string, fn func() error) func() error {
		return func() error {
			err := fn()
			r.History.Note("%s %s", what, n.Name())
			return err
		}
	}
	switch f.Kind {
	case Kill:
		return healed("started", n.Start), n.Kill()
	case Pause:
		return healed("resumed", n.Resume), n.Pause()
	case Restart:
		return healed("started", n.Start), n.Stop()
	case Cut:
		if r.Cut == nil {
			return nil, ErrNoNetCut
		}
		heal, err := r.Cut(f.Node, f.Peer, f.OneWay)
		return healed("healed cut to", heal), err
	case Isolate:
		if r.Isolate == nil {
			return nil, ErrNoNetCut
		}
		heal, err := r.Isolate(f.Node)
		return healed("healed isolation of", heal), err
	}
	return nil, fmt.Errorf("unknown fault kind %d", f.Kind)
}

func (r *Runner) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// NewScenarioSchedule draws a schedule from seed that holds each of
// scenarios once, in an order drawn from seed: each keeps its Kind,
// Target and OneWay, and takes its node, peer, partition, hold and time
// from the draw as NewSchedule draws them (o.Kinds, o.Targets and
// o.Count are not used). A fixed set of faults then runs in every
// run, and a failing order replays from its seed.
func NewScenarioSchedule(seed uint64, scenarios []Fault, o ScheduleOptions) Schedule {
	rng := rand.New(rand.NewPCG(seed, seed^0x51afd7ed558ccd))
	order := rng.Perm(len(scenarios))
	s := Schedule{Seed: seed}
	at := o.First
	nodes := max(o.Nodes, 1)
	for _, i := range order {
		f := scenarios[i]
		f.At, f.Node = at, rng.IntN(nodes)
		hold := o.Hold
		if h, ok := o.KindHold[f.Kind]; ok {
			hold = h
		}
		f.Hold = between(rng, hold)
		f.Peer = (f.Node + 1 + rng.IntN(max(nodes-1, 1))) % nodes
		f.Partition = int32(rng.IntN(int(max(o.Partitions, 1))))
		s.Faults = append(s.Faults, f)
		at += f.Hold + between(rng, o.Gap)
	}
	return s
}
