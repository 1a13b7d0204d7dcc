package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// count sums a counter (or a histogram's observations) over the live
// nodes.
func (tc *quorumCluster) count(name string) float64 {
	var n float64
	for _, b := range tc.nodes {
		if b != nil {
			n += max(b.Count(name), 0)
		}
	}
	return n
}

// Kafka: ReplicaManager IsrShrinksPerSec / IsrExpandsPerSec on the
// leader's broker, ControllerStats LeaderElectionRateAndTimeMs and
// UncleanLeaderElectionsPerSec on the active controller. Three
// controllers and two broker-only nodes, 4 and 5, holding a partition
// with unclean.leader.election.enable: the follower's loss shrinks the
// ISR and its return expands it (the leader's AlterPartitions); the
// follower lost again and then the leader, the follower's return is an
// unclean election.
func TestReplicationMetricsMove(t *testing.T) {
	tc := startQuorumCluster(t, 3, map[string]string{
		"broker.session.timeout.ms": "4000", // longer than the lag: the leader shrinks the ISR first
		"replica.lag.time.max.ms":   "1000",
	})
	x, y := tc.addBrokerOnly(), tc.addBrokerOnly()
	tc.waitBrokers(5)
	leader := tc.nodes[x]

	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "u", -1, -1
	a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	a.Replicas = []int32{4, 5}
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	for k, v := range map[string]string{"unclean.leader.election.enable": "true", "min.insync.replicas": "1"} {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx(t), client(t, tc.addrs[0]))
	if err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create: %v %+v", err, resp)
	}
	produceSync(t, client(t, tc.addrs[x]), &kgo.Record{Topic: "u", Value: []byte("a")})
	// A follower that has the leader's whole log stays in sync however
	// long it is silent (Kafka's isCaughtUp): keep the log moving.
	p := client(t, tc.addrs[x], kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				p.Produce(context.Background(), &kgo.Record{Topic: "u", Value: []byte("b")}, nil)
			}
		}
	}()
	if n := tc.count("varve_controller_leader_election_duration_seconds"); n != 0 {
		t.Errorf("%v elections before any broker was lost", n)
	}

	tc.kill(y)
	waitWithin(t, 15*time.Second, "an ISR shrink on the leader", func() bool { return leader.Count("varve_replica_isr_shrinks_total") >= 1 })
	tc.start(y)
	waitWithin(t, 15*time.Second, "an ISR expansion on the leader", func() bool { return leader.Count("varve_replica_isr_expands_total") >= 1 })
	tc.kill(y)
	waitWithin(t, 15*time.Second, "a second ISR shrink", func() bool { return leader.Count("varve_replica_isr_shrinks_total") >= 2 })
	if n := tc.count("varve_controller_unclean_leader_elections_total"); n != 0 {
		t.Errorf("%v unclean elections before the leader was lost", n)
	}

	tc.kill(x)
	waitWithin(t, 15*time.Second, "partition u without a leader", func() bool {
		p, ok := tc.nodes[0].MetadataImage().Partition("u", 0)
		return ok && p.Leader == -1
	})
	tc.start(y)
	waitWithin(t, 15*time.Second, "an unclean election counted", func() bool {
		return tc.count("varve_controller_unclean_leader_elections_total") >= 1
	})
	if n := tc.count("varve_controller_leader_election_duration_seconds"); n < 1 {
		t.Errorf("leader elections observed: %v, want the unclean one at least", n)
	}
}
