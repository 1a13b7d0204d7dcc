package chaos

import (
	"fmt"
	"sort"
	"strings"
)

// Anomaly is one thing a checker found, with the records that show it.
type Anomaly struct {
	Checker string   // "lost", "duplicated", ...
	What    string   // one line
	Records []string // the offending operations and records
}

func (a Anomaly) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", a.Checker, a.What)
	for _, r := range a.Records {
		b.WriteString("\n    " + r)
	}
	return b.String()
}

// Report is the verdict of every checker over one history.
type Report struct {
	Anomalies []Anomaly
	Checked   []string // the checkers that ran
}

// OK says whether no checker found anything.
func (r Report) OK() bool { return len(r.Anomalies) == 0 }

// Of returns the anomalies one checker found.
func (r Report) Of(checker string) []Anomaly {
	var out []Anomaly
	for _, a := range r.Anomalies {
		if a.Checker == checker {
			out = append(out, a)
		}
	}
	return out
}

func (r Report) String() string {
	if r.OK() {
		return fmt.Sprintf("no anomalies (%s)", strings.Join(r.Checked, ", "))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d anomalies:", len(r.Anomalies))
	for _, a := range r.Anomalies {
		b.WriteString("\n  " + a.String())
	}
	return b.String()
}

// A Checker looks at a finished history and reports what is wrong.
type Checker struct {
	Name  string
	Check func(*History) []Anomaly
}

// Checkers lists every checker, in the order Check runs them.
var Checkers = []Checker{
	{"lost", CheckLost},
	{"unwritten", CheckUnwritten},
	{"duplicated", CheckDuplicated},
	{"inconsistent-offsets", CheckInconsistentOffsets},
	{"nonmonotonic-poll", CheckNonMonotonic},
	{"skipped-offsets", CheckSkipped},
	{"linearizable", CheckLinearizable},
}

// Check runs every checker over h. h.Final must hold the full read.
func Check(h *History) Report {
	var r Report
	for _, c := range Checkers {
		r.Checked = append(r.Checked, c.Name)
		r.Anomalies = append(r.Anomalies, c.Check(h)...)
	}
	return r
}

// reads returns every record any reader saw (polls, then the final
// read), each labelled with who saw it.
func reads(h *History) []seen {
	var out []seen
	for _, p := range h.Polls() {
		for _, r := range p.Records {
			out = append(out, seen{r, fmt.Sprintf("poll#%d %s", p.ID, p.Consumer)})
		}
	}
	for _, p := range sortedPartitions(h.Final) {
		for _, r := range h.Final[p] {
			out = append(out, seen{r, "final read"})
		}
	}
	return out
}

// seen is a record and the reader that saw it.
type seen struct {
	Rec
	by string
}

func (s seen) String() string { return s.Rec.String() + " (" + s.by + ")" }

func sortedPartitions[V any](m map[int32]V) []int32 {
	ps := make([]int32, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}

// finalByValue indexes the final read by value (the first position).
func finalByValue(h *History) map[string]Rec {
	m := map[string]Rec{}
	for _, p := range sortedPartitions(h.Final) {
		for _, r := range h.Final[p] {
			if _, ok := m[r.Value]; !ok {
				m[r.Value] = r
			}
		}
	}
	return m
}

// CheckLost reports every acknowledged append whose value the final
// read does not hold, and every value a consumer read (consumers read
// only below the high watermark: what Kafka calls committed) that the
// final read does not hold.
func CheckLost(h *History) []Anomaly {
	final := finalByValue(h)
	var out []Anomaly
	acked := map[string]bool{}
	for _, a := range h.Appends() {
		if a.Outcome != OK {
			continue
		}
		acked[a.Value] = true
		if _, ok := final[a.Value]; !ok {
			out = append(out, Anomaly{Checker: "lost",
				What:    fmt.Sprintf("acknowledged %q at p%d@%d is not in the final read", a.Value, a.Partition, a.Offset),
				Records: []string{a.String()}})
		}
	}
	for _, s := range reads(h) {
		if _, ok := final[s.Value]; ok || acked[s.Value] {
			continue
		}
		acked[s.Value] = true // report each value once
		out = append(out, Anomaly{Checker: "lost",
			What: fmt.Sprintf("%q was read but is not in the final read", s.Value), Records: []string{s.String()}})
	}
	return out
}

// CheckUnwritten reports values a reader saw that no append wrote, and
// values the broker refused (Failed) that a reader saw anyway.
func CheckUnwritten(h *History) []Anomaly {
	byValue := map[string]Append{}
	for _, a := range h.Appends() {
		byValue[a.Value] = a
	}
	reported := map[string]bool{}
	var out []Anomaly
	for _, s := range reads(h) {
		a, ok := byValue[s.Value]
		if reported[s.Value] || ok && a.Outcome != Failed {
			continue
		}
		reported[s.Value] = true
		what, recs := fmt.Sprintf("%q was read but never appended", s.Value), []string{s.String()}
		if ok {
			what, recs = fmt.Sprintf("%q was refused by the broker but read", s.Value), []string{a.String(), s.String()}
		}
		out = append(out, Anomaly{Checker: "unwritten", What: what, Records: recs})
	}
	return out
}
