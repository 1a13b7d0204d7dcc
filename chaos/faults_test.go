package chaos

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

var testOpts = ScheduleOptions{Count: 20, Kinds: []Kind{Kill, Pause, Restart, Cut}, Nodes: 3,
	First: time.Second, Gap: [2]time.Duration{time.Second, 3 * time.Second},
	Hold: [2]time.Duration{100 * time.Millisecond, 2 * time.Second}, OneWayCut: true}

// A failing run is replayed from its seed: the same seed and options
// draw the same schedule, another seed another one.
func TestScheduleReplaysFromSeed(t *testing.T) {
	a, b, c := NewSchedule(7, testOpts), NewSchedule(7, testOpts), NewSchedule(8, testOpts)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("seed 7 drew two schedules:\n%s\n%s", a, b)
	}
	if reflect.DeepEqual(a.Faults, c.Faults) {
		t.Fatal("seeds 7 and 8 drew the same schedule")
	}
	t.Log(a)
}

// Faults come one at a time, within the options' bounds, and a cut
// never joins a node to itself.
func TestScheduleRespectsItsOptions(t *testing.T) {
	for seed := range uint64(50) {
		s := NewSchedule(seed, testOpts)
		if len(s.Faults) != testOpts.Count || s.Faults[0].At != testOpts.First {
			t.Fatalf("seed %d: %s", seed, s)
		}
		for i, f := range s.Faults {
			if f.Node < 0 || f.Node >= 3 || f.Hold < testOpts.Hold[0] || f.Hold >= testOpts.Hold[1] {
				t.Fatalf("seed %d: fault %v out of bounds", seed, f)
			}
			if f.Kind == Cut && f.Peer == f.Node {
				t.Fatalf("seed %d: %v cuts a node from itself", seed, f)
			}
			if i > 0 {
				prev := s.Faults[i-1]
				if gap := f.At - (prev.At + prev.Hold); gap < testOpts.Gap[0] || gap >= testOpts.Gap[1] {
					t.Fatalf("seed %d: %v follows %v after %v", seed, f, prev, gap)
				}
			}
		}
	}
}

// fakeNode records the signals a Runner sends it.
type fakeNode struct {
	name string
	mu   sync.Mutex
	log  []string
}

func (n *fakeNode) Name() string { return n.name }
func (n *fakeNode) do(s string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.log = append(n.log, s)
	return nil
}
func (n *fakeNode) Kill() error   { return n.do("kill") }
func (n *fakeNode) Start() error  { return n.do("start") }
func (n *fakeNode) Stop() error   { return n.do("stop") }
func (n *fakeNode) Pause() error  { return n.do("pause") }
func (n *fakeNode) Resume() error { return n.do("resume") }

// The Runner applies each fault at its time, undoes it after its hold,
// and notes both in the history; a cut goes through the NetCut.
func TestRunnerAppliesAndUndoesFaults(t *testing.T) {
	n0, n1 := &fakeNode{name: "n0"}, &fakeNode{name: "n1"}
	var cuts []string
	r := &Runner{Nodes: []Node{n0, n1}, History: NewHistory(),
		Cut: func(from, to int, oneWay bool) (func() error, error) {
			cuts = append(cuts, "cut")
			return func() error { cuts = append(cuts, "heal"); return nil }, nil
		}}
	hold := 20 * time.Millisecond
	s := Schedule{Faults: []Fault{
		{At: 10 * time.Millisecond, Kind: Kill, Node: 0, Hold: hold},
		{At: 40 * time.Millisecond, Kind: Pause, Node: 1, Hold: hold},
		{At: 70 * time.Millisecond, Kind: Restart, Node: 1},
		{At: 80 * time.Millisecond, Kind: Cut, Node: 0, Peer: 1, Hold: hold},
	}}
	if err := r.Run(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(n0.log, ","); got != "kill,start" {
		t.Errorf("n0 got %s", got)
	}
	if got := strings.Join(n1.log, ","); got != "pause,resume,stop,start" {
		t.Errorf("n1 got %s", got)
	}
	if got := strings.Join(cuts, ","); got != "cut,heal" {
		t.Errorf("netcut got %s", got)
	}
	ev := r.History.Events()
	if len(ev) != 8 || ev[0].At < 10*time.Millisecond || ev[1].At-ev[0].At < hold {
		t.Fatalf("events: %v", ev)
	}
}

// Without a NetCut a cut fault fails and names its seed.
func TestRunnerWithoutNetCutRefusesCuts(t *testing.T) {
	r := &Runner{Nodes: []Node{&fakeNode{}, &fakeNode{}}, History: NewHistory()}
	err := r.Run(context.Background(), Schedule{Seed: 42, Faults: []Fault{{Kind: Cut, Node: 0, Peer: 1}}})
	if !errors.Is(err, ErrNoNetCut) || !strings.Contains(err.Error(), "seed 42") {
		t.Fatalf("got %v", err)
	}
}

// A scenario schedule runs each scenario once, keeps what each fixes
// (kind, target, direction), replays from its seed, and orders them
// by seed.
func TestScenarioScheduleHoldsEachScenarioOnce(t *testing.T) {
	scenarios := []Fault{{Kind: Kill, Target: PartitionLeader}, {Kind: Kill, Target: ActiveController},
		{Kind: Cut, Target: PartitionLeader, OneWay: true}, {Kind: Isolate, Target: ActiveController}, {Kind: Pause}}
	o := testOpts
	o.Partitions = 4
	o.KindHold = map[Kind][2]time.Duration{Pause: {4 * time.Second, 5 * time.Second}}
	a, b := NewScenarioSchedule(3, scenarios, o), NewScenarioSchedule(3, scenarios, o)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("seed 3 drew two schedules:\n%s\n%s", a, b)
	}
	orders := map[string]bool{}
	for seed := range uint64(20) {
		s := NewScenarioSchedule(seed, scenarios, o)
		var order []string
		seen := map[[3]int]int{}
		for _, f := range s.Faults {
			seen[[3]int{int(f.Kind), int(f.Target), map[bool]int{false: 0, true: 1}[f.OneWay]}]++
			order = append(order, f.Kind.String()+"/"+f.Target.String())
			if f.Partition < 0 || f.Partition >= 4 || f.Peer == f.Node {
				t.Fatalf("seed %d: %v", seed, f)
			}
			if f.Kind == Pause && f.Hold < 4*time.Second {
				t.Fatalf("seed %d: a pause held %v, under its kind's hold", seed, f.Hold)
			}
		}
		for _, sc := range scenarios {
			if n := seen[[3]int{int(sc.Kind), int(sc.Target), map[bool]int{false: 0, true: 1}[sc.OneWay]}]; n != 1 {
				t.Fatalf("seed %d: scenario %v ran %d times:\n%s", seed, sc, n, s)
			}
		}
		orders[strings.Join(order, ",")] = true
	}
	if len(orders) < 2 {
		t.Fatal("every seed drew the same order")
	}
}

