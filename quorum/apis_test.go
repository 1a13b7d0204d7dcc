package quorum

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestControllerAPIs sends each controller API through a Client and
// checks the answer and, for changes, every node's image. Kafka:
// KIP-590 (requests forwarded to the controller), KIP-339, KIP-455,
// KIP-460, KIP-595 (DescribeQuorum), KIP-730.
func TestControllerAPIs(t *testing.T) {
	c := newTestCluster(t, 20<<20)
	leader := c.active(5 * time.Second)
	c.waitUnfenced(10 * time.Second)
	client := c.nodes[(leader+1)%3].Client()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	do := func(req kmsg.Request) kmsg.Response {
		t.Helper()
		resp, err := client.Do(ctx, req)
		if err != nil {
			t.Fatalf("%T: %v", req, err)
		}
		return resp
	}
	createTopic(t, client, "cfg", 2, 3)

	t.Run("IncrementalAlterConfigs", func(t *testing.T) {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, "cfg"
		cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		v := "1000"
		cfg.Name, cfg.Op, cfg.Value = "retention.ms", kmsg.IncrementalAlterConfigOpSet, &v
		r.Configs = append(r.Configs, cfg)
		missing := r
		missing.ResourceName = "missing"
		req.Resources = append(req.Resources, r, missing)
		resp := do(req).(*kmsg.IncrementalAlterConfigsResponse)
		if resp.Resources[0].ErrorCode != 0 || resp.Resources[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
			t.Fatalf("answers %+v", resp.Resources)
		}
		c.waitFor(5*time.Second, "the config on every node", func() bool {
			for _, n := range c.nodes {
				if tp, ok := n.Publisher().Image().Topic("cfg"); !ok || tp.Configs["retention.ms"] != "1000" {
					return false
				}
			}
			return true
		})
	})

	t.Run("AllocateProducerIds", func(t *testing.T) {
		var starts []int64
		for range 2 {
			req := kmsg.NewPtrAllocateProducerIDsRequest()
			req.BrokerID, req.BrokerEpoch = 1, c.lcs[0].BrokerEpoch()
			resp := do(req).(*kmsg.AllocateProducerIDsResponse)
			if resp.ErrorCode != 0 {
				t.Fatalf("error %d", resp.ErrorCode)
			}
			starts = append(starts, resp.ProducerIDStart)
		}
		if starts[1] < starts[0]+1000 {
			t.Fatalf("blocks at %v overlap", starts)
		}
	})

	t.Run("ElectLeaders", func(t *testing.T) {
		req := kmsg.NewPtrElectLeadersRequest()
		rt := kmsg.NewElectLeadersRequestTopic()
		rt.Topic, rt.Partitions = "cfg", []int32{0}
		req.Topics = append(req.Topics, rt)
		resp := do(req).(*kmsg.ElectLeadersResponse)
		if got := resp.Topics[0].Partitions[0].ErrorCode; got != kerr.ElectionNotNeeded.Code {
			t.Fatalf("error %d, want ELECTION_NOT_NEEDED (the preferred replica leads)", got)
		}
	})

	t.Run("ListPartitionReassignments", func(t *testing.T) {
		resp := do(kmsg.NewPtrListPartitionReassignmentsRequest()).(*kmsg.ListPartitionReassignmentsResponse)
		if resp.ErrorCode != 0 || len(resp.Topics) != 0 {
			t.Fatalf("answer %+v, want none under way", resp)
		}
	})

	t.Run("DescribeQuorum", func(t *testing.T) {
		req := kmsg.NewPtrDescribeQuorumRequest()
		rt := kmsg.NewDescribeQuorumRequestTopic()
		rt.Topic = metadataTopic
		rp := kmsg.NewDescribeQuorumRequestTopicPartition()
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := do(req).(*kmsg.DescribeQuorumResponse)
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 || p.LeaderID != int32(leader+1) || len(p.CurrentVoters) != 3 || p.HighWatermark <= 0 {
			t.Fatalf("answer %+v", p)
		}
	})

	t.Run("DeleteTopics", func(t *testing.T) {
		req := kmsg.NewPtrDeleteTopicsRequest()
		name := "cfg"
		rt := kmsg.NewDeleteTopicsRequestTopic()
		rt.Topic = &name
		req.Topics = append(req.Topics, rt)
		resp := do(req).(*kmsg.DeleteTopicsResponse)
		if resp.Topics[0].ErrorCode != 0 {
			t.Fatalf("error %d", resp.Topics[0].ErrorCode)
		}
		c.waitFor(5*time.Second, "the topic gone from every node", func() bool {
			for _, n := range c.nodes {
				if _, ok := n.Publisher().Image().Topic("cfg"); ok {
					return false
				}
			}
			return true
		})
	})
	c.waitSameImages(5 * time.Second)
}
