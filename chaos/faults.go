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
)

func (k Kind) String() string {
	return [...]string{"kill", "pause", "restart", "cut"}[k]
}

// Fault is one fault of a Schedule.
type Fault struct {
	At     time.Duration // from the start of the run (the History's clock)
	Kind   Kind
	Node   int           // index into Runner.Nodes
	Peer   int           // Cut only: the other end
	OneWay bool          // Cut only: drop Node->Peer traffic alone
	Hold   time.Duration // how long the node stays down, stopped or cut
}

func (f Fault) String() string {
	s := fmt.Sprintf("%v %s node %d", f.At.Round(time.Millisecond), f.Kind, f.Node)
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
}

// NewSchedule draws a schedule from seed: Count faults, one at a time,
// each Gap after the previous one has healed, each held for Hold (both
// drawn uniformly from their ranges).
func NewSchedule(seed uint64, o ScheduleOptions) Schedule {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s := Schedule{Seed: seed}
	at := o.First
	for range o.Count {
		f := Fault{At: at, Kind: o.Kinds[rng.IntN(len(o.Kinds))], Node: rng.IntN(max(o.Nodes, 1)),
			Hold: between(rng, o.Hold)}
		if f.Kind == Cut {
			f.Peer = (f.Node + 1 + rng.IntN(max(o.Nodes-1, 1))) % max(o.Nodes, 1)
			f.OneWay = o.OneWayCut && rng.IntN(2) == 0
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

// ErrNoNetCut is returned for a Cut fault when the Runner has no NetCut.
var ErrNoNetCut = errors.New("chaos: a cut fault needs a NetCut")

// Runner applies a Schedule to nodes, noting every step in a History.
type Runner struct {
	Nodes   []Node
	Cut     NetCut // nil: Cut faults fail with ErrNoNetCut
	History *History
}

// Run applies each fault at its time and undoes it after its hold. It
// stops at the first fault that cannot be applied or undone, or when
// ctx ends (leaving no node stopped or cut).
func (r *Runner) Run(ctx context.Context, s Schedule) error {
	for _, f := range s.Faults {
		if err := r.sleep(ctx, f.At-r.History.Now()); err != nil {
			return err
		}
		if err := r.apply(ctx, f); err != nil {
			return fmt.Errorf("fault %v (seed %d): %w", f, s.Seed, err)
		}
	}
	return nil
}

func (r *Runner) apply(ctx context.Context, f Fault) error {
	if f.Node < 0 || f.Node >= len(r.Nodes) {
		return fmt.Errorf("no node %d", f.Node)
	}
	n := r.Nodes[f.Node]
	r.History.Note("%s %s", f.Kind, n.Name())
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
