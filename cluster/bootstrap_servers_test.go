package cluster_test

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
)

// Kafka: KIP-853's controller.quorum.bootstrap.servers. A broker-only
// node given one controller's address and no controller.quorum.voters
// learns the voters from it (DescribeQuorum v2), joins as a raft
// learner, registers and serves a topic with a replica on it. A
// controller with the bootstrap servers alone is refused: the dynamic
// quorum is not supported.
func TestBrokerFindsVotersThroughBootstrapServers(t *testing.T) {
	tc := startQuorumCluster(t, 3, nil)
	tc.waitBrokers(3)
	_, ctrl2, _ := strings.Cut(tc.props[1]["listeners"], "CONTROLLER://")
	b4 := tc.addBrokerOnly(func(props map[string]string) {
		delete(props, "controller.quorum.voters")
		props["controller.quorum.bootstrap.servers"] = ctrl2
	})
	if tc.nodes[b4] == nil {
		t.Fatal("the broker with bootstrap servers alone did not start")
	}
	tc.waitBrokersAt(tc.addrs[b4], 1, 2, 3, 4)

	adm := kadm.NewClient(client(t, tc.addrs[b4]))
	if resp, err := adm.CreateTopic(ctx(t), 4, 3, nil, "wide"); err != nil || resp.Err != nil {
		t.Fatalf("create through the new broker: %v %v", err, resp.Err)
	}
	waitWithin(t, 10*time.Second, "a replica on node 4", func() bool {
		td, err := adm.ListTopics(ctx(t), "wide")
		if err != nil {
			return false
		}
		for _, p := range td["wide"].Partitions {
			for _, r := range p.Replicas {
				if r == 4 {
					return true
				}
			}
		}
		return false
	})
	prod := client(t, tc.addrs[b4], kgo.DefaultProduceTopic("wide"))
	for i := range 20 {
		if err := prod.ProduceSync(ctx(t), kgo.StringRecord(string(rune('a'+i)))).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	if got := len(consumeN(t, tc.addrs[b4], "wide", 20)); got != 20 {
		t.Errorf("consumed %d records, want 20", got)
	}

	// A controller needs controller.quorum.voters.
	props := map[string]string{}
	for k, v := range tc.props[0] {
		props[k] = v
	}
	delete(props, "controller.quorum.voters")
	props["controller.quorum.bootstrap.servers"] = ctrl2
	props["log.dirs"] = t.TempDir()
	cfg, err := config.Parse(props)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := cluster.New(cfg, nil); err == nil || !strings.Contains(err.Error(), "KIP-853") {
		if b != nil {
			b.Kill()
		}
		t.Errorf("a controller with bootstrap servers alone: %v, want a refusal naming KIP-853", err)
	}
}
