package chaos

import "fmt"

// pos is a place in the log.
type pos struct {
	partition int32
	offset    int64
}

// CheckDuplicated reports every value readers saw at more than one
// place in the log (an idempotent producer's retry written twice).
func CheckDuplicated(h *History) []Anomaly {
	where := map[string][]seen{}
	var order []string
	for _, s := range reads(h) {
		prior := where[s.Value]
		if len(prior) == 0 {
			order = append(order, s.Value)
		}
		if !containsPos(prior, s.Rec) {
			where[s.Value] = append(prior, s)
		}
	}
	var out []Anomaly
	for _, v := range order {
		if ss := where[v]; len(ss) > 1 {
			out = append(out, Anomaly{Checker: "duplicated",
				What: fmt.Sprintf("%q is at %d places", v, len(ss)), Records: strs(ss)})
		}
	}
	return out
}

func containsPos(ss []seen, r Rec) bool {
	for _, s := range ss {
		if s.Partition == r.Partition && s.Offset == r.Offset {
			return true
		}
	}
	return false
}

// CheckInconsistentOffsets reports every place in the log where readers
// (or a reader and an acknowledgement) disagree on the value.
func CheckInconsistentOffsets(h *History) []Anomaly {
	at := map[pos][]seen{}
	var order []pos
	add := func(s seen) {
		k := pos{s.Partition, s.Offset}
		prior := at[k]
		if len(prior) == 0 {
			order = append(order, k)
		}
		for _, q := range prior {
			if q.Value == s.Value {
				return
			}
		}
		at[k] = append(prior, s)
	}
	for _, a := range h.Appends() {
		if a.Outcome == OK {
			add(seen{Rec{a.Partition, a.Offset, a.Value}, fmt.Sprintf("acknowledged to append#%d", a.ID)})
		}
	}
	for _, s := range reads(h) {
		add(s)
	}
	var out []Anomaly
	for _, k := range order {
		if ss := at[k]; len(ss) > 1 {
			out = append(out, Anomaly{Checker: "inconsistent-offsets",
				What: fmt.Sprintf("p%d@%d holds %d different values", k.partition, k.offset, len(ss)), Records: strs(ss)})
		}
	}
	return out
}

func strs[T fmt.Stringer](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return out
}
