package migrate

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
	"github.com/varve/varve/metadata"
)

// startNode starts a Varve node on dir as Kafka's node nodeID.
func startNode(t *testing.T, dir string, nodeID int32) string {
	t.Helper()
	cfg, err := config.Parse(map[string]string{"log.dirs": dir, "node.id": itoa(nodeID),
		"listeners": "PLAINTEXT://127.0.0.1:0", "varve.metrics.listener": ""})
	if err != nil {
		t.Fatal(err)
	}
	b, err := cluster.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b.Shutdown(ctx)
	})
	return b.Addr().String()
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

// Kafka: DescribeConfigs reports a topic's overrides as
// DYNAMIC_TOPIC_CONFIG; InitProducerId hands out ids from a block above
// every one handed out before (ProducerIdControlManager). After the
// migration the node serves the topic with Kafka's id and configs, and
// its first producer id is above Kafka's blocks.
func TestMigratedNodeServesKafkaMetadata(t *testing.T) {
	dir := kafkaLogDir(t, baseRecords())
	p, err := Build(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(); err != nil {
		t.Fatal(err)
	}
	addr := startNode(t, dir, p.NodeID)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(cl)
	topics, err := adm.ListTopics(ctx, "compacted")
	if err != nil || metadata.TopicID(topics["compacted"].ID) != topicID || len(topics["compacted"].Partitions) != 1 {
		t.Fatalf("topic: %+v %v", topics["compacted"], err)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, "compacted")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On("compacted", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rc.Configs {
		if c.Key == "cleanup.policy" && (c.MaybeValue() != "compact" || c.Source != kmsg.ConfigSourceDynamicTopicConfig) {
			t.Errorf("cleanup.policy %q from %v, want compact from DYNAMIC_TOPIC_CONFIG", c.MaybeValue(), c.Source)
		}
	}
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionTimeoutMillis = -1
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v %v", err, resp)
	}
	if resp.ProducerID < 5000 {
		t.Errorf("producer id %d, inside Kafka's blocks (below 5000)", resp.ProducerID)
	}
}

// Kafka: KIP-226. A dynamic cluster-default broker config is reported
// with source DYNAMIC_DEFAULT_BROKER_CONFIG and applies to the node; a
// client quota (KIP-546) is described as set. Both came from Kafka's
// metadata log, and the migrated node serves them.
func TestMigratedNodeServesBrokerConfigsAndQuotas(t *testing.T) {
	dir := kafkaLogDir(t, baseRecords(), []any{
		metadata.ConfigRecord{ResourceType: metadata.ConfigResourceBroker, Name: "log.retention.ms", Value: strp("3600000")},
		metadata.ClientQuotaRecord{Entity: []metadata.QuotaEntityData{{Type: "client-id", Name: ptr("app")}}, Key: "producer_byte_rate", Value: 1048576},
	})
	p, err := Build(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(startNode(t, dir, p.NodeID)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(cl)
	rcs, err := adm.DescribeBrokerConfigs(ctx, p.NodeID)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, rc := range rcs {
		for _, c := range rc.Configs {
			if c.Key == "log.retention.ms" {
				found = true
				if c.MaybeValue() != "3600000" || c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
					t.Errorf("log.retention.ms %q from %v, want 3600000 from DYNAMIC_DEFAULT_BROKER_CONFIG", c.MaybeValue(), c.Source)
				}
			}
		}
	}
	if !found {
		t.Errorf("log.retention.ms not described: %+v", rcs)
	}
	quotas, err := adm.DescribeClientQuotas(ctx, true, []kadm.DescribeClientQuotaComponent{{Type: "client-id", MatchName: ptr("app")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(quotas) != 1 || len(quotas[0].Values) != 1 || quotas[0].Values[0].Key != "producer_byte_rate" || quotas[0].Values[0].Value != 1048576 {
		t.Errorf("client quotas %+v", quotas)
	}
}
