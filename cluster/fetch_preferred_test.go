package cluster_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/config"
)

// rackHook counts the record batches a client read from each broker.
type rackHook struct {
	mu     sync.Mutex
	byNode map[int32]int
}

func (h *rackHook) OnFetchBatchRead(m kgo.BrokerMetadata, _ string, _ int32, _ kgo.FetchBatchMetrics) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.byNode[m.NodeID]++
}

// Kafka: KIP-392. With replica.selector.class set to the rack-aware
// selector and broker.rack per node, the leader answers a consumer in a
// follower's rack with that follower as PreferredReadReplica and no
// records; the follower serves the consumer up to its high watermark;
// franz-go with kgo.Rack then reads from the follower.
func TestFetchFromClosestReplica(t *testing.T) {
	tc := startQuorumClusterWith(t, 3, map[string]string{"replica.selector.class": config.RackAwareReplicaSelector},
		func(i int, props map[string]string) { props["broker.rack"] = fmt.Sprintf("r%d", i+1) })
	tc.waitBrokers(3)
	cl := client(t, tc.bootstrap()[0], kgo.RequiredAcks(kgo.AllISRAcks()))
	createTopicRF(t, cl, "near", 1, 3)
	var recs []*kgo.Record
	for i := range 10 {
		recs = append(recs, &kgo.Record{Topic: "near", Value: []byte(fmt.Sprint(i))})
	}
	produceSync(t, cl, recs...)
	id := topicID(t, cl, "near")
	leader := leaderOf(t, cl, "near")
	follower := leader%3 + 1
	fetch := func(node int32, rack string) kmsg.FetchResponseTopicPartition {
		t.Helper()
		req := sessionFetch(id, 0, -1, 0)
		req.Rack = rack
		kresp, err := cl.Broker(int(node)).Request(ctx(t), req)
		if err != nil {
			t.Fatal(err)
		}
		return kresp.(*kmsg.FetchResponse).Topics[0].Partitions[0]
	}
	p := fetch(leader, fmt.Sprintf("r%d", follower))
	if p.ErrorCode != 0 || p.PreferredReadReplica != follower || len(p.RecordBatches) != 0 || p.HighWatermark != 10 {
		t.Fatalf("leader asked from rack r%d: error %d preferred %d, %d bytes, hw %d", follower, p.ErrorCode, p.PreferredReadReplica, len(p.RecordBatches), p.HighWatermark)
	}
	if p := fetch(leader, fmt.Sprintf("r%d", leader)); p.PreferredReadReplica != -1 || len(p.RecordBatches) == 0 {
		t.Fatalf("leader asked from its own rack: preferred %d, %d bytes", p.PreferredReadReplica, len(p.RecordBatches))
	}
	if p := fetch(leader, "elsewhere"); p.PreferredReadReplica != -1 || len(p.RecordBatches) == 0 {
		t.Fatalf("leader asked from a rack without replicas: preferred %d", p.PreferredReadReplica)
	}
	waitWithin(t, 10*time.Second, "the follower's high watermark", func() bool {
		p := fetch(follower, "")
		return p.ErrorCode == 0 && p.HighWatermark == 10 && len(p.RecordBatches) > 0
	})
	hook := &rackHook{byNode: map[int32]int{}}
	cons := client(t, tc.bootstrap()[0], kgo.ConsumeTopics("near"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.Rack(fmt.Sprintf("r%d", follower)), kgo.WithHooks(hook))
	got := 0
	cx := ctx(t)
	for got < 10 && cx.Err() == nil {
		fs := cons.PollFetches(cx)
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		got += len(fs.Records())
	}
	hook.mu.Lock()
	defer hook.mu.Unlock()
	if got != 10 || hook.byNode[follower] == 0 || hook.byNode[leader] != 0 {
		t.Fatalf("consumed %d records; batches read by node %v, want all from follower %d", got, hook.byNode, follower)
	}
}

func createTopicRF(t *testing.T, cl *kgo.Client, topic string, partitions int32, rf int16) {
	t.Helper()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx(t), partitions, rf, nil, topic)
	if err != nil || resp.Err != nil {
		t.Fatalf("create %s: %v %v", topic, err, resp.Err)
	}
}

// leaderOf is partition 0's leader once every replica is in its ISR.
func leaderOf(t *testing.T, cl *kgo.Client, topic string) int32 {
	t.Helper()
	var leader int32 = -1
	waitWithin(t, 15*time.Second, "a leader with a full ISR", func() bool {
		m, err := kadm.NewClient(cl).Metadata(ctx(t), topic)
		if err != nil {
			return false
		}
		p := m.Topics[topic].Partitions[0]
		leader = p.Leader
		return p.Leader >= 0 && len(p.ISR) == 3
	})
	return leader
}
