package cluster_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// reassignTool runs Kafka's kafka-reassign-partitions (the Java
// ReassignPartitionsCommand of kafka-tools) with args and returns its
// output.
func reassignTool(t *testing.T, libs, addr string, args ...string) (string, error) {
	t.Helper()
	cx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cx, "java", append([]string{"-Xmx256m", "-cp", filepath.Join(libs, "*"),
		"org.apache.kafka.tools.reassign.ReassignPartitionsCommand", "--bootstrap-server", addr}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Kafka: kafka-reassign-partitions --execute with a log_dirs entry sends
// AlterReplicaLogDirs to the replica's broker (after
// DescribeLogDirs), then the reassignment; --verify reads
// DescribeLogDirs until the replica is in the directory asked for and
// no future replica is left, and reports the move complete.
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
	json := fmt.Sprintf(`{"version":1,"partitions":[{"topic":"tool","partition":0,"replicas":[1],"log_dirs":[%q]}]}`, dst)
	if err := os.WriteFile(plan, []byte(json), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := reassignTool(t, libs, b.addr, "--reassignment-json-file", plan, "--execute")
	if err != nil || !strings.Contains(out, "Successfully started partition reassignment") {
		t.Fatalf("--execute: %v\n%s", err, out)
	}
	var verify string
	waitFor(t, 60*time.Second, "--verify to report the move complete", func() bool {
		verify, err = reassignTool(t, libs, b.addr, "--reassignment-json-file", plan, "--verify")
		return err == nil && strings.Contains(verify, "Reassignment of replica tool-0-1 completed successfully")
	})
	t.Logf("--verify:\n%s", verify)
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
