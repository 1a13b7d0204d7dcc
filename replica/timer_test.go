package replica

import (
	"math/rand/v2"
	"slices"
	"testing"
)

var timerKinds = []struct {
	name string
	new  func(start int64) timer
}{
	{"wheel", func(start int64) timer { return newTimingWheel(start) }},
	{"btree", func(int64) timer { return newBTreeTimer() }},
}

// Both timers against a model: random adds (deadlines from already due
// to minutes ahead, as max.wait.ms and request timeouts are), removals
// and clock steps; every expire returns exactly the entries due and not
// removed, and nothing else.
// Kafka: TimingWheel/SystemTimer expire a task once, at or after its deadline.
func TestTimerMatchesModel(t *testing.T) {
	for _, k := range timerKinds {
		t.Run(k.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 20; seed++ {
				checkTimerModel(t, k.new, seed)
			}
		})
	}
}

func checkTimerModel(t *testing.T, newTimer func(int64) timer, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	now := int64(rng.IntN(1000))
	tm := newTimer(now)
	live := map[*timerEntry]bool{}
	var out []*timerEntry
	for step := 0; step < 3000; step++ {
		switch r := rng.IntN(10); {
		case r < 5:
			e := &timerEntry{deadline: now + int64(rng.IntN(1<<rng.IntN(20))) - 2}
			tm.add(e)
			live[e] = true
		case r < 7 && len(live) > 0:
			for e := range live {
				tm.remove(e)
				tm.remove(e) // twice: a no-op
				delete(live, e)
				break
			}
		default:
			now += int64(rng.IntN(1 << rng.IntN(16)))
			out = tm.expire(now, out[:0])
			checkExpired(t, seed, now, live, out)
		}
		if tm.len() != len(live) {
			t.Fatalf("seed %d step %d: len %d, want %d", seed, step, tm.len(), len(live))
		}
		if nx, ok := tm.next(); ok != (len(live) > 0) || ok && nx > minDeadline(live) {
			t.Fatalf("seed %d: next %d %v with earliest deadline %d", seed, nx, ok, minDeadline(live))
		}
	}
}

func checkExpired(t *testing.T, seed uint64, now int64, live map[*timerEntry]bool, out []*timerEntry) {
	t.Helper()
	for _, e := range out {
		if !live[e] || e.deadline > now {
			t.Fatalf("seed %d: expired an entry (deadline %d, live %v) at %d", seed, e.deadline, live[e], now)
		}
		delete(live, e)
	}
	for e := range live {
		if e.deadline <= now {
			t.Fatalf("seed %d: entry due at %d not expired at %d", seed, e.deadline, now)
		}
	}
}

func minDeadline(live map[*timerEntry]bool) int64 {
	m := int64(1 << 62)
	for e := range live {
		m = min(m, e.deadline)
	}
	return m
}

// The B-tree expires in deadline order, ties in insertion order; the
// wheel in bucket order (at tick precision).
func TestTimerExpiryOrder(t *testing.T) {
	for _, k := range timerKinds {
		tm := k.new(0)
		var es []*timerEntry
		for _, d := range []int64{50, 3, 3000, 17, 400} {
			e := &timerEntry{deadline: d}
			es = append(es, e)
			tm.add(e)
		}
		var got []int64
		for now := int64(0); now <= 3000; now++ {
			for _, e := range tm.expire(now, nil) {
				got = append(got, e.deadline)
			}
		}
		if !slices.Equal(got, []int64{3, 17, 50, 400, 3000}) {
			t.Errorf("%s: expired in order %v", k.name, got)
		}
	}
}
