package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The topics the steps work on.
const (
	adminTopic    = "tools"
	failoverTopic = "tools-failover"
)

// steps runs every step in order; a failed step is recorded and the
// next ones still run (each checks its own preconditions).
func (e *exp) steps(ctx context.Context) {
	e.quorumSteps(ctx)
	e.topicSteps(ctx)
	e.reassignSteps(ctx)
	e.operatorSteps(ctx)
	if ctx.Err() == nil {
		e.failoverSteps(ctx)
	}
	if ctx.Err() == nil {
		e.finalSteps(ctx)
	}
}

func (e *exp) quorumSteps(ctx context.Context) {
	e.step(ctx, "describe --status",
		"exit 0; this cluster's id; a leader among three voters 1, 2, 3; no observers",
		exitedZero(func(out string) (string, bool) {
			q, err := parseQuorumStatus(out)
			if err != nil {
				return err.Error(), false
			}
			seen := fmt.Sprintf("cluster %s, leader %d, voters %v, %d observers", q.ClusterID, q.LeaderID, q.Voters, q.Observers)
			ok := q.ClusterID == e.cluster.ClusterID && slices.Contains(q.Voters, q.LeaderID) &&
				sameSet(toInt32(q.Voters), []int32{1, 2, 3}) && q.Observers == 0
			return seen, ok
		}), "kafka-metadata-quorum", "describe", "--status")
	e.step(ctx, "describe --replication", "exit 0; three rows, one Leader and two Followers", replicationCheck,
		"kafka-metadata-quorum", "describe", "--replication")
}

// replicationCheck checks describe --replication: one leader, two
// followers, each with a log end offset.
func replicationCheck(out string, exit int) (string, bool) {
	if exit != 0 {
		return fmt.Sprintf("exit status %d: %s", exit, lastLine(out)), false
	}
	rows, err := parseReplication(out)
	if err != nil {
		return err.Error(), false
	}
	var parts []string
	leaders, followers := 0, 0
	for _, r := range rows {
		parts = append(parts, fmt.Sprintf("%d %s leo=%d lag=%d", r.NodeID, r.Status, r.LogEndOffset, r.Lag))
		switch r.Status {
		case "Leader":
			leaders++
		case "Follower":
			followers++
		}
	}
	return strings.Join(parts, "; "), len(rows) == 3 && leaders == 1 && followers == 2
}

func toInt32(v []int) []int32 {
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}

func (e *exp) topicSteps(ctx context.Context) {
	e.step(ctx, "--create --partitions 3 --replication-factor 3", `exit 0, "Created topic tools."`,
		contains("Created topic "+adminTopic+"."), "kafka-topics", "--create", "--topic", adminTopic,
		"--partitions", "3", "--replication-factor", "3")
	e.describeStep(ctx, "--describe", "3 partitions, each with 3 replicas, all in the ISR, led by one of them", 3, nil)
	e.step(ctx, "--alter --partitions 6", "exit 0", exitedZero(func(string) (string, bool) { return "exit 0", true }),
		"kafka-topics", "--alter", "--topic", adminTopic, "--partitions", "6")
	e.describeStep(ctx, "--describe after --alter", "6 partitions, each with 3 replicas, all in the ISR", 6, nil)
	e.step(ctx, "--alter --add-config retention.ms=3600000,min.insync.replicas=2",
		`exit 0, "Completed updating config for topic tools."`, contains("Completed updating config for topic "+adminTopic+"."),
		"kafka-configs", "--alter", "--entity-type", "topics", "--entity-name", adminTopic,
		"--add-config", "retention.ms=3600000,min.insync.replicas=2")
	// Kafka's ConfigHelper lists a topic setting's broker synonyms after
	// it, from the one the topic setting maps to (min.insync.replicas's
	// default, 1); retention.ms maps to log.retention.ms, which is unset,
	// so the hours default behind it is dropped.
	e.step(ctx, "--describe", "exit 0; both settings listed as DYNAMIC_TOPIC_CONFIG, with the broker synonyms Kafka lists",
		contains("min.insync.replicas=2 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:min.insync.replicas=2, DEFAULT_CONFIG:min.insync.replicas=1}",
			"retention.ms=3600000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=3600000}"),
		"kafka-configs", "--describe", "--entity-type", "topics", "--entity-name", adminTopic)
}

