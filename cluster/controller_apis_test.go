package cluster_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
)

// A single node answers the controller APIs Kafka's tools send to a
// broker: kafka-leader-election finds nothing to elect (the only replica
// leads), kafka-reassign-partitions finds no reassignment and may only
// "move" a partition to this node, kafka-metadata-quorum is told why
// there is no quorum.
func TestSingleNodeControllerAPIs(t *testing.T) {
	tb := startBroker(t, t.TempDir(), nil)
	createTopic(t, tb.addr, "elect", 2, nil)
	c := client(t, tb.addr)
	adm := kadm.NewClient(c)

	res, err := adm.ElectLeaders(ctx(t), kadm.ElectPreferredReplica, kadm.TopicsSet{"elect": {0: {}, 1: {}}, "nope": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	for topic, ps := range res {
		for p, r := range ps {
			want := kerr.ElectionNotNeeded
			if topic == "nope" {
				want = kerr.UnknownTopicOrPartition
			}
			if r.Err != want {
				t.Errorf("elect %s-%d: %v, want %v", topic, p, r.Err, want)
			}
		}
	}

	listed, err := adm.ListPartitionReassignments(ctx(t), nil)
	if err != nil || len(listed) != 0 {
		t.Errorf("list reassignments: %v %v, want none", listed, err)
	}

	alter := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	rt.Topic = "elect"
	for p, replicas := range [][]int32{{tb.NodeID()}, {tb.NodeID(), 7}} {
		rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
		rp.Partition, rp.Replicas = int32(p), replicas
		rt.Partitions = append(rt.Partitions, rp)
	}
	alter.Topics = append(alter.Topics, rt)
	aresp, err := alter.RequestWith(ctx(t), c)
	if err != nil {
		t.Fatal(err)
	}
	got := []int16{aresp.Topics[0].Partitions[0].ErrorCode, aresp.Topics[0].Partitions[1].ErrorCode}
	if got[0] != 0 || got[1] != kerr.InvalidReplicaAssignment.Code {
		t.Errorf("reassign to self / to an unknown broker: codes %v, want [0 %d]", got, kerr.InvalidReplicaAssignment.Code)
	}

	dq := kmsg.NewPtrDescribeQuorumRequest()
	dresp, err := dq.RequestWith(ctx(t), c)
	if err != nil {
		t.Fatal(err)
	}
	if dresp.ErrorCode == 0 || dresp.ErrorMessage == nil {
		t.Errorf("DescribeQuorum on a single node: code %d, want an error with a message", dresp.ErrorCode)
	}
}

// Kafka: every log dir is formatted with meta.properties (cluster.id,
// node.id, directory.id); a node started on a directory of another node
// refuses to start rather than mix the two.
func TestLogDirsAreFormattedForOneNode(t *testing.T) {
	dir := t.TempDir()
	tb := startBroker(t, dir, nil)
	tb.stop(t)
	data, err := os.ReadFile(filepath.Join(dir, "meta.properties"))
	if err != nil || !strings.Contains(string(data), "node.id=1\n") || !strings.Contains(string(data), "version=1\n") {
		t.Fatalf("meta.properties: %v\n%s", err, data)
	}
	cfg, err := config.Parse(map[string]string{"log.dirs": dir, "listeners": "PLAINTEXT://127.0.0.1:0", "node.id": "2", "varve.metrics.listener": ""})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := cluster.New(cfg, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "another cluster or node") {
		if b != nil {
			b.Shutdown(context.Background())
		}
		t.Fatalf("node 2 on node 1's directory: %v", err)
	}
}

// Kafka: DescribeConfigs shows password-typed broker settings (keys,
// passwords, JAAS configurations) as null, marked sensitive.
func TestDescribeBrokerConfigsHidesSecrets(t *testing.T) {
	tb := startBroker(t, t.TempDir(), map[string]string{"ssl.keystore.password": "hunter2"})
	adm := kadm.NewClient(client(t, tb.addr))
	rcs, err := adm.DescribeBrokerConfigs(ctx(t), tb.NodeID())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, rc := range rcs {
		for _, c := range rc.Configs {
			if c.Key != "ssl.keystore.password" {
				continue
			}
			found = true
			if c.Value != nil || !c.Sensitive {
				t.Errorf("ssl.keystore.password described as %v (sensitive %v), want null and sensitive", c.Value, c.Sensitive)
			}
		}
	}
	if !found {
		t.Fatal("ssl.keystore.password not described")
	}
}
