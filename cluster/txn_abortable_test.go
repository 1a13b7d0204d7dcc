package cluster_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// txnOffsetCommitAt commits offset 9 of src/0 for group grp in the
// transaction of id, at TxnOffsetCommit version at most, and returns
// the partition's code.
func txnOffsetCommitAt(t *testing.T, addr string, version int16, id string, p *kmsg.InitProducerIDResponse) int16 {
	t.Helper()
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(kmsg.TxnOffsetCommit.Int16(), version)
	cl := client(t, addr, kgo.MaxVersions(vs))
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = id, "grp", p.ProducerID, p.ProducerEpoch, -1
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = "src"
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = 0, 9
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx(t), cl)
	if err != nil || resp.Version != version || len(resp.Topics) != 1 {
		t.Fatalf("TxnOffsetCommit v%d: %v %+v", version, err, resp)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

// Kafka: KIP-890 part 1 on the group coordinator's side (its
// AddPartitionsToTxnManager, transactionSupportedOperation). A
// TxnOffsetCommit whose group's __consumer_offsets partition is not in
// the producer's transaction (no AddOffsetsToTxn) is refused and writes
// nothing: TRANSACTION_ABORTABLE from v4, INVALID_TXN_STATE before. After
// AddOffsetsToTxn the same commit is taken.
func TestTxnOffsetCommitVerified(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"transaction.state.log.num.partitions": "2"})
	createTopic(t, b.addr, "src", 1, nil)
	cl := client(t, b.addr)
	p := initTxn(t, cl, "offs", 30)
	for _, tc := range []struct {
		version int16
		want    *kerr.Error
	}{{2, kerr.InvalidTxnState}, {3, kerr.InvalidTxnState}, {4, kerr.TransactionAbortable}} {
		if code := txnOffsetCommitAt(t, b.addr, tc.version, "offs", p); code != tc.want.Code {
			t.Errorf("TxnOffsetCommit v%d outside the transaction: %s, want %s", tc.version, kerr.ErrorForCode(code), tc.want.Message)
		}
	}
	if st := describeOne(t, cl, "offs"); len(st.Topics) != 0 {
		t.Fatalf("a refused commit joined the transaction: %+v", st)
	}
	ao := kmsg.NewPtrAddOffsetsToTxnRequest()
	ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = "offs", p.ProducerID, p.ProducerEpoch, "grp"
	if r, err := ao.RequestWith(ctx(t), cl); err != nil || r.ErrorCode != 0 {
		t.Fatalf("AddOffsetsToTxn: %v %+v", err, r)
	}
	if code := txnOffsetCommitAt(t, b.addr, 4, "offs", p); code != 0 {
		t.Fatalf("TxnOffsetCommit v4 in the transaction: %s", kerr.ErrorForCode(code))
	}
}

