package cluster_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
)

// addBrokerOnly adds a broker-only node (process.roles=broker) to tc,
// with the next node id, the same controller.quorum.voters (which do
// not name it) and a raft learner listener of its own, and starts it.
// It returns the node's index in tc. edit, if given, changes the
// node's properties before it starts.
func (tc *quorumCluster) addBrokerOnly(edit ...func(props map[string]string)) int {
	t := tc.t
	i := len(tc.nodes)
	port, learner := freeLoopbackPort(t), freeLoopbackPort(t)
	dir := filepath.Join(t.TempDir(), fmt.Sprintf("node-%d", i+1))
	props := maps.Clone(tc.props[0])
	props["node.id"] = fmt.Sprint(i + 1)
	props["process.roles"] = "broker"
	props["listeners"] = fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", port)
	props["varve.quorum.learner.listener"] = fmt.Sprintf("127.0.0.1:%d", learner)
	props["log.dirs"] = dir
	for _, f := range edit {
		f(props)
	}
	tc.dirs = append(tc.dirs, dir)
	tc.props = append(tc.props, props)
	tc.addrs = append(tc.addrs, fmt.Sprintf("127.0.0.1:%d", port))
	tc.nodes = append(tc.nodes, nil)
	tc.start(i)
	return i
}

// describeQuorum asks the cluster (through the broker at addr, which
// forwards to the controllers) to describe the metadata log's quorum.
func describeQuorum(t *testing.T, addr string) (voters, observers []int32, err error) {
	cl := client(t, addr)
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = append(rt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx(t), cl)
	if err != nil {
		return nil, nil, err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, nil, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return nil, nil, fmt.Errorf("DescribeQuorum answered %d topics", len(resp.Topics))
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return nil, nil, err
	}
	for _, v := range p.CurrentVoters {
		voters = append(voters, v.ReplicaID)
	}
	for _, o := range p.Observers {
		observers = append(observers, o.ReplicaID)
	}
	return voters, observers, nil
}

// sameMetadata reports whether every live node has the same image.
func (tc *quorumCluster) sameMetadata() bool {
	var dumps []string
	for _, b := range tc.nodes {
		if b != nil {
			dumps = append(dumps, b.MetadataDump())
		}
	}
	return !slices.ContainsFunc(dumps, func(d string) bool { return d != dumps[0] })
}

// Kafka: a node with process.roles=broker follows the metadata log
// without voting (KIP-595's observers; KIP-631's broker-only nodes), so
// a cluster grows past its controllers. The fourth node registers, is
// unfenced once it has caught up, hosts a replica of a topic with
// replication factor 4, is listed among DescribeQuorum's observers and
// not its voters, keeps following the log through the raft leader's
// death, and ends with the voters' image.
func TestBrokerOnlyNodeFollowsAsLearner(t *testing.T) {
	tc := startQuorumCluster(t, 3, nil)
	tc.waitBrokers(3)
	learner := tc.addBrokerOnly()
	tc.waitBrokers(4) // Metadata lists unfenced brokers only
	waitWithin(t, 10*time.Second, "node 4 among DescribeQuorum's observers", func() bool {
		voters, observers, err := describeQuorum(t, tc.addrs[0])
		if err != nil {
			return false
		}
		slices.Sort(voters)
		if !slices.Equal(voters, []int32{1, 2, 3}) {
			t.Fatalf("voters %v, want [1 2 3]: a broker-only node must not vote", voters)
		}
		return slices.Equal(observers, []int32{4})
	})

	adm := kadm.NewClient(client(t, tc.addrs[0]))
	if resp, err := adm.CreateTopic(ctx(t), 1, 4, nil, "rf4"); err != nil || resp.Err != nil {
		t.Fatalf("create with replication factor 4: %v %v", err, resp.Err)
	}
	prod := client(t, tc.addrs[learner], kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("rf4"),
		kgo.RecordRetries(1000), kgo.RetryTimeout(60*time.Second))
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			if err := prod.ProduceSync(ctx(t), kgo.StringRecord(fmt.Sprint(i))).FirstErr(); err != nil {
				t.Fatalf("record %d: %v", i, err)
			}
		}
	}
	produce(0, 100)
	fullISR := func(topic string, n int) func() bool {
		return func() bool {
			m, err := adm.Metadata(ctx(t), topic)
			if err != nil || len(m.Topics[topic].Partitions) == 0 {
				return false
			}
			p := m.Topics[topic].Partitions[0]
			return len(p.Replicas) == n && len(p.ISR) == n && slices.Contains(p.ISR, 4)
		}
	}
	waitWithin(t, 20*time.Second, "node 4 in rf4's ISR", fullISR("rf4", 4))

	// The raft leader dies; node 4, which never votes, carries on with
	// the next leader, which must know where to send it the log.
	active := -1
	waitWithin(t, 10*time.Second, "an active controller", func() bool {
		for i, b := range tc.nodes {
			if b != nil && b.IsActiveController() {
				active = i
			}
		}
		return active >= 0
	})
	if active == learner {
		t.Fatal("the broker-only node became the active controller")
	}
	tc.kill(active)
	adm = kadm.NewClient(client(t, tc.addrs[learner]))
	waitWithin(t, 10*time.Second, "a new active controller among the voters", func() bool {
		for i, b := range tc.nodes {
			if b != nil && b.IsActiveController() {
				return i != learner
			}
		}
		return false
	})
	produce(100, 200)
	// A topic created after the failover reaches node 4 through the new
	// leader; replication factor 3 puts a replica on it (three brokers
	// live, once the dead one is fenced).
	tc.waitBrokers(3)
	if resp, err := adm.CreateTopic(ctx(t), 1, 3, nil, "after"); err != nil || resp.Err != nil {
		t.Fatalf("create after the leader's death: %v %v", err, resp.Err)
	}
	waitWithin(t, 20*time.Second, "node 4 in the new topic's ISR", fullISR("after", 3))
	waitWithin(t, 10*time.Second, "node 4 among the new leader's observers", func() bool {
		_, observers, err := describeQuorum(t, tc.addrs[learner])
		return err == nil && slices.Equal(observers, []int32{4})
	})
	waitWithin(t, 10*time.Second, "the same image on the live voters and node 4", tc.sameMetadata)
	if got := consumeN(t, tc.addrs[learner], "rf4", 200); len(got) != 200 {
		t.Errorf("rf4: %d records, want 200", len(got))
	}
}

// Kafka refuses a broker-only node's own controller listener; Varve
// asks for a learner listener instead, with a message that says why.
func TestBrokerOnlyNodeNeedsLearnerListener(t *testing.T) {
	props := map[string]string{
		"node.id": "4", "process.roles": "broker", "controller.quorum.voters": "1@127.0.0.1:9093",
		"controller.listener.names": "CONTROLLER", "listeners": "PLAINTEXT://127.0.0.1:0",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"log.dirs":                       t.TempDir(), "varve.metrics.listener": "", "cluster.id": "dGVzdC1jbHVzdGVyLWlkMDAw",
	}
	if _, err := config.Parse(props); err == nil {
		t.Fatal("a broker-only node without varve.quorum.learner.listener parsed")
	}
	props["varve.quorum.learner.listener"] = "127.0.0.1:0"
	cfg, err := config.Parse(props)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cluster.New(cfg, nil)
	if err != nil {
		t.Fatalf("a broker-only node with a learner listener: %v", err)
	}
	b.Kill()
}
