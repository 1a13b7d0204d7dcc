package cluster_test

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// createAssigned sends CreateTopics with manual assignments (one
// replica list per partition) and numPartitions / replicationFactor as
// given; it returns the topic's answer.
func createAssigned(t *testing.T, c *kgo.Client, topic string, np int32, rf int16, as ...[]int32) kmsg.CreateTopicsResponseTopic {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, np, rf
	for p, replicas := range as {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(p), replicas
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx(t), c)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Topics[0]
}

// addAssigned sends CreatePartitions growing topic to count with the new
// partitions' assignments.
func addAssigned(t *testing.T, c *kgo.Client, topic string, count int32, as ...[]int32) int16 {
	t.Helper()
	req := kmsg.NewPtrCreatePartitionsRequest()
	rt := kmsg.NewCreatePartitionsRequestTopic()
	rt.Topic, rt.Count = topic, count
	for _, replicas := range as {
		a := kmsg.NewCreatePartitionsRequestTopicAssignment()
		a.Replicas = replicas
		rt.Assignment = append(rt.Assignment, a)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx(t), c)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Topics[0].ErrorCode
}

// Kafka: CreateTopics' and CreatePartitions' manual assignments,
// checked as ReplicationControlManager checks them. A single node can
// be assigned only itself; another broker, the same broker twice, or a
// count beside the assignment is refused.
func TestSingleNodeManualAssignments(t *testing.T) {
	tb := startBroker(t, t.TempDir(), nil)
	c := client(t, tb.addr)
	self := tb.NodeID()
	if r := createAssigned(t, c, "mine", -1, -1, []int32{self}, []int32{self}); r.ErrorCode != 0 || r.NumPartitions != 2 || r.ReplicationFactor != 1 {
		t.Fatalf("assigned to this node: code %d, %d partitions, rf %d", r.ErrorCode, r.NumPartitions, r.ReplicationFactor)
	}
	for _, bad := range []struct {
		np   int32
		rf   int16
		as   [][]int32
		want *kerr.Error
	}{
		{-1, -1, [][]int32{{self, 7}}, kerr.InvalidReplicaAssignment},
		{-1, -1, [][]int32{{self, self}}, kerr.InvalidReplicaAssignment},
		{-1, -1, [][]int32{{7}}, kerr.InvalidReplicaAssignment},
		{1, -1, [][]int32{{self}}, kerr.InvalidRequest},
		{-1, 1, [][]int32{{self}}, kerr.InvalidRequest},
	} {
		if r := createAssigned(t, c, "bad", bad.np, bad.rf, bad.as...); r.ErrorCode != bad.want.Code || r.ErrorMessage == nil {
			t.Errorf("np=%d rf=%d %v: code %d (%v), want %v", bad.np, bad.rf, bad.as, r.ErrorCode, r.ErrorMessage, bad.want)
		}
	}
	if code := addAssigned(t, c, "mine", 3, []int32{7}); code != kerr.InvalidReplicaAssignment.Code {
		t.Errorf("a new partition on an unknown broker: code %d", code)
	}
	if code := addAssigned(t, c, "mine", 4, []int32{self}); code != kerr.InvalidReplicaAssignment.Code {
		t.Errorf("two new partitions, one assignment: code %d", code)
	}
	if code := addAssigned(t, c, "mine", 3, []int32{self}); code != 0 {
		t.Errorf("a new partition on this node: code %d", code)
	}
	produceSync(t, client(t, tb.addr), &kgo.Record{Topic: "mine", Partition: 2, Value: []byte("x")})
}

// Kafka: manual assignments in a cluster, forwarded to the active
// controller (KIP-590): each partition is placed on the brokers named,
// its first replica leading; CreatePartitions places new partitions the
// same way; an unknown broker is INVALID_REPLICA_ASSIGNMENT.
func TestClusterManualAssignments(t *testing.T) {
	tc := startQuorumCluster(t, 3, nil)
	tc.waitBrokers(3)
	c := client(t, tc.addrs[1])
	if r := createAssigned(t, c, "placed", -1, -1, []int32{3, 1}, []int32{2, 3}); r.ErrorCode != 0 || r.ReplicationFactor != 2 {
		t.Fatalf("create with assignments: code %d %v, rf %d", r.ErrorCode, r.ErrorMessage, r.ReplicationFactor)
	}
	if r := createAssigned(t, c, "nowhere", -1, -1, []int32{1, 9}); r.ErrorCode != kerr.InvalidReplicaAssignment.Code {
		t.Errorf("assignment to broker 9: code %d, want INVALID_REPLICA_ASSIGNMENT", r.ErrorCode)
	}
	if code := addAssigned(t, c, "placed", 3, []int32{1, 2}); code != 0 {
		t.Fatalf("create partition 2 on 1, 2: code %d", code)
	}
	if code := addAssigned(t, c, "placed", 4, []int32{1, 1}); code != kerr.InvalidReplicaAssignment.Code {
		t.Errorf("a new partition on broker 1 twice: code %d", code)
	}
	adm := kadm.NewClient(c)
	want := [][]int32{{3, 1}, {2, 3}, {1, 2}}
	waitWithin(t, 10*time.Second, "the assigned replicas and leaders", func() bool {
		td, err := adm.ListTopics(ctx(t), "placed")
		if err != nil || td["placed"].Err != nil || len(td["placed"].Partitions) != 3 {
			return false
		}
		for p, d := range td["placed"].Partitions {
			if !slices.Equal(d.Replicas, want[p]) || d.Leader != want[p][0] {
				return false
			}
		}
		return true
	})
	produceSync(t, client(t, tc.addrs[0]), &kgo.Record{Topic: "placed", Partition: 2, Value: []byte("x")})
}