// Kafka: KIP-890 (TRANSACTION_ABORTABLE) with a real client. A
// franz-go producer at transaction version 1 (Produce v11) has its
// transaction aborted under it (here by an EndTxn of the same producer
// id and epoch, as the coordinator's timeout would); its next produce to
// a partition it had added is outside any transaction and is refused
// with TRANSACTION_ABORTABLE. The client aborts and goes on with the
// same transactional id: its next transaction commits, and only that
// one is read_committed.
func TestTransactionAbortableClientAbortsAndContinues(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"transaction.state.log.num.partitions": "2"})
	createTopic(t, b.addr, "ab", 1, nil)
	p := client(t, b.addr, kgo.TransactionalID("ab-tx"), kgo.DefaultProduceTopic("ab"),
		kgo.TransactionTimeout(30*time.Second), kgo.MaxVersions(tv1Versions()))
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx(t), &kgo.Record{Value: []byte("cut")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pid, epoch, err := p.ProducerID(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	side := client(t, b.addr, kgo.MaxVersions(tv1Versions()))
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch = "ab-tx", pid, epoch
	if r, err := end.RequestWith(ctx(t), side); err != nil || r.ErrorCode != 0 {
		t.Fatalf("EndTxn abort from the side: %v %+v", err, r)
	}
	waitWithin(t, 10*time.Second, "the transaction aborted", func() bool {
		return describeOne(t, side, "ab-tx").State == "CompleteAbort"
	})
	err = p.ProduceSync(ctx(t), &kgo.Record{Value: []byte("late")}).FirstErr()
	if !errors.Is(err, kerr.TransactionAbortable) {
		t.Fatalf("produce after the abort: %v, want TRANSACTION_ABORTABLE", err)
	}
	if err := p.EndTransaction(ctx(t), kgo.TryAbort); err != nil {
		t.Fatalf("the client's abort: %v", err)
	}
	if err := inTxn(t, p, true, "next"); err != nil {
		t.Fatalf("the next transaction of the same id: %v", err)
	}
	if got := readAll(t, b.addr, "ab", true, 1); fmt.Sprint(got) != "[next]" {
		t.Errorf("read_committed read %v", got)
	}
}

// groupCoordinatorOf is the node id FindCoordinator names for group,
// retried while __consumer_offsets is created and its leaders elected.
func groupCoordinatorOf(t *testing.T, cl *kgo.Client, group string) int32 {
	t.Helper()
	node := int32(-1)
	waitWithin(t, 30*time.Second, "the coordinator of group "+group, func() bool {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKey, req.CoordinatorKeys = group, []string{group}
		resp, err := req.RequestWith(ctx(t), cl)
		if err != nil || len(resp.Coordinators) != 1 || resp.Coordinators[0].ErrorCode != 0 {
			return false
		}
		node = resp.Coordinators[0].NodeID
		return true
	})
	return node
}

// Kafka: KIP-890 part 1 across nodes. The group coordinator of a
// TxnOffsetCommit, on another node than the transactional id's
// coordinator, asks it with AddPartitionsToTxn v5 whether the group's
// __consumer_offsets partition is in the transaction: a commit without
// AddOffsetsToTxn is TRANSACTION_ABORTABLE at v4, INVALID_TXN_STATE at
// v3; after it, the commit is taken.
func TestThreeNodesTxnOffsetCommitVerifiedAcrossNodes(t *testing.T) {
	qc := startQuorumCluster(t, 3, txnClusterProps("1"))
	qc.waitBrokers(3)
	cl := client(t, qc.addrs[0])
	createTopicRF(t, cl, "src", 1, 3)
	const id = "offs-tx"
	pid, epoch := initTxnProducer(t, cl, id)
	coord := txnCoordinatorOf(t, cl, id)
	group := ""
	for i := 0; group == "" && i < 50; i++ {
		if g := fmt.Sprintf("grp-%d", i); groupCoordinatorOf(t, cl, g) != coord {
			group = g
		}
	}
	if group == "" {
		t.Fatalf("every group tried is coordinated by node %d, the transaction coordinator", coord)
	}
	commit := func(version int16) int16 {
		var code int16
		waitWithin(t, 20*time.Second, "a TxnOffsetCommit answered", func() bool {
			code = commitOnce(t, qc.addrs[0], version, id, group, pid, epoch)
			return !kerr.IsRetriable(kerr.ErrorForCode(code)) // the coordinators settling
		})
		return code
	}
	if c := commit(3); c != kerr.InvalidTxnState.Code {
		t.Errorf("TxnOffsetCommit v3 of %s outside the transaction: %s, want INVALID_TXN_STATE", group, kerr.ErrorForCode(c))
	}
	if c := commit(4); c != kerr.TransactionAbortable.Code {
		t.Errorf("TxnOffsetCommit v4 of %s outside the transaction: %s, want TRANSACTION_ABORTABLE", group, kerr.ErrorForCode(c))
	}
	ao := kmsg.NewPtrAddOffsetsToTxnRequest()
	ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = id, pid, epoch, group
	if r, err := ao.RequestWith(ctx(t), cl); err != nil || r.ErrorCode != 0 {
		t.Fatalf("AddOffsetsToTxn: %v %+v", err, r)
	}
	if c := commit(4); c != 0 {
		t.Fatalf("TxnOffsetCommit v4 in the transaction: %s", kerr.ErrorForCode(c))
	}
}

// commitOnce is one TxnOffsetCommit of src/0 for group, at version at
// most, and its partition's code.
func commitOnce(t *testing.T, addr string, version int16, id, group string, pid int64, epoch int16) int16 {
	t.Helper()
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(kmsg.TxnOffsetCommit.Int16(), version)
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = id, group, pid, epoch, -1
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = "src"
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = 0, 3
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx(t), client(t, addr, kgo.MaxVersions(vs)))
	if err != nil || resp.Version != version || len(resp.Topics) != 1 {
		t.Fatalf("TxnOffsetCommit v%d: %v %+v", version, err, resp)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}
