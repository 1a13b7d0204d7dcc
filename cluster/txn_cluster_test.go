package cluster_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
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
	const n = 300
	in := client(t, qc.addrs[0], kgo.DefaultProduceTopic("eos-in"))
	for i := range n {
		produceSync(t, in, &kgo.Record{Key: []byte(strconv.Itoa(i % 7)), Value: []byte(strconv.Itoa(i))})
	}
	copied, killed := 0, int32(-1)
	session := func() *kgo.GroupTransactSession {
		s, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(qc.bootstrap()...), kgo.TransactionalID("eos-copier"),
			kgo.ConsumerGroup("eos-group"), kgo.ConsumeTopics("eos-in"), kgo.DefaultProduceTopic("eos-out"),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.TransactionTimeout(10*time.Second), kgo.FetchMaxPartitionBytes(1000), kgo.RetryTimeout(60*time.Second),
			kgo.SessionTimeout(6*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	round := func(s *kgo.GroupTransactSession, cx context.Context, kill bool) error {
		fs := s.PollFetches(cx)
		if err := fs.Err0(); err != nil {
			return err
		}
		if err := s.Begin(); err != nil {
			// An End that failed (the coordinator restarting or moving)
			// can leave the session inside its transaction: abort it, so
			// the next round begins a new one.
			s.End(cx, kgo.TryAbort)
			return err
		}
		var recs []*kgo.Record
		fs.EachRecord(func(r *kgo.Record) { recs = append(recs, &kgo.Record{Key: r.Key, Value: r.Value}) })
		if err := s.ProduceSync(cx, recs...).FirstErr(); err != nil {
			s.End(cx, kgo.TryAbort)
			return err
		}
		if kill && len(recs) > 0 {
			killed = victim(t, cl)
			qc.kill(int(killed) - 1)
		}
		// After a kill the session ends its transaction against whichever
		// node now coordinates it: committed or aborted, never both.
		committed, err := s.End(cx, kgo.TryCommit)
		if committed {
			copied += len(recs)
		}
		if kill && len(recs) > 0 {
			t.Logf("the transaction cut by the kill: committed %v, %v", committed, err)
			return errKilled
		}
		return err
	}
	s := session()
	cx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	for copied < n/3 && cx.Err() == nil {
		if err := round(s, cx, false); err != nil {
			t.Logf("round before the kill: %v", err)
		}
	}
	for cx.Err() == nil {
		if err := round(s, cx, true); errors.Is(err, errKilled) {
			break
		}
	}
	t.Logf("killed node %d mid-transaction after %d of %d records copied", killed, copied, n)
	// The same session carries on against the two nodes left, as an
	// application would. If the failover outlasted the transaction
	// timeout, the coordinator aborted the cut transaction itself and
	// fenced the producer (Kafka: at transaction version 2 its epoch is
	// bumped, and the client's late EndTxn is PRODUCER_FENCED, fatal to
	// that producer); an application then starts a new producer with the
	// same transactional id, which is what the test does.
	defer func() { s.Close() }()
	live := qc.bootstrap()[0]
	adm := kadm.NewClient(client(t, live))
	deadline := time.Now().Add(100 * time.Second)
	for time.Now().Before(deadline) && committedInput(t, adm) < n {
		rctx, rcancel := context.WithTimeout(cx, 5*time.Second)
		err := round(s, rctx, false)
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Logf("round after the kill: %v", err)
		}
		if errors.Is(err, kerr.ProducerFenced) {
			s.Close()
			s = session()
		}
		rcancel()
	}
	if now := txnCoordinatorOf(t, client(t, live), "eos-copier"); now == killed {
		t.Errorf("the coordinator is still the killed node %d", killed)
	}
	got := readAll(t, live, "eos-out", true, n)
	seen := map[string]int{}
	for _, v := range got {
		seen[v]++
	}
	var missing, dup []string
	for i := range n {
		switch seen[strconv.Itoa(i)] {
		case 0:
			missing = append(missing, strconv.Itoa(i))
		case 1:
		default:
			dup = append(dup, strconv.Itoa(i))
		}
	}
	if len(missing) > 0 || len(dup) > 0 || len(got) != n {
		t.Fatalf("read_committed output: %d records, %d inputs missing (%v), %d duplicated (%v)",
			len(got), len(missing), head(missing), len(dup), head(dup))
	}
}
