package chaos

import (
	"fmt"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// LinearizeTimeout bounds porcupine's search per partition; a search
// that runs out is reported as an anomaly (the verdict is unknown).
var LinearizeTimeout = 60 * time.Second

// logOp is an operation on one partition as porcupine sees it: an
// append of a value (output: the offset it got), or the final read's
// end offset (output: the log end offset).
type logOp struct {
	end   bool
	value string
}

// appendLog is the sequential specification of a partition: the state
// is the log end offset; an append returning offset o is legal iff o
// equals the log end at its linearization point, and moves the end on
// by one (each append here is one record).
var appendLog = porcupine.Model{
	Init: func() any { return int64(0) },
	Step: func(state, input, output any) (bool, any) {
		n, in, out := state.(int64), input.(logOp), output.(int64)
		if in.end {
			return out == n, n
		}
		return out == n, n + 1
	},
	DescribeOperation: func(input, output any) string {
		in := input.(logOp)
		if in.end {
			return fmt.Sprintf("end() -> %d", output.(int64))
		}
		return fmt.Sprintf("append(%q) -> %d", in.value, output.(int64))
	},
}

// CheckLinearizable checks each partition's appends with porcupine.
// Acknowledged appends keep their offsets and their [invoke, complete]
// windows. An append that failed or timed out may or may not have
// happened: if the final read holds its value it happened, at the offset
// the final read shows, some time between its invoke and the completion
// of the first poll that saw it (or the end of the history); if not, it
// did not happen (had it been acknowledged, CheckLost reports it). The
// final read ends each partition's history as an end-offset read.
func CheckLinearizable(h *History) []Anomaly {
	ops, horizon := map[int32][]porcupine.Operation{}, historyEnd(h)
	final, firstSeen := finalByValue(h), firstObservation(h)
	var out []Anomaly
	for _, a := range h.Appends() {
		op, ok, bad := appendOp(a, final, firstSeen, horizon)
		if bad != nil {
			out = append(out, *bad)
		}
		if ok {
			ops[a.Partition] = append(ops[a.Partition], op)
		}
	}
	for _, p := range sortedPartitions(h.Final) {
		end := logStart(h, p) + int64(len(h.Final[p]))
		ops[p] = append(ops[p], porcupine.Operation{ClientId: -1, Input: logOp{end: true},
			Call: int64(horizon), Output: end, Return: int64(horizon) + 1})
	}
	for _, p := range sortedPartitions(ops) {
		out = append(out, linearizePartition(p, ops[p], logStart(h, p))...)
	}
	return out
}

// appendOp turns one append into a porcupine operation; ok is false for
// an indeterminate append that did not happen. An append takes effect
// no later than the first poll that returned its value completes.
func appendOp(a Append, final map[string]Rec, firstSeen map[string]time.Duration, horizon time.Duration) (op porcupine.Operation, ok bool, bad *Anomaly) {
	op = porcupine.Operation{Input: logOp{value: a.Value}, Call: int64(a.Invoke), Metadata: a}
	ret := horizon
	if a.Outcome == OK {
		op.Output, ret = a.Offset, a.Complete
	} else if r, found := final[a.Value]; !found {
		return op, false, nil
	} else if r.Partition != a.Partition {
		return op, false, &Anomaly{Checker: "linearizable",
			What: fmt.Sprintf("%q was sent to p%d but is in p%d", a.Value, a.Partition, r.Partition), Records: []string{a.String(), r.String()}}
	} else {
		op.Output = r.Offset
	}
	if t, seen := firstSeen[a.Value]; seen && t < ret {
		ret = t
	}
	if ret < a.Invoke {
		bad = &Anomaly{Checker: "linearizable",
			What:    fmt.Sprintf("%q was read by a poll that completed at %v, before its append was invoked", a.Value, ret),
			Records: []string{a.String()}}
		ret = a.Invoke
	}
	op.Return = int64(ret)
	return op, true, bad
}

// firstObservation is, for each value, the earliest completion of a poll
// that returned it.
func firstObservation(h *History) map[string]time.Duration {
	m := map[string]time.Duration{}
	for _, p := range h.Polls() {
		for _, r := range p.Records {
			if t, ok := m[r.Value]; !ok || p.Complete < t {
				m[r.Value] = p.Complete
			}
		}
	}
	return m
}

// historyEnd is a time after every invoke and completion in h.
func historyEnd(h *History) time.Duration {
	var end time.Duration
	for _, a := range h.Appends() {
		end = max(end, a.Invoke, a.Complete)
	}
	for _, p := range h.Polls() {
		end = max(end, p.Complete)
	}
	return end + time.Millisecond
}

func linearizePartition(p int32, ops []porcupine.Operation, start int64) []Anomaly {
	m := appendLog
	m.Init = func() any { return start }
	res, info := porcupine.CheckOperationsVerbose(m, ops, LinearizeTimeout)
	switch res {
	case porcupine.Ok:
		return nil
	case porcupine.Unknown:
		return []Anomaly{{Checker: "linearizable",
			What: fmt.Sprintf("p%d: no verdict on %d operations within %v", p, len(ops), LinearizeTimeout)}}
	}
	return []Anomaly{{Checker: "linearizable",
		What:    fmt.Sprintf("p%d: its %d operations have no linearization", p, len(ops)),
		Records: explainIllegal(ops, info)}}
}

// explainIllegal shows where the longest linearizable prefix stops: its
// last operations, then the earliest-invoked operations it could not
// place next.
func explainIllegal(ops []porcupine.Operation, info porcupine.LinearizationInfo) []string {
	var longest []int
	for _, part := range info.PartialLinearizations() {
		for _, l := range part {
			if len(l) > len(longest) {
				longest = l
			}
		}
	}
	placed := map[int]bool{}
	for _, i := range longest {
		placed[i] = true
	}
	var out []string
	for _, i := range longest[max(0, len(longest)-3):] {
		out = append(out, "linearized: "+describeOp(ops[i]))
	}
	var rest []int
	for i := range ops {
		if !placed[i] {
			rest = append(rest, i)
		}
	}
	sort.Slice(rest, func(a, b int) bool { return ops[rest[a]].Call < ops[rest[b]].Call })
	for _, i := range rest[:min(len(rest), 5)] {
		out = append(out, "cannot follow: "+describeOp(ops[i]))
	}
	return out
}

func describeOp(op porcupine.Operation) string {
	if a, ok := op.Metadata.(Append); ok {
		s := a.String()
		if a.Outcome != OK {
			s += fmt.Sprintf(" (in the log at offset %d)", op.Output.(int64))
		}
		return s
	}
	return appendLog.DescribeOperation(op.Input, op.Output)
}
