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
