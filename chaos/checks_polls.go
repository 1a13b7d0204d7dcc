package chaos

import "fmt"

// cursor is where one consumer is in one partition.
type cursor struct {
	last      seen // the last record read; by is empty before the first
	fromStart bool // assigned at the log start and nothing read since
}

// walkPolls replays each consumer's polls in order and calls visit for
// every record with that consumer's cursor in the record's partition
// before the record. An assignment resets the cursors it names.
func walkPolls(h *History, visit func(c cursor, s seen)) {
	cursors := map[string]map[int32]cursor{}
	for _, p := range h.Polls() {
		cs := cursors[p.Consumer]
		if cs == nil {
			cs = map[int32]cursor{}
			cursors[p.Consumer] = cs
		}
		for _, part := range p.Assigned {
			cs[part] = cursor{fromStart: p.FromStart}
		}
		for _, r := range p.Records {
			s := seen{r, fmt.Sprintf("poll#%d %s", p.ID, p.Consumer)}
			visit(cs[r.Partition], s)
			cs[r.Partition] = cursor{last: s}
		}
	}
}

// CheckNonMonotonic reports a consumer that, without a new assignment,
// read a partition's offset at or below one it had already read.
func CheckNonMonotonic(h *History) []Anomaly {
	var out []Anomaly
	walkPolls(h, func(c cursor, s seen) {
		if c.last.by != "" && s.Offset <= c.last.Offset {
			out = append(out, Anomaly{Checker: "nonmonotonic-poll",
				What:    fmt.Sprintf("p%d went from offset %d back to %d", s.Partition, c.last.Offset, s.Offset),
				Records: []string{c.last.String(), s.String()}})
		}
	})
	return out
}

// CheckSkipped reports offsets a reader stepped over: a consumer whose
// next record in a partition is not the next offset, a consumer
// assigned at the log start whose first record is not the log's first
// (the final read's), and gaps in the final read itself. Offsets are
// dense here: the workload writes no transactions (no control records)
// and nothing is compacted.
func CheckSkipped(h *History) []Anomaly {
	var out []Anomaly
	skip := func(prev, s seen, want int64) {
		recs := []string{s.String()}
		if prev.by != "" {
			recs = []string{prev.String(), s.String()}
		}
		out = append(out, Anomaly{Checker: "skipped-offsets",
			What:    fmt.Sprintf("p%d read offset %d where %d was next", s.Partition, s.Offset, want),
			Records: recs})
	}
	walkPolls(h, func(c cursor, s seen) {
		switch {
		case c.last.by != "" && s.Offset > c.last.Offset+1:
			skip(c.last, s, c.last.Offset+1)
		case c.last.by == "" && c.fromStart && s.Offset != logStart(h, s.Partition):
			skip(seen{}, s, logStart(h, s.Partition))
		}
	})
	for _, p := range sortedPartitions(h.Final) {
		recs := h.Final[p]
		for i := 1; i < len(recs); i++ {
			if recs[i].Offset != recs[i-1].Offset+1 {
				skip(seen{recs[i-1], "final read"}, seen{recs[i], "final read"}, recs[i-1].Offset+1)
			}
		}
	}
	return out
}

// logStart is the first offset of partition p in the final read (0 when
// it read nothing there: nothing here deletes records).
func logStart(h *History, p int32) int64 {
	if recs := h.Final[p]; len(recs) > 0 {
		return recs[0].Offset
	}
	return 0
}
