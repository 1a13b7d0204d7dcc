package cluster_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// producerPerformance runs Kafka's
// org.apache.kafka.tools.ProducerPerformance (kafka-producer-perf-test)
// with a transactional id against bootstrap: n records of 100 bytes, a
// transaction every durationMs, acks=all. It fails the test unless the
// tool exits 0, and returns its output.
func producerPerformance(t *testing.T, libs, bootstrap, topic, id string, n, durationMs int) string {
	t.Helper()
	cx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cx, "java", "-Xmx256m", "-cp", filepath.Join(libs, "*"),
		"org.apache.kafka.tools.ProducerPerformance", "--bootstrap-server", bootstrap, "--topic", topic,
		"--num-records", strconv.Itoa(n), "--record-size", "100", "--throughput", "-1",
		"--transactional-id", id, "--transaction-duration-ms", strconv.Itoa(durationMs),
		"--command-property", "acks=all", "--command-property", "linger.ms=5")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ProducerPerformance: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), strconv.Itoa(n)+" records sent") {
		t.Fatalf("ProducerPerformance did not report %d records sent:\n%s", n, out)
	}
	return string(out)
}

// checkJavaTransactions reads topic back read_committed (every record
// the tool sent, each once: ProducerPerformance commits its last
// transaction before it exits) and checks that the producer ran
// transaction version 2: its epoch was bumped by its EndTxn requests.
func checkJavaTransactions(t *testing.T, addr, topic, id string, n int) {
	t.Helper()
	if got := readAll(t, addr, topic, true, n); len(got) != n {
		t.Fatalf("read_committed read %d records, want %d", len(got), n)
	}
	if d := describeOne(t, client(t, addr), id); d.ProducerEpoch < 2 {
		t.Fatalf("%s at epoch %d after its transactions: Kafka's producer did not run transaction version 2", id, d.ProducerEpoch)
	}
}

// Kafka: kafka-producer-perf-test with --transactional-id (issue's
// exactly-once list). Kafka 4.4's Java producer on a cluster at
// transaction.version 2 runs KIP-890 part 2 (Produce v12 adds the
// partition, EndTxn v5 bumps the epoch); the tool exits 0 and a
// read_committed reader counts exactly the records it sent.
func TestJavaProducerPerformanceTransactional(t *testing.T) {
	libs := kafkaLibs(t)
	b := startBroker(t, t.TempDir(), map[string]string{"transaction.state.log.num.partitions": "4"})
	createTopic(t, b.addr, "perf-txn", 3, nil)
	const n = 5000
	producerPerformance(t, libs, b.addr, "perf-txn", "perf-tx", n, 100)
	checkJavaTransactions(t, b.addr, "perf-txn", "perf-tx", n)
}

// The same on three nodes, __transaction_state and the topic with
// replication factor 3: the coordinator, the partition leaders adding
// partitions for the produces (AddPartitionsToTxn v5 between nodes) and
// the markers are spread over the nodes.
func TestJavaProducerPerformanceTransactionalThreeNodes(t *testing.T) {
	libs := kafkaLibs(t)
	qc := startQuorumCluster(t, 3, txnClusterProps("3"))
	qc.waitBrokers(3)
	cl := client(t, qc.addrs[0])
	createTopicRF(t, cl, "perf-txn3", 3, 3)
	initTxnProducer(t, cl, "warm-up") // __transaction_state created and its coordinators loaded
	const n = 5000
	producerPerformance(t, libs, strings.Join(qc.bootstrap(), ","), "perf-txn3", "perf-tx3", n, 100)
	checkJavaTransactions(t, qc.addrs[0], "perf-txn3", "perf-tx3", n)
}
