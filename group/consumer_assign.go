package group

import (
	"slices"
)

// The server-side assignors of group.consumer.assignors. Both are
// deterministic: members are taken in member id order and partitions in
// (topic id, partition) order, so a replay computes the same target.

// assignSpec is an assignor's input: the members' subscriptions (topic
// names) and the previous target, for stickiness.
type assignSpec struct {
	members []string            // sorted
	subs    map[string][]string // member -> subscribed topics
	prev    map[string]partSet
	topics  Topics
}

type assignor func(assignSpec) map[string]partSet

var assignors = map[string]assignor{
	"uniform": assignUniform,
	"range":   assignRange,
}

// eligible maps each existing subscribed partition to the members
// subscribed to its topic.
func (s assignSpec) eligible() (map[tidp][]string, []tidp) {
	out := map[tidp][]string{}
	for _, m := range s.members {
		for _, name := range s.subs[m] {
			t, ok := s.topics.TopicByName(name)
			if !ok {
				continue
			}
			for p := int32(0); p < t.Partitions; p++ {
				k := tidp{t.ID, p}
				out[k] = append(out[k], m)
			}
		}
	}
	parts := make([]tidp, 0, len(out))
	for k := range out {
		parts = append(parts, k)
	}
	slices.SortFunc(parts, cmpTIDP)
	return out, parts
}

// assignUniform spreads the partitions evenly over the members that
// subscribe to them, keeping each partition with its previous owner
// where balance allows (Kafka's uniform assignor: sticky and balanced).
// With one subscription for all, every member ends with n/m or n/m+1
// partitions.
func assignUniform(s assignSpec) map[string]partSet {
	elig, parts := s.eligible()
	out := make(map[string]partSet, len(s.members))
	for _, m := range s.members {
		out[m] = partSet{}
	}
	owner := map[tidp]string{}
	// Sticky: a partition stays with its previous owner if still eligible,
	// up to the ceiling share of its eligible members.
	for _, m := range s.members {
		for _, p := range s.prev[m].sorted() {
			if slices.Contains(elig[p], m) && len(out[m]) < ceilShare(len(parts), len(s.members)) {
				out[m].add(p.id, p.p)
				owner[p] = m
			}
		}
	}
	for _, p := range parts {
		if _, ok := owner[p]; !ok {
			m := leastLoaded(out, elig[p])
			out[m].add(p.id, p.p)
			owner[p] = m
		}
	}
	balance(out, elig, parts, owner)
	return out
}

func ceilShare(n, m int) int {
	if m == 0 {
		return 0
	}
	return (n + m - 1) / m
}

// leastLoaded is the candidate with the fewest partitions, the first by
// id on a tie.
func leastLoaded(out map[string]partSet, candidates []string) string {
	best := candidates[0]
	for _, c := range candidates[1:] {
		if len(out[c]) < len(out[best]) {
			best = c
		}
	}
	return best
}

// balance moves partitions from a member holding more than one above
// another eligible member, until no such move is left.
func balance(out map[string]partSet, elig map[tidp][]string, parts []tidp, owner map[tidp]string) {
	for moved := true; moved; {
		moved = false
		for _, p := range parts {
			from := owner[p]
			to := leastLoaded(out, elig[p])
			if len(out[from]) > len(out[to])+1 {
				delete(out[from], p)
				out[to].add(p.id, p.p)
				owner[p] = to
				moved = true
			}
		}
	}
}

// assignRange gives each member contiguous ranges of each topic it
// subscribes to: with m subscribers and n partitions, the first n%m
// members by id get n/m+1 partitions and the others n/m, so members
// subscribed to co-partitioned topics get the same partition numbers
// (Kafka's range assignor).
func assignRange(s assignSpec) map[string]partSet {
	out := make(map[string]partSet, len(s.members))
	subscribers := map[string][]string{}
	var names []string
	for _, m := range s.members {
		out[m] = partSet{}
		for _, t := range s.subs[m] {
			if subscribers[t] == nil {
				names = append(names, t)
			}
			subscribers[t] = append(subscribers[t], m)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		t, ok := s.topics.TopicByName(name)
		if !ok {
			continue
		}
		ms := subscribers[name]
		n, k := int(t.Partitions), len(ms)
		next := int32(0)
		for i, m := range ms {
			count := n / k
			if i < n%k {
				count++
			}
			for j := 0; j < count; j++ {
				out[m].add(t.ID, next)
				next++
			}
		}
	}
	return out
}
