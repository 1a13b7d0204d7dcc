package chaos

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// sim is a correct single-copy log observed by concurrent clients: each
// append takes effect at one instant strictly inside its [invoke,
// complete] window; an indeterminate one may or may not take effect.
// Its histories are what a correct broker can produce, so no checker
// may report anything about them.
type sim struct {
	t        int
	logs     map[int32][]Rec
	appends  []Append
	polls    []Poll
	inflight []flight
	readers  []reader
}

type flight struct {
	idx       int // into appends
	effect    int // time it takes effect; -1: never (indeterminate, not written)
	complete  int
	indefinit bool
}

type reader struct {
	name  string
	group bool
	pos   map[int32]int64
}

func newSim(partitions int32) *sim {
	s := &sim{logs: map[int32][]Rec{}}
	all := make([]int32, partitions)
	for p := range partitions {
		s.logs[p], all[p] = nil, p
	}
	s.readers = []reader{{name: "assigned", pos: map[int32]int64{}}, {name: "group", group: true, pos: map[int32]int64{}}}
	s.polls = append(s.polls, Poll{Consumer: "assigned", Assigned: all, FromStart: true},
		Poll{Consumer: "group", Assigned: all})
	return s
}

func (s *sim) invoke(t *rapid.T, client string, partitions int32) {
	p := int32(rapid.IntRange(0, int(partitions)-1).Draw(t, "partition"))
	v := fmt.Sprintf("%s-%d", client, len(s.appends))
	f := flight{idx: len(s.appends), effect: s.t + rapid.IntRange(1, 5).Draw(t, "effect")}
	f.complete = f.effect + rapid.IntRange(1, 5).Draw(t, "complete")
	if f.indefinit = rapid.IntRange(0, 9).Draw(t, "indefinite") == 0; f.indefinit && rapid.Bool().Draw(t, "never written") {
		f.effect = -1
	}
	s.appends = append(s.appends, Append{Client: client, Partition: p, Value: v, Invoke: ms(s.t)})
	s.inflight = append(s.inflight, f)
}

// tick applies the effects due now, then the completions.
func (s *sim) tick() {
	for _, f := range s.inflight {
		if f.effect == s.t {
			a := &s.appends[f.idx]
			a.Offset = int64(len(s.logs[a.Partition]))
			s.logs[a.Partition] = append(s.logs[a.Partition], Rec{a.Partition, a.Offset, a.Value})
		}
	}
	rest := s.inflight[:0]
	for _, f := range s.inflight {
		if f.complete != s.t {
			rest = append(rest, f)
			continue
		}
		a := &s.appends[f.idx]
		a.Complete, a.Outcome = ms(s.t), OK
		if f.indefinit {
			a.Outcome, a.Err, a.Offset = Unknown, "timed out", 0
		}
	}
	s.inflight = rest
}

// poll reads what is in the log now; a group member may first be
// reassigned back to an earlier (committed) position.
func (s *sim) poll(t *rapid.T, r *reader) {
	if r.group && rapid.IntRange(0, 4).Draw(t, "rebalance") == 0 {
		var ps []int32
		for p, pos := range r.pos {
			r.pos[p] = int64(rapid.Int64Range(0, pos).Draw(t, "committed"))
			ps = append(ps, p)
		}
		s.polls = append(s.polls, Poll{Consumer: r.name, Assigned: ps, Complete: ms(s.t)})
	}
	p := Poll{Consumer: r.name, Invoke: ms(s.t), Complete: ms(s.t + 1)}
	for part := range int32(len(s.logs)) {
		p.Records = append(p.Records, s.logs[part][r.pos[part]:]...)
		r.pos[part] = int64(len(s.logs[part]))
	}
	s.polls = append(s.polls, p)
}

func (s *sim) history() *History {
	return build(s.appends, s.polls, s.logs)
}

// correctHistory draws a history a correct log could produce.
func correctHistory(t *rapid.T) *sim {
	partitions := int32(rapid.IntRange(1, 3).Draw(t, "partitions"))
	clients := rapid.IntRange(1, 4).Draw(t, "clients")
	s := newSim(partitions)
	busy := map[int]bool{}
	for s.t = 0; s.t < rapid.IntRange(10, 80).Draw(t, "ticks"); s.t++ {
		for c := range clients {
			busy[c] = busy[c] && s.clientBusy(c)
			if !busy[c] && rapid.Bool().Draw(t, "invoke") {
				s.invoke(t, fmt.Sprintf("c%d", c), partitions)
				busy[c] = true
			}
		}
		s.tick()
		if r := rapid.IntRange(0, 3).Draw(t, "reader"); r < len(s.readers) {
			s.poll(t, &s.readers[r])
		}
	}
	for ; len(s.inflight) > 0; s.t++ {
		s.tick()
	}
	return s
}

// Kafka: a correct log's histories (concurrent appends, indeterminate
// ones written or not, consumers from the start and a group member
// rewound to committed offsets by rebalances) have no anomaly.
func TestCorrectLogHistoriesHaveNoAnomaly(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		if r := Check(correctHistory(t).history()); !r.OK() {
			t.Fatal(r)
		}
	})
}

// The broker faults the checkers exist for, each done once to the final
// read of a correct history at a record someone observed (acknowledged
// or read: an indeterminate record no one saw may vanish unnoticed),
// are always found: the tail from it lost, it written twice, it swapped
// with its successor (divergent logs).
func TestCorruptedFinalReadsAreFound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := correctHistory(t)
		p := int32(rapid.IntRange(0, len(s.logs)-1).Draw(t, "corrupt partition"))
		recs, seen := s.logs[p], s.observed()
		var at []int
		for i := range len(recs) - 1 {
			if seen[recs[i].Value] {
				at = append(at, i)
			}
		}
		if len(at) == 0 {
			t.Skip("no observed record to corrupt")
		}
		i := rapid.SampledFrom(at).Draw(t, "at")
		switch rapid.IntRange(0, 2).Draw(t, "fault") {
		case 0:
			s.logs[p] = recs[:i]
		case 1:
			s.logs[p] = append(recs, Rec{p, int64(len(recs)), recs[i].Value})
		case 2:
			recs[i].Value, recs[i+1].Value = recs[i+1].Value, recs[i].Value
		}
		if r := Check(s.history()); r.OK() {
			t.Fatalf("p%d corrupted at %d, nothing found; final read %v", p, i, s.logs[p])
		}
	})
}

// observed is the set of values acknowledged or read by a poll.
func (s *sim) observed() map[string]bool {
	m := map[string]bool{}
	for _, a := range s.appends {
		m[a.Value] = m[a.Value] || a.Outcome == OK
	}
	for _, p := range s.polls {
		for _, r := range p.Records {
			m[r.Value] = true
		}
	}
	return m
}

// clientBusy says whether client c has an append in flight.
func (s *sim) clientBusy(c int) bool {
	name := fmt.Sprintf("c%d", c)
	for _, f := range s.inflight {
		if s.appends[f.idx].Client == name {
			return true
		}
	}
	return false
}
