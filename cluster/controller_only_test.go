package cluster_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Kafka: dedicated controllers (process.roles=controller) and
// broker-only nodes. Three controllers form the quorum and serve no
// client; two brokers follow the log as learners, hold the partitions
// and take the clients' requests. Topics are created and produced to;
// the active controller is killed and another takes over, and the
// cluster carries on: another topic is created, every record is read
// back once.
func TestDedicatedControllers(t *testing.T) {
	tc := startQuorumClusterWith(t, 3, map[string]string{"min.insync.replicas": "2", "default.replication.factor": "2",
		"offsets.topic.replication.factor": "2"},
		func(i int, props map[string]string) {
			props["process.roles"] = "controller"
			_, props["listeners"], _ = strings.Cut(props["listeners"], ",") // the controller listener alone
		})
	for i, b := range tc.nodes {
		if b == nil || b.Addr() != nil {
			t.Fatalf("controller %d: started %v, client listener %v", i+1, b != nil, b.Addr())
		}
	}
	b4, b5 := tc.addBrokerOnly(), tc.addBrokerOnly()
	brokers := []string{tc.addrs[b4], tc.addrs[b5]}
	tc.waitBrokersAt(brokers[0], 4, 5)

	adm := kadm.NewClient(client(t, brokers[0]))
	if resp, err := adm.CreateTopic(ctx(t), 2, 2, nil, "first"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	prod := client(t, brokers[1], kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(1000), kgo.RetryTimeout(60*time.Second))
	produce := func(topic string, from, to int) {
		for i := from; i < to; i++ {
			if err := prod.ProduceSync(ctx(t), &kgo.Record{Topic: topic, Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
				t.Fatalf("%s record %d: %v", topic, i, err)
			}
		}
	}
	produce("first", 0, 100)

	active := -1
	for i := range 3 {
		if tc.nodes[i].IsActiveController() {
			active = i
		}
	}
	if active < 0 {
		t.Fatal("no controller is active")
	}
	tc.kill(active)
	waitWithin(t, 15*time.Second, "another active controller", func() bool {
		for i := range 3 {
			if tc.nodes[i] != nil && tc.nodes[i].IsActiveController() {
				return true
			}
		}
		return false
	})
	produce("first", 100, 200)
	adm = kadm.NewClient(client(t, brokers[1]))
	if resp, err := adm.CreateTopic(ctx(t), 1, 2, nil, "second"); err != nil || resp.Err != nil {
		t.Fatalf("create after the controller's loss: %v %v", err, resp.Err)
	}
	produce("second", 0, 50)
	for topic, n := range map[string]int{"first": 200, "second": 50} {
		seen := map[string]int{}
		for _, r := range consumeN(t, brokers[0], topic, n) {
			seen[string(r.Value)]++
		}
		for i := range n {
			if seen[fmt.Sprint(i)] != 1 {
				t.Errorf("%s record %d seen %d times", topic, i, seen[fmt.Sprint(i)])
			}
		}
	}
	// No controller is a broker, and none holds a replica.
	m, err := adm.BrokerMetadata(ctx(t))
	if err != nil || len(m.Brokers) != 2 {
		t.Errorf("brokers %v %v, want 4 and 5 alone", m.Brokers, err)
	}
}

// waitBrokersAt waits until the broker at addr lists exactly ids.
func (tc *quorumCluster) waitBrokersAt(addr string, ids ...int32) {
	t := tc.t
	t.Helper()
	waitWithin(t, 20*time.Second, fmt.Sprintf("brokers %v", ids), func() bool {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		m, err := kadm.NewClient(cl).BrokerMetadata(ctx(t))
		if err != nil || len(m.Brokers) != len(ids) {
			return false
		}
		for i, b := range m.Brokers.NodeIDs() {
			if b != ids[i] {
				return false
			}
		}
		return true
	})
}
