package cluster_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnClusterProps are a three-node cluster's transaction settings:
// __transaction_state with replication factor 3 and min ISR 2.
func txnClusterProps(partitions string) map[string]string {
	return map[string]string{"transaction.state.log.num.partitions": partitions,
		"transaction.state.log.replication.factor": "3", "transaction.state.log.min.isr": "2"}
}

// initTxnProducer is InitProducerId for id, retried while its
// coordinator is created, elected and loaded.
func initTxnProducer(t *testing.T, cl *kgo.Client, id string) (int64, int16) {
	t.Helper()
	var pid int64
	var epoch int16
	var last int16
	waitWithin(t, 30*time.Second, "InitProducerId for "+id, func() bool {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis = &id, 60000
		resp, err := req.RequestWith(ctx(t), cl)
		if err != nil {
			return false
		}
		pid, epoch, last = resp.ProducerID, resp.ProducerEpoch, resp.ErrorCode
		return last == 0
	})
	return pid, epoch
}

// txnCoordinatorOf is the node id FindCoordinator names for id.
func txnCoordinatorOf(t *testing.T, cl *kgo.Client, id string) int32 {
	t.Helper()
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType, req.CoordinatorKey, req.CoordinatorKeys = 1, id, []string{id}
	resp, err := req.RequestWith(ctx(t), cl)
	if err != nil || len(resp.Coordinators) != 1 || resp.Coordinators[0].ErrorCode != 0 {
		t.Fatalf("FindCoordinator %s: %v %+v", id, err, resp)
	}
	return resp.Coordinators[0].NodeID
}

// partitionLeaders are the leaders of topic's partitions, by partition.
func partitionLeaders(t *testing.T, cl *kgo.Client, topic string) map[int32]int32 {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx(t), cl)
	if err != nil || len(resp.Topics) != 1 {
		t.Fatalf("metadata %s: %v", topic, err)
	}
	out := map[int32]int32{}
	for _, p := range resp.Topics[0].Partitions {
		out[p.Partition] = p.Leader
	}
	return out
}

// produceTxnTo sends a transactional batch to topic/partition at node,
// at Produce version at most (11 at most: verified, not added: KIP-890
// part 1), and returns the partition's code.
func produceTxnTo(t *testing.T, cl *kgo.Client, node int32, version int16, id, topic string, partition int32, records []byte) int16 {
	t.Helper()
	pr := kmsg.NewPtrProduceRequest()
	pr.Acks, pr.TimeoutMillis, pr.TransactionID = -1, 5000, &id
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, records
	rt.Partitions = append(rt.Partitions, rp)
	pr.Topics = append(pr.Topics, rt)
	resp, err := cl.Broker(int(node)).Request(ctx(t), produceAt{pr, version})
	if err != nil {
		t.Fatalf("produce to node %d: %v", node, err)
	}
	return resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
}