// A fault on a role strikes the node Locate names when it strikes, and
// notes why; a cut whose drawn peer is that node cuts it from the drawn
// node instead; without a Locate such a fault fails. Settle runs before
// every fault, and its error ends the run.
func TestRunnerLocatesRolesAndSettles(t *testing.T) {
	ns := []Node{&fakeNode{name: "n0"}, &fakeNode{name: "n1"}, &fakeNode{name: "n2"}}
	var cuts, isolated []int
	settled := 0
	r := &Runner{Nodes: ns, History: NewHistory(),
		Cut: func(from, to int, _ bool) (func() error, error) {
			cuts = append(cuts, from, to)
			return func() error { return nil }, nil
		},
		Isolate: func(n int) (func() error, error) {
			isolated = append(isolated, n)
			return func() error { return nil }, nil
		},
		Locate: func(_ context.Context, f Fault) (int, error) {
			if f.Target == ActiveController {
				return 2, nil
			}
			return int(f.Partition), nil
		},
		Settle: func(context.Context) error { settled++; return nil }}
	s := Schedule{Faults: []Fault{
		{Kind: Kill, Target: PartitionLeader, Partition: 1, Node: 0},
		{Kind: Isolate, Target: ActiveController, Node: 0},
		{Kind: Cut, Target: ActiveController, Node: 0, Peer: 2},
	}}
	if err := r.Run(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ns[1].(*fakeNode).log, ","); got != "kill,start" {
		t.Errorf("the leader of partition 1 (n1) got %q", got)
	}
	if !reflect.DeepEqual(isolated, []int{2}) || !reflect.DeepEqual(cuts, []int{2, 0}) || settled != 3 {
		t.Errorf("isolated %v, cuts %v, settled %d times", isolated, cuts, settled)
	}
	if ev := r.History.Events(); ev[0].What != "kill n1 (leader of partition 1)" || ev[2].What != "isolate n2 (active controller)" {
		t.Errorf("events: %v", ev)
	}
	r.Locate = nil
	if err := r.Run(context.Background(), Schedule{Faults: s.Faults[:1]}); !errors.Is(err, ErrNoLocate) {
		t.Errorf("without Locate: %v", err)
	}
	r.Settle = func(context.Context) error { return errors.New("ISR never full") }
	if err := r.Run(context.Background(), Schedule{Seed: 9, Faults: s.Faults[:1]}); err == nil || !strings.Contains(err.Error(), "ISR never full") {
		t.Errorf("a failed settle: %v", err)
	}
}

// A compound fault goes to the Runner's Compound, whose undo runs after
// the fault's hold; without a Compound it fails and names its seed.
func TestRunnerHandsCompoundFaultsToItsCompound(t *testing.T) {
	var got []string
	r := &Runner{Nodes: []Node{&fakeNode{}}, History: NewHistory(),
		Compound: func(ctx context.Context, f Fault) (func() error, error) {
			got = append(got, f.Kind.String())
			return func() error { got = append(got, "undo"); return nil }, nil
		}}
	s := Schedule{Faults: []Fault{{Kind: KillAtISRChange, Hold: time.Millisecond}, {Kind: DropTailThenKill},
		{Kind: DropTailThenKill, Target: PartitionLeader}, {Kind: KillMidReassign, Target: ActiveController}}}
	if err := r.Run(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	want := "kill-at-isr-change,undo,drop-tail-then-kill,undo,drop-tail-then-kill,undo,kill-mid-reassign,undo"
	if strings.Join(got, ",") != want {
		t.Fatalf("got %v, want %s", got, want)
	}
	r.Compound = nil
	err := r.Run(context.Background(), Schedule{Seed: 9, Faults: []Fault{{Kind: KillMidReassign}}})
	if !errors.Is(err, ErrNoCompound) || !strings.Contains(err.Error(), "seed 9") {
		t.Fatalf("got %v", err)
	}
	if Kill.Compound() || Isolate.Compound() || !DropTailThenKill.Compound() {
		t.Fatal("Kind.Compound")
	}
}