// contains checks that the tool exited 0 and printed every want.
func contains(want ...string) func(string, int) (string, bool) {
	return exitedZero(func(out string) (string, bool) {
		for _, w := range want {
			if !strings.Contains(out, w) {
				return fmt.Sprintf("no %q in the output", w), false
			}
		}
		return "exit 0, printed " + strings.Join(quoteAll(want), " and "), true
	})
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}

// describeStep runs kafka-topics --describe on the admin topic and
// checks partitions healthy partitions; extra, when set, checks more.
func (e *exp) describeStep(ctx context.Context, title, expected string, partitions int, extra func(describedTopic) (string, bool)) describedTopic {
	var t describedTopic
	e.step(ctx, title, "exit 0; "+expected, exitedZero(func(out string) (string, bool) {
		var err error
		if t, err = parseDescribe(out); err != nil {
			return err.Error(), false
		}
		if seen, ok := healthy(t, partitions); !ok || extra == nil {
			return seen, ok
		}
		return extra(t)
	}), "kafka-topics", "--describe", "--topic", adminTopic)
	return t
}

// healthy checks that t has n partitions, each with three replicas, a
// full ISR and a leader among its replicas.
func healthy(t describedTopic, n int) (string, bool) {
	if t.PartitionCount != n || len(t.Partitions) != n {
		return fmt.Sprintf("PartitionCount %d, %d partition lines", t.PartitionCount, len(t.Partitions)), false
	}
	for p := range int32(n) {
		d, ok := t.Partitions[p]
		switch {
		case !ok:
			return fmt.Sprintf("no line for partition %d", p), false
		case len(d.Replicas) != 3 || !sameSet(d.Replicas, d.ISR) || !slices.Contains(d.Replicas, d.Leader):
			return fmt.Sprintf("partition %d: leader %d replicas %v isr %v", p, d.Leader, d.Replicas, d.ISR), false
		}
	}
	return fmt.Sprintf("%d partitions, each with 3 replicas in the ISR and a leader among them", n), true
}

// reassignment is the JSON kafka-reassign-partitions reads and writes.
type reassignment struct {
	Version    int `json:"version"`
	Partitions []struct {
		Topic     string   `json:"topic"`
		Partition int32    `json:"partition"`
		Replicas  []int32  `json:"replicas"`
		LogDirs   []string `json:"log_dirs,omitempty"`
	} `json:"partitions"`
}

