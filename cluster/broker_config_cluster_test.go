package cluster_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka: KIP-226 in a KRaft cluster. A change goes through the
// controller as ConfigRecords; the cluster default reaches every node,
// a node's own setting only that node, and each applies it live: a
// record above node 2's lowered message.max.bytes is refused on the
// partitions node 2 leads and accepted elsewhere. The receiving node's
// checks refuse what is not dynamic before anything is forwarded.
func TestThreeNodesDynamicBrokerConfig(t *testing.T) {
	tc := startQuorumCluster(t, 3, nil)
	tc.waitBrokers(3)
	cl := client(t, tc.addrs[0], kgo.SeedBrokers(tc.bootstrap()...), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic("big"), kgo.RequiredAcks(kgo.AllISRAcks()))
	adm := kadm.NewClient(cl)

	mustSetBroker(t, adm, map[string]*string{"log.retention.bytes": sp("5000")})
	for id := int32(1); id <= 3; id++ {
		waitWithin(t, 10*time.Second, "the cluster default on every node", func() bool {
			c, _ := brokerConfig(t, adm, "log.retention.bytes", id)
			return c.MaybeValue() == "5000" && c.Source == kmsg.ConfigSourceDynamicDefaultBrokerConfig
		})
	}
	mustSetBroker(t, adm, map[string]*string{"message.max.bytes": sp("2000")}, 2)
	waitWithin(t, 10*time.Second, "node 2's own setting", func() bool {
		c, _ := brokerConfig(t, adm, "message.max.bytes", 2)
		return c.MaybeValue() == "2000" && c.Source == kmsg.ConfigSourceDynamicBrokerConfig
	})
	if c, _ := brokerConfig(t, adm, "message.max.bytes", 3); c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("node 3's message.max.bytes from %v, want DEFAULT_CONFIG", c.Source)
	}
	if err, msg := setBroker(t, adm, map[string]*string{"num.partitions": sp("2")}); !errors.Is(err, kerr.InvalidRequest) ||
		!strings.Contains(msg, "Cannot update these configs dynamically: Set(num.partitions)") {
		t.Errorf("num.partitions at the cluster default: %v %q", err, msg)
	}

	if r, err := adm.CreateTopic(ctx(t), 3, 3, nil, "big"); err != nil || r.Err != nil {
		t.Fatalf("create topic: %v %v", err, r.Err)
	}
	var leaders map[int32]int32
	waitWithin(t, 10*time.Second, "leaders for every partition", func() bool {
		td, err := adm.ListTopics(ctx(t), "big")
		if err != nil {
			return false
		}
		leaders = map[int32]int32{}
		for _, p := range td["big"].Partitions {
			if p.Leader >= 0 {
				leaders[p.Partition] = p.Leader
			}
		}
		return len(leaders) == 3
	})
	refused := 0
	for p, leader := range leaders {
		err := cl.ProduceSync(ctx(t), &kgo.Record{Partition: p, Value: make([]byte, 4000)}).FirstErr()
		switch {
		case leader == 2 && !errors.Is(err, kerr.MessageTooLarge):
			t.Errorf("partition %d led by node 2: %v, want MESSAGE_TOO_LARGE", p, err)
		case leader != 2 && err != nil:
			t.Errorf("partition %d led by node %d: %v", p, leader, err)
		case leader == 2:
			refused++
		}
	}
	t.Logf("leaders %v; %d produce(s) refused by node 2", leaders, refused)
}
