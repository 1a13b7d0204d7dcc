package main

import (
	"strings"
	"testing"
)

// Kafka: kafka-topics --create/--list/--describe/--delete and
// kafka-configs --alter (IncrementalAlterConfigs, KIP-339): overrides are
// set and deleted one by one, and describe shows only overrides unless
// asked for all configs.
func TestTopicLifecycle(t *testing.T) {
	b := startCluster(t)
	out := mustVarve(t, "", "topic", "create", "orders", "-b", b, "--partitions", "3",
		"--replication-factor", "1", "--config", "retention.ms=1000")
	if out != "Created topic orders.\n" {
		t.Fatalf("create printed %q", out)
	}
	if _, _, err := varve(t, "", "topic", "create", "orders", "-b", b); err == nil || !strings.Contains(err.Error(), "TOPIC_ALREADY_EXISTS") {
		t.Fatalf("creating it again: %v, want TOPIC_ALREADY_EXISTS", err)
	}
	mustVarve(t, "", "topic", "create", "orders", "-b", b, "--if-not-exists")
	mustVarve(t, "", "topic", "create", "audit", "-b", b, "-p", "1")
	if out := mustVarve(t, "", "topic", "list", "-b", b); out != "audit\norders\n" {
		t.Fatalf("list printed %q", out)
	}
	mustVarve(t, "a\nb\nc\n", "produce", "orders", "-b", b, "--partition", "2")

	desc := mustVarve(t, "", "topic", "describe", "orders", "-b", b)
	lines := strings.Split(strings.TrimSuffix(desc, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("describe printed %d lines, want a topic line and 3 partition lines:\n%s", len(lines), desc)
	}
	for _, want := range []string{"Topic: orders\t", "PartitionCount: 3\t", "ReplicationFactor: 1\t", "Configs: retention.ms=1000\n"} {
		if !strings.Contains(lines[0]+"\n", want) {
			t.Errorf("topic line %q lacks %q", lines[0], want)
		}
	}
	if !strings.HasPrefix(lines[3], "\tTopic: orders\tPartition: 2\tLeader: ") || !strings.HasSuffix(lines[3], "\tEarliest: 0\tLatest: 3") {
		t.Errorf("partition 2 line %q, want 3 records", lines[3])
	}
	// kfake's single broker is node 0.
	if want := "\tTopic: orders\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0\tEarliest: 0\tLatest: 0"; lines[1] != want {
		t.Errorf("partition 0 line %q, want %q", lines[1], want)
	}

	out = mustVarve(t, "", "topic", "alter-config", "orders", "-b", b, "--set", "retention.ms=2000", "--set", "cleanup.policy=compact")
	if out != "Altered configs of topic orders.\n" {
		t.Fatalf("alter-config printed %q", out)
	}
	if got := topicConfigs(t, b, "orders"); got != "cleanup.policy=compact,retention.ms=2000" {
		t.Errorf("after --set: configs %q", got)
	}
	mustVarve(t, "", "topic", "alter-config", "orders", "-b", b, "--delete", "retention.ms")
	if got := topicConfigs(t, b, "orders"); got != "cleanup.policy=compact" {
		t.Errorf("after --delete: configs %q", got)
	}
	all := mustVarve(t, "", "topic", "describe", "orders", "-b", b, "--all")
	if !strings.Contains(all, "cleanup.policy=compact") || !strings.Contains(all, "retention.ms=") || !strings.Contains(all, "segment.bytes=") {
		t.Errorf("describe --all lacks defaults:\n%s", all)
	}
	if _, _, err := varve(t, "", "topic", "alter-config", "orders", "-b", b); err == nil {
		t.Error("alter-config with nothing to do succeeded")
	}

	if out := mustVarve(t, "", "topic", "delete", "orders", "-b", b); out != "Deleted topic orders.\n" {
		t.Fatalf("delete printed %q", out)
	}
	if out := mustVarve(t, "", "topic", "list", "-b", b); out != "audit\n" {
		t.Fatalf("list after delete printed %q", out)
	}
	if _, _, err := varve(t, "", "topic", "delete", "orders", "-b", b); err == nil {
		t.Error("deleting a missing topic succeeded")
	}
	mustVarve(t, "", "topic", "delete", "orders", "-b", b, "--if-exists")
	if _, _, err := varve(t, "", "topic", "describe", "orders", "-b", b); err == nil {
		t.Error("describing a missing topic succeeded")
	}
}

// topicConfigs returns the Configs: field of describe's topic line.
func topicConfigs(t *testing.T, brokers, topic string) string {
	t.Helper()
	out := mustVarve(t, "", "topic", "describe", topic, "-b", brokers)
	first, _, _ := strings.Cut(out, "\n")
	_, cfg, ok := strings.Cut(first, "Configs: ")
	if !ok {
		t.Fatalf("no Configs in %q", first)
	}
	return cfg
}

// A config given without '=' is refused before anything is sent.
func TestTopicCreateBadConfig(t *testing.T) {
	_, _, err := varve(t, "", "topic", "create", "x", "-b", "127.0.0.1:1", "--config", "retention.ms")
	if err == nil || !strings.Contains(err.Error(), "key=value") {
		t.Fatalf("err %v", err)
	}
}