func (e *exp) reassignSteps(ctx context.Context) {
	topics := filepath.Join(e.tmp, "topics-to-move.json")
	os.WriteFile(topics, []byte(`{"version":1,"topics":[{"topic":"`+adminTopic+`"}]}`), 0o644)
	e.step(ctx, "--generate", "exit 0; the current assignment and a proposed one, every partition of tools on brokers 1-3",
		exitedZero(func(out string) (string, bool) {
			_, proposed, found := strings.Cut(out, "Proposed partition reassignment configuration")
			if !found {
				return "no proposed configuration", false
			}
			var r reassignment
			if err := json.Unmarshal([]byte(strings.TrimSpace(proposed)), &r); err != nil {
				return "proposed configuration: " + err.Error(), false
			}
			for _, p := range r.Partitions {
				if p.Topic != adminTopic || len(p.Replicas) != 3 || !sameSet(p.Replicas, []int32{1, 2, 3}) {
					return fmt.Sprintf("proposed %s-%d on %v", p.Topic, p.Partition, p.Replicas), false
				}
			}
			return fmt.Sprintf("a proposal for %d partitions, each on brokers 1, 2, 3", len(r.Partitions)), len(r.Partitions) == 6
		}), "kafka-reassign-partitions", "--generate", "--topics-to-move-json-file", topics, "--broker-list", "1,2,3")

	before := e.describeStep(ctx, "--describe before the reassignment", "6 healthy partitions", 6, nil)
	cur, ok := before.Partitions[0]
	if !ok || len(cur.Replicas) != 3 {
		return
	}
	target := slices.Clone(cur.Replicas)
	slices.Reverse(target)
	plan := filepath.Join(e.tmp, "reassign.json")
	os.WriteFile(plan, []byte(fmt.Sprintf(`{"version":1,"partitions":[{"topic":%q,"partition":0,"replicas":[%s],"log_dirs":["any","any","any"]}]}`,
		adminTopic, joinIDs(target))), 0o644)
	e.step(ctx, fmt.Sprintf("--execute (partition 0: %v to %v)", cur.Replicas, target),
		`exit 0, "Successfully started partition reassignment for tools-0"`,
		contains("Successfully started partition reassignment for "+adminTopic+"-0"),
		"kafka-reassign-partitions", "--execute", "--reassignment-json-file", plan)
	e.verifyReassignment(ctx, plan)
	e.describeStep(ctx, "--describe after the reassignment", fmt.Sprintf("partition 0's replicas in the order %v", target), 6,
		func(t describedTopic) (string, bool) {
			d := t.Partitions[0]
			return fmt.Sprintf("partition 0: leader %d replicas %v isr %v", d.Leader, d.Replicas, d.ISR), slices.Equal(d.Replicas, target)
		})
	e.step(ctx, "--election-type PREFERRED --all-topic-partitions",
		"exit 0; tools-0 elected (its preferred replica changed), or every preferred leader already leads",
		exitedZero(func(out string) (string, bool) {
			if strings.Contains(out, "Successfully completed leader election (PREFERRED) for partitions") ||
				strings.Contains(out, "Valid replica already elected for partitions") {
				return lastLine(out), true
			}
			return "neither an election nor an elected replica reported: " + lastLine(out), false
		}), "kafka-leader-election", "--election-type", "PREFERRED", "--all-topic-partitions")
	e.describeStep(ctx, "--describe after the election", "every partition led by its first replica", 6,
		func(t describedTopic) (string, bool) {
			for p := range int32(6) {
				if d := t.Partitions[p]; d.Leader != d.Replicas[0] {
					return fmt.Sprintf("partition %d: leader %d, replicas %v", p, d.Leader, d.Replicas), false
				}
			}
			return fmt.Sprintf("every partition led by its first replica (partition 0 by %d)", target[0]), true
		})
}

// verifyReassignment runs --verify until it reports completion, at most
// for 60 s; the last run is the step's record.
func (e *exp) verifyReassignment(ctx context.Context, plan string) {
	deadline := time.Now().Add(60 * time.Second)
	for attempt := 1; ; attempt++ {
		var done bool
		n := len(e.outcomes)
		e.step(ctx, fmt.Sprintf("--verify (run %d)", attempt),
			`exit 0, "Reassignment of partition tools-0 is completed." (run again while it is in progress)`,
			exitedZero(func(out string) (string, bool) {
				const completed = "Reassignment of partition " + adminTopic + "-0 is completed."
				if done = strings.Contains(out, completed); done {
					return completed, true
				}
				return lastLine(out), false
			}), "kafka-reassign-partitions", "--verify", "--reassignment-json-file", plan)
		if done || time.Now().After(deadline) || ctx.Err() != nil {
			return
		}
		e.outcomes = e.outcomes[:n] // in progress: only the final run is recorded
		time.Sleep(time.Second)
	}
}

func joinIDs(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ",")
}

func (e *exp) finalSteps(ctx context.Context) {
	e.step(ctx, "--delete", "exit 0", exitedZero(func(string) (string, bool) { return "exit 0", true }),
		"kafka-topics", "--delete", "--topic", adminTopic)
	e.step(ctx, "--list after --delete", "exit 0; tools-failover listed, tools gone",
		exitedZero(func(out string) (string, bool) {
			lines := strings.Fields(out)
			return fmt.Sprintf("listed %v", lines), slices.Contains(lines, failoverTopic) && !slices.Contains(lines, adminTopic)
		}), "kafka-topics", "--list")
	e.step(ctx, "describe --replication at the end", "exit 0; three rows, one Leader and two Followers", replicationCheck,
		"kafka-metadata-quorum", "describe", "--replication")
}