// Kafka: KIP-890 part 1 (Kafka 3.6+, AddPartitionsToTxnManager). The
// leader of a partition asks the transactional id's coordinator, on
// another node, with AddPartitionsToTxn v5 (verify only) and refuses a
// produce to a partition outside the ongoing transaction, before the
// partition is added and after the transaction ended: with
// TRANSACTION_ABORTABLE from Produce v11, INVALID_TXN_STATE before.
func TestThreeNodesTxnProduceVerifiedAcrossNodes(t *testing.T) {
	qc := startQuorumCluster(t, 3, txnClusterProps("1"))
	qc.waitBrokers(3)
	cl := client(t, qc.addrs[0])
	tv1 := client(t, qc.addrs[0], kgo.MaxVersions(tv1Versions()))
	createTopicRF(t, cl, "out", 6, 3)
	const id = "verify-tx"
	pid, epoch := initTxnProducer(t, cl, id)
	coord := txnCoordinatorOf(t, cl, id)
	p, leader := int32(-1), int32(-1)
	for part, l := range partitionLeaders(t, cl, "out") {
		if l >= 0 && l != coord {
			p, leader = part, l
			break
		}
	}
	if p < 0 {
		t.Fatalf("every partition of out is led by the coordinator, node %d", coord)
	}
	if c := produceTxnTo(t, cl, leader, 10, id, "out", p, txnRecords(t, pid, epoch, 0, "early")); c != kerr.InvalidTxnState.Code {
		t.Fatalf("produce v10 to out/%d (node %d, coordinator %d) before AddPartitionsToTxn: %d, want INVALID_TXN_STATE", p, leader, coord, c)
	}
	if c := produceTxnTo(t, cl, leader, 11, id, "out", p, txnRecords(t, pid, epoch, 0, "early")); c != kerr.TransactionAbortable.Code {
		t.Fatalf("produce v11 to out/%d (node %d, coordinator %d) before AddPartitionsToTxn: %d, want TRANSACTION_ABORTABLE", p, leader, coord, c)
	}
	add := kmsg.NewPtrAddPartitionsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch = id, pid, epoch
	at := kmsg.NewAddPartitionsToTxnRequestTopic()
	at.Topic, at.Partitions = "out", []int32{p}
	add.Topics = append(add.Topics, at)
	resp, err := add.RequestWith(ctx(t), cl)
	if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("AddPartitionsToTxn: %v %+v", err, resp)
	}
	if c := produceTxnTo(t, cl, leader, 11, id, "out", p, txnRecords(t, pid, epoch, 0, "in")); c != 0 {
		t.Fatalf("produce to out/%d in the transaction: %d", p, c)
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = id, pid, epoch, true
	if resp, err := end.RequestWith(ctx(t), tv1); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("EndTxn v4: %v %+v", err, resp) // transaction version 1: the epoch stays
	}
	// A late produce of the ended transaction: retriable while it
	// commits, then refused.
	var last int16
	waitWithin(t, 20*time.Second, "a late produce refused", func() bool {
		last = produceTxnTo(t, cl, leader, 10, id, "out", p, txnRecords(t, pid, epoch, 1, "late"))
		return last == kerr.InvalidTxnState.Code
	})
	if c := produceTxnTo(t, cl, leader, 11, id, "out", p, txnRecords(t, pid, epoch, 1, "late")); c != kerr.TransactionAbortable.Code {
		t.Fatalf("a late produce v11: %d, want TRANSACTION_ABORTABLE", c)
	}
}

// Kafka: KIP-98 and KIP-447 on a replicated cluster. A
// GroupTransactSession copies eos-in to eos-out in a three-node cluster
// (__transaction_state and __consumer_offsets with replication factor 3,
// min ISR 2); mid-transaction, with records produced and not committed,
// the node coordinating the transactional id is killed (or, in the
// second case, the leader of an output partition). The coordinator
// moves with its partition's leadership, loads the open transaction and
// ends it; every input appears exactly once in eos-out for a
// read_committed reader.
func TestThreeNodesGroupTransactSessionKill(t *testing.T) {
	for _, tc := range []struct {
		name   string
		victim func(t *testing.T, cl *kgo.Client) int32
	}{
		{"coordinator", func(t *testing.T, cl *kgo.Client) int32 { return txnCoordinatorOf(t, cl, "eos-copier") }},
		{"output leader", func(t *testing.T, cl *kgo.Client) int32 { return partitionLeaders(t, cl, "eos-out")[0] }},
	} {
		t.Run(tc.name, func(t *testing.T) { threeNodesEOS(t, tc.victim) })
	}
}

func threeNodesEOS(t *testing.T, victim func(t *testing.T, cl *kgo.Client) int32) {
	qc := startQuorumCluster(t, 3, txnClusterProps("3"))
	qc.waitBrokers(3)
	cl := client(t, qc.addrs[0])
	createTopicRF(t, cl, "eos-in", 3, 3)
	createTopicRF(t, cl, "eos-out", 3, 3)
	killed := int32(-1)
	r := &eosKillRun{n: 300, partitionBytes: 1000, budget: 150 * time.Second, after: 100 * time.Second,
		seeds: qc.bootstrap,
		// The same session carries on against the two nodes left, as an
		// application would, and ends the cut transaction there.
		kill: func() bool {
			killed = victim(t, cl)
			qc.kill(int(killed) - 1)
			return true
		},
	}
	live := r.run(t)
	t.Logf("killed node %d", killed)
	if now := txnCoordinatorOf(t, client(t, live), "eos-copier"); now == killed {
		t.Errorf("the coordinator is still the killed node %d", killed)
	}
}
