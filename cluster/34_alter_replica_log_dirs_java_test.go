package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/segment"
)

// reassignTool runs Kafka's kafka-reassign-partitions (the Java
// ReassignPartitionsCommand of kafka-tools) with args and returns its
// output.
func reassignTool(t *testing.T, libs, addr string, args ...string) (string, error) {
	t.Helper()
	return kafkaTool(t, libs, "org.apache.kafka.tools.reassign.ReassignPartitionsCommand", addr, args...)
}

// kafkaTool runs one of Kafka's command-line tools (its main class).
func kafkaTool(t *testing.T, libs, class, addr string, args ...string) (string, error) {
	t.Helper()
	cx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cx, "java", append([]string{"-Xmx256m", "-cp", filepath.Join(libs, "*"),
		class, "--bootstrap-server", addr}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Kafka: kafka-reassign-partitions --execute with a log_dirs entry sends
// AlterReplicaLogDirs to the replica's broker (after
// DescribeLogDirs), then the reassignment; while the copy runs
// kafka-log-dirs --describe lists the future replica and --verify says
// the move is in progress; once it is done --verify reports it complete.
func TestKafkaReassignPartitionsMovesLogDir(t *testing.T) {
	libs := kafkaLibs(t)
	b, d1, d2 := twoDirBroker(t)
	createTopic(t, b.addr, "tool", 1, nil)
	home := describeReplicas(t, b.addr, "tool", 0)
	if len(home) != 1 {
		t.Fatalf("replicas %+v", home)
	}
	dst := d2
	if home[0].dir == d2 {
		dst = d1
	}
	prod := client(t, b.addr, kgo.DefaultProduceTopic("tool"))
	var recs []*kgo.Record
	for i := 0; i < 500; i++ {
		recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, "tool-%d", i)})
	}
	produceSync(t, prod, recs...)

	plan := filepath.Join(t.TempDir(), "reassign.json")
	spec := fmt.Sprintf(`{"version":1,"partitions":[{"topic":"tool","partition":0,"replicas":[1],"log_dirs":[%q]}]}`, dst)
	if err := os.WriteFile(plan, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	held, release := make(chan struct{}), make(chan struct{})
	b.LogDirs().SetMoveHook(func(_ segment.TopicPartition, s logdir.MoveStep) bool {
		if s == logdir.StepCopied {
			close(held)
			<-release
		}
		return true
	})
	out, err := reassignTool(t, libs, b.addr, "--reassignment-json-file", plan, "--execute")
	if err != nil || !strings.Contains(out, "Successfully started partition reassignment") {
		close(release)
		t.Fatalf("--execute: %v\n%s", err, out)
	}
	<-held
	checkToolsSeeFuture(t, libs, b.addr, plan, dst)
	close(release)
	var verify string
	waitFor(t, 60*time.Second, "--verify to report the move complete", func() bool {
		verify, err = reassignTool(t, libs, b.addr, "--reassignment-json-file", plan, "--verify")
		return err == nil && strings.Contains(verify, "Reassignment of replica tool-0-1 completed successfully")
	})
	if !strings.Contains(verify, "Reassignment of partition tool-0 is completed") {
		t.Errorf("--verify:\n%s", verify)
	}
	if r := describeReplicas(t, b.addr, "tool", 0); len(r) != 1 || r[0].dir != dst || r[0].future {
		t.Fatalf("after the tool's move: %+v, want %s", r, dst)
	}
	got := consumeN(t, b.addr, "tool", len(recs))
	for i, r := range got[:len(recs)] {
		if string(r.Value) != string(recs[i].Value) || r.Offset != int64(i) {
			t.Fatalf("record %d: %q at %d", i, r.Value, r.Offset)
		}
	}
}

// checkToolsSeeFuture runs kafka-log-dirs --describe and
// kafka-reassign-partitions --verify while a move to dst is held after
// its copy.
func checkToolsSeeFuture(t *testing.T, libs, addr, plan, dst string) {
	t.Helper()
	out, err := kafkaTool(t, libs, "org.apache.kafka.tools.LogDirsCommand", addr, "--describe", "--topic-list", "tool")
	if err != nil || !toolListsFuture(out, dst) {
		t.Errorf("kafka-log-dirs during the move: %v, want a future replica of tool-0 in %s\n%s", err, dst, out)
	}
	out, err = reassignTool(t, libs, addr, "--reassignment-json-file", plan, "--verify")
	if err != nil || !strings.Contains(out, "Reassignment of replica tool-0-1 is still in progress") {
		t.Errorf("--verify during the move: %v\n%s", err, out)
	}
}

// toolListsFuture reads kafka-log-dirs' JSON for a future replica of
// tool-0 in dir.
func toolListsFuture(out, dir string) bool {
	var doc struct {
		Brokers []struct {
			LogDirs []struct {
				LogDir     string `json:"logDir"`
				Partitions []struct {
					Partition string `json:"partition"`
					IsFuture  bool   `json:"isFuture"`
				} `json:"partitions"`
			} `json:"logDirs"`
		} `json:"brokers"`
	}
	i := strings.Index(out, `{"brokers"`)
	if i < 0 || json.Unmarshal([]byte(strings.TrimSpace(out[i:])), &doc) != nil {
		return false
	}
	for _, b := range doc.Brokers {
		for _, d := range b.LogDirs {
			for _, p := range d.Partitions {
				if d.LogDir == dir && p.Partition == "tool-0" && p.IsFuture {
					return true
				}
			}
		}
	}
	return false
}
