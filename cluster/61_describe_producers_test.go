package cluster_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka: ReplicaManager.activeProducerState answers for every replica
// the broker hosts, leader or follower (a follower's log keeps the same
// producer state). kafka-transactions find-hanging --broker-id N asks
// broker N about every partition it has a replica of and stops at the
// first error, so a follower answering NOT_LEADER_OR_FOLLOWER made it
// fail on any cluster with replication.
func TestDescribeProducersOnFollowers(t *testing.T) {
	qc := startQuorumCluster(t, 3, nil)
	qc.waitBrokers(3)
	cl := client(t, qc.addrs[0], kgo.DefaultProduceTopic("idem-rf3"))
	createTopicRF(t, cl, "idem-rf3", 1, 3)
	for i := range 3 {
		produceSync(t, cl, &kgo.Record{Value: []byte{byte(i)}})
	}
	req := kmsg.NewPtrDescribeProducersRequest()
	rt := kmsg.NewDescribeProducersRequestTopic()
	rt.Topic, rt.Partitions = "idem-rf3", []int32{0}
	req.Topics = append(req.Topics, rt)
	if err := cl.Ping(ctx(t)); err != nil {
		t.Fatal(err)
	}
	for id := 1; id <= 3; id++ {
		var last kmsg.DescribeProducersResponseTopicPartition
		// A follower answers once it has fetched the three records.
		waitWithin(t, 20*time.Second, fmt.Sprintf("the producer on node %d's replica", id), func() bool {
			kresp, err := cl.Broker(id).Request(ctx(t), req)
			if err != nil {
				return false
			}
			last = kresp.(*kmsg.DescribeProducersResponse).Topics[0].Partitions[0]
			return last.ErrorCode == 0 && len(last.ActiveProducers) == 1 && last.ActiveProducers[0].LastSequence == 2
		})
		if last.ActiveProducers[0].CurrentTxnStartOffset != -1 {
			t.Fatalf("node %d: %+v", id, last)
		}
	}
}
