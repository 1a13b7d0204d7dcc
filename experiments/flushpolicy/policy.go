package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/varve/varve/segment"
)

// policy is one flush setting of a topic: Kafka's flush.messages or
// flush.ms, or neither (Kafka's default: the log is fsynced only when a
// segment rolls and on a clean shutdown).
type policy struct {
	messages int64         // flush.messages; 0 = unset
	ms       time.Duration // flush.ms; 0 = unset
}

// never is Kafka's default policy.
var never = policy{}

// defaultPolicies are issue 6's: flush.messages and flush.ms each at 1,
// 10, 100 and 1000, and neither.
const defaultPolicies = "messages=1,messages=10,messages=100,messages=1000,ms=1,ms=10,ms=100,ms=1000,never"

// name is the policy as the CSV and the plots spell it.
func (p policy) name() string {
	switch {
	case p.messages > 0:
		return "messages=" + strconv.FormatInt(p.messages, 10)
	case p.ms > 0:
		return "ms=" + strconv.FormatInt(p.ms.Milliseconds(), 10)
	}
	return "never"
}

// family groups policies for plots: "messages", "ms" or "never".
func (p policy) family() string {
	name, _, _ := strings.Cut(p.name(), "=")
	return name
}

// apply sets the policy on a log configuration; a zero messages or ms
// leaves c's value (never, in segment.DefaultConfig).
func (p policy) apply(c segment.Config) segment.Config {
	if p.messages > 0 {
		c.FlushMessages = p.messages
	}
	if p.ms > 0 {
		c.FlushMs = p.ms
	}
	return c
}

// parsePolicy reads "never", "messages=N" or "ms=N" (N in milliseconds).
func parsePolicy(s string) (policy, error) {
	s = strings.TrimSpace(s)
	if s == "never" {
		return never, nil
	}
	key, val, ok := strings.Cut(s, "=")
	n, err := strconv.ParseInt(val, 10, 64)
	if !ok || err != nil || n < 1 {
		return policy{}, fmt.Errorf("bad policy %q: want never, messages=N or ms=N with N >= 1", s)
	}
	switch key {
	case "messages":
		return policy{messages: n}, nil
	case "ms":
		return policy{ms: time.Duration(n) * time.Millisecond}, nil
	}
	return policy{}, fmt.Errorf("bad policy %q: want never, messages=N or ms=N", s)
}

// parsePolicies reads a comma-separated list of policies.
func parsePolicies(s string) ([]policy, error) {
	var out []policy
	for _, f := range splitList(s) {
		p, err := parsePolicy(f)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no policies")
	}
	return out, nil
}

// batchesPerFsync is how many equal batches of recordsPerBatch records
// an appender writes between two fsyncs under flush.messages=N: Kafka
// flushes after an append once LEO - recoveryPoint >= N, so a group is
// ceil(N / recordsPerBatch) batches. 0 means no per-append fsync.
func (p policy) batchesPerFsync(recordsPerBatch int) int {
	if p.messages <= 0 {
		return 0
	}
	m := int64(max(recordsPerBatch, 1))
	return int((p.messages + m - 1) / m)
}
