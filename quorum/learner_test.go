package quorum

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/varve/varve/controller"

	"github.com/varve/varve/metadata"
)

// addLearner starts node 4, not among the voters, with a learner
// listener of its own and a broker lifecycle that registers it there.
func (c *testCluster) addLearner() int {
	c.t.Helper()
	cfg := c.cfgs[0]
	cfg.NodeID, cfg.MetadataLogDir, cfg.ListenAddr = 4, c.t.TempDir(), freeAddr(c.t)
	c.cfgs = append(c.cfgs, cfg)
	c.nodes, c.lcs = append(c.nodes, nil), append(c.lcs, nil)
	i := len(c.nodes) - 1
	n, err := New(cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := n.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.nodes[i] = n
	e, ok := n.LearnerEndpoint()
	if !ok || !n.IsLearner() {
		c.t.Fatalf("node 4 is not a learner: endpoint %v %v", e, ok)
	}
	lc := NewLifecycle(n.Client(), LifecycleConfig{BrokerID: 4, ClusterID: cfg.ClusterID,
		Endpoints:           []metadata.Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: 9094, SecurityProtocol: "PLAINTEXT"}, e},
		HeartbeatIntervalMs: testHeartbeatMs, MetadataOffset: n.MetadataOffset, Logger: testLogger()})
	lc.Start()
	c.lcs[i] = lc
	return i
}

// observers asks the quorum's leader for DescribeQuorum's voters and
// observers.
func observers(t *testing.T, client *Client) (voters, obs []int32) {
	t.Helper()
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = metadataTopic
	rt.Partitions = append(rt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := client.Do(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	p := resp.(*kmsg.DescribeQuorumResponse).Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		t.Fatal(err)
	}
	for _, v := range p.CurrentVoters {
		voters = append(voters, v.ReplicaID)
	}
	for _, o := range p.Observers {
		obs = append(obs, o.ReplicaID)
	}
	slices.Sort(voters)
	return voters, obs
}

// TestLearner: a node outside controller.quorum.voters registers with
// its learner endpoint, the active controller adds it as a raft
// learner, and it catches up from the leader's snapshot (the log was
// compacted before it joined) and is unfenced. It follows the next
// leader after the first dies, and raft's configuration lists it as a
// learner, not a voter. Kafka: KIP-595's observers, KIP-631's
// broker-only nodes, KIP-630's snapshots.
func TestLearner(t *testing.T) {
	c := newTestCluster(t, 1) // a snapshot after every entry
	leader := c.active(5 * time.Second)
	c.waitUnfenced(10 * time.Second)
	createTopic(t, c.nodes[leader].Client(), "before", 2, 3)
	c.waitSameImages(5 * time.Second)

	l := c.addLearner()
	c.waitUnfenced(10 * time.Second)
	c.waitSameImages(5 * time.Second)
	if c.nodes[l].SnapshotsReceived() == 0 {
		t.Error("the learner caught up without the leader's snapshot")
	}
	c.waitFor(5*time.Second, "node 4 among the observers", func() bool {
		voters, obs := observers(t, c.nodes[l].Client())
		if !slices.Equal(voters, []int32{1, 2, 3}) {
			t.Fatalf("voters %v, want [1 2 3]", voters)
		}
		return slices.Equal(obs, []int32{4})
	})

	// The leader dies: the next one appends to the learner too.
	c.kill(leader)
	next := c.active(10 * testElectionMs * time.Millisecond)
	createTopic(t, c.nodes[l].Client(), "after", 1, 2)
	c.waitSameImages(5 * time.Second)
	if _, ok := c.nodes[l].Publisher().Image().Topic("after"); !ok {
		t.Fatal("the learner never saw the topic created after the failover")
	}

	// Raft's configuration, on the new leader and on the learner: the
	// same three voters, node 4 a learner.
	for _, i := range []int{next, l} {
		cs := confOf(c.nodes[i])
		voters := slices.Sorted(slices.Values(cs.GetVoters()))
		if !slices.Equal(voters, []uint64{2, 3, 4}) || !slices.Equal(cs.GetLearners(), []uint64{5}) {
			t.Errorf("node %d's raft configuration: voters %v learners %v, want raft ids [2 3 4] and [5]",
				i+1, cs.GetVoters(), cs.GetLearners())
		}
	}
	if c.nodes[l].IsActive() {
		t.Error("the learner is the active controller")
	}
}

// confOf is node n's raft configuration, read on its loop.
func confOf(n *Node) *raftpb.ConfState {
	ch := make(chan *raftpb.ConfState, 1)
	n.submit(&op{local: true, run: func(*controller.Controller, int64) ([]metadata.Record, error) {
		ch <- proto.Clone(n.conf).(*raftpb.ConfState)
		return nil, nil
	}})
	return <-ch
}
