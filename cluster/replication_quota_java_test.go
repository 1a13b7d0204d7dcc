package cluster_test

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Kafka: KIP-73 as kafka-reassign-partitions uses it. --execute
// --throttle N sets leader.replication.throttled.rate and
// follower.replication.throttled.rate on the brokers of the move and
// the topic's leader.replication.throttled.replicas (the current
// replicas) and follower.replication.throttled.replicas (the one being
// added); the new replica then copies no faster than the throttle
// allows; once it is done, --verify reports the reassignment complete
// and removes every throttle setting.
func TestKafkaReassignPartitionsThrottle(t *testing.T) {
	libs := kafkaLibs(t)
	tc := startQuorumCluster(t, 3, map[string]string{"min.insync.replicas": "1", "default.replication.factor": "1"})
	boot := tc.bootstrap()
	cl := client(t, boot[0], kgo.SeedBrokers(boot...))
	if r := createAssigned(t, cl, "thr", -1, -1, []int32{1}); r.ErrorCode != 0 {
		t.Fatalf("create thr: code %d", r.ErrorCode)
	}
	prod := client(t, boot[0], kgo.SeedBrokers(boot...), kgo.DefaultProduceTopic("thr"), kgo.RequiredAcks(kgo.LeaderAck()),
		kgo.DisableIdempotentWrite(), kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerBatchCompression(kgo.NoCompression()))
	var recs []*kgo.Record
	for range 192 { // 6 MiB, uncompressed
		v := make([]byte, 32<<10)
		rand.Read(v)
		recs = append(recs, &kgo.Record{Value: v})
	}
	produceSync(t, prod, recs...)
	const throttle = 1_000_000
	size := 192 * (32 << 10)

	plan := filepath.Join(t.TempDir(), "reassign.json")
	if err := os.WriteFile(plan, []byte(`{"version":1,"partitions":[{"topic":"thr","partition":0,"replicas":[1,2]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	copied := watchCopy(t, tc, "thr", int64(len(recs)))
	out, err := reassignTool(t, libs, boot[0], "--reassignment-json-file", plan, "--execute", "--throttle", fmt.Sprint(throttle))
	if err != nil || !strings.Contains(out, "Successfully started partition reassignment") ||
		!strings.Contains(out, fmt.Sprintf("The inter-broker throttle limit was set to %d B/s", throttle)) {
		t.Fatalf("--execute --throttle: %v\n%s", err, out)
	}
	adm := kadm.NewClient(cl)
	checkThrottleConfigs(t, adm, fmt.Sprint(throttle), "0:1", "0:2")
	var took time.Duration
	select {
	case took = <-copied:
	case <-time.After(90 * time.Second):
		t.Fatal("broker 2 did not copy thr-0 in 90 s")
	}
	expected := time.Duration(float64(size) / throttle * float64(time.Second))
	t.Logf("%d bytes copied under a %d B/s throttle in %v (size/rate %v)", size, throttle, took, expected)
	if took < expected/3 {
		t.Errorf("the new replica copied thr-0 in %v: faster than a third of size/rate (%v) under the throttle", took, expected)
	}

	var verify string
	waitFor(t, 90*time.Second, "--verify to report the reassignment complete", func() bool {
		verify, err = reassignTool(t, libs, boot[0], "--reassignment-json-file", plan, "--verify")
		return err == nil && strings.Contains(verify, "Reassignment of partition thr-0 is completed")
	})
	if !strings.Contains(verify, "Clearing broker-level throttles on brokers") || !strings.Contains(verify, "Clearing topic-level throttles on topic thr") {
		t.Errorf("--verify once complete:\n%s", verify)
	}
	checkThrottleConfigs(t, adm, "9223372036854775807", "", "")
}

// watchCopy reports how long broker 2's replica of topic-0 takes from
// its first record to its end offset reaching end. It stops watching
// when the test ends, before the cluster stops.
func watchCopy(t *testing.T, tc *quorumCluster, topic string, end int64) <-chan time.Duration {
	out, stop, done := make(chan time.Duration, 1), make(chan struct{}), make(chan struct{})
	b := tc.nodes[1]
	t.Cleanup(func() { close(stop); <-done })
	go func() {
		defer close(done)
		var first time.Time
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			p := b.PartitionReplica(topic, 0)
			if p == nil || p.EndOffset() == 0 {
				continue
			}
			if first.IsZero() {
				first = time.Now()
			}
			if p.EndOffset() == end {
				out <- time.Since(first)
				return
			}
		}
	}()
	return out
}

// checkThrottleConfigs checks the rates of brokers 1 and 2 and thr's
// throttled replica lists.
func checkThrottleConfigs(t *testing.T, adm *kadm.Client, rate, leaderList, followerList string) {
	t.Helper()
	for _, id := range []int32{1, 2} {
		for _, name := range []string{"leader.replication.throttled.rate", "follower.replication.throttled.rate"} {
			if c, _ := brokerConfig(t, adm, name, id); c.Value == nil || *c.Value != rate {
				t.Errorf("broker %d %s = %v, want %s", id, name, c.Value, rate)
			}
		}
	}
	rcs, err := adm.DescribeTopicConfigs(ctx(t), "thr")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On("thr", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"leader.replication.throttled.replicas": leaderList, "follower.replication.throttled.replicas": followerList}
	for _, c := range rc.Configs {
		if w, ok := want[c.Key]; ok && c.MaybeValue() != w {
			t.Errorf("thr %s = %q, want %q", c.Key, c.MaybeValue(), w)
		}
	}
}
