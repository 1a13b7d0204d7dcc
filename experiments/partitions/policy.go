package main

import (
	"fmt"
	"strconv"
	"strings"
)

// policy is the fsync policy every partition's log gets: Kafka's
// flush.messages=N (fsync a log once N messages were appended to it
// since its last fsync), or never (Kafka's default: no fsync until a
// segment rolls or the log is flushed).
type policy struct {
	messages int64 // flush.messages; 0 = never
}

func (p policy) name() string {
	if p.messages > 0 {
		return "messages=" + strconv.FormatInt(p.messages, 10)
	}
	return "never"
}

// batchesPerFsync is ceil(N/m) for batches of m messages: Kafka flushes
// after an append once LEO - recoveryPoint >= flush.messages. 0 = never.
func (p policy) batchesPerFsync(recordsPerBatch int) int64 {
	if p.messages <= 0 {
		return 0
	}
	m := int64(max(recordsPerBatch, 1))
	return (p.messages + m - 1) / m
}

// parsePolicies reads a comma-separated list of "never" and
// "messages=N".
func parsePolicies(s string) ([]policy, error) {
	var out []policy
	for _, f := range splitList(s) {
		if f == "never" {
			out = append(out, policy{})
			continue
		}
		v, ok := strings.CutPrefix(f, "messages=")
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil || n < 1 {
			return nil, fmt.Errorf("bad policy %q: want never or messages=N with N >= 1", f)
		}
		out = append(out, policy{messages: n})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no policies")
	}
	return out, nil
}
