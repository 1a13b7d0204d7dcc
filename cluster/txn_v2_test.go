package cluster_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// produceAt is a Produce request sent at version at most: up to v11 a
// transactional produce of transaction version 1, which the partition
// leader verifies against the ongoing transaction (KIP-890 part 1)
// rather than adds to it (v12, part 2).
type produceAt struct {
	*kmsg.ProduceRequest
	version int16
}

func (p produceAt) MaxVersion() int16 { return p.version }

// tv1Versions caps a client at the requests of transaction version 1
// (Produce v11, EndTxn v4, TxnOffsetCommit v4), as a client that
// predates KIP-890 part 2 sends them; franz-go then runs version 1.
func tv1Versions() *kversion.Versions {
	v := kversion.Stable()
	v.SetMaxKeyVersion(kmsg.Produce.Int16(), 11)
	v.SetMaxKeyVersion(kmsg.EndTxn.Int16(), 4)
	v.SetMaxKeyVersion(kmsg.TxnOffsetCommit.Int16(), 4)
	return v
}

// describeOne is DescribeTransactions' state of id.
func describeOne(t *testing.T, cl *kgo.Client, id string) kmsg.DescribeTransactionsResponseTransactionState {
	t.Helper()
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{id}
	resp, err := req.RequestWith(ctx(t), cl)
	if err != nil || len(resp.TransactionStates) != 1 {
		t.Fatalf("DescribeTransactions %s: %v %+v", id, err, resp)
	}
	return resp.TransactionStates[0]
}

// Kafka 4.x: a cluster at transaction.version 2 (KIP-890 part 2) serves
// clients of both versions. franz-go runs version 2 (Produce v12 adds
// the partition, EndTxn v5 bumps the epoch at every commit or abort),
// a client capped at the older requests runs version 1 (AddPartitionsToTxn,
// the epoch kept); a read_committed reader sees exactly the committed
// records of both.
func TestTransactionVersionsCoexist(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"transaction.state.log.num.partitions": "4"})
	createTopic(t, b.addr, "mixed", 1, nil)
	v2 := txnProducer(t, b.addr, "tv2", "mixed")
	v1 := client(t, b.addr, kgo.TransactionalID("tv1"), kgo.DefaultProduceTopic("mixed"),
		kgo.TransactionTimeout(10*time.Second), kgo.MaxVersions(tv1Versions()))
	var want []string
	for i := range 3 {
		for _, p := range []struct {
			cl   *kgo.Client
			name string
		}{{v2, "v2"}, {v1, "v1"}} {
			commit := i != 1
			vals := []string{fmt.Sprintf("%s-%d-a", p.name, i), fmt.Sprintf("%s-%d-b", p.name, i)}
			if err := inTxn(t, p.cl, commit, vals...); err != nil {
				t.Fatalf("%s transaction %d: %v", p.name, i, err)
			}
			if commit {
				want = append(want, vals...)
			}
		}
	}
	got := readAll(t, b.addr, "mixed", true, len(want))
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("read_committed: %v, want %v", got, want)
	}
	cl := client(t, b.addr)
	d1, d2 := describeOne(t, cl, "tv1"), describeOne(t, cl, "tv2")
	if d1.ProducerEpoch != 0 {
		t.Errorf("version 1 producer at epoch %d after 3 transactions, want 0 (the epoch is kept)", d1.ProducerEpoch)
	}
	if d2.ProducerEpoch < 3 {
		t.Errorf("version 2 producer at epoch %d after 3 transactions, want at least 3 (one bump per EndTxn)", d2.ProducerEpoch)
	}
}

// Kafka: KIP-890 part 2. The markers of a version 2 transaction carry
// the bumped epoch, so a produce of the ended transaction that arrives
// late (Produce v12, the old epoch) is refused with
// INVALID_PRODUCER_EPOCH by the partition (the coordinator says
// PRODUCER_FENCED) and cannot join the next transaction, which the
// producer runs at the epoch EndTxn v5 answered.
func TestLateProduceFencedByEpochBump(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"transaction.state.log.num.partitions": "2"})
	createTopic(t, b.addr, "late2", 1, nil)
	cl := client(t, b.addr)
	p := initTxn(t, cl, "late2", 30)
	id := "late2"
	produce := func(epoch int16, seq int32, v string) int16 {
		pr := kmsg.NewPtrProduceRequest()
		pr.Acks, pr.TimeoutMillis, pr.TransactionID = -1, 5000, &id
		pr.Topics = []kmsg.ProduceRequestTopic{{Topic: "late2", Partitions: []kmsg.ProduceRequestTopicPartition{
			{Partition: 0, Records: txnRecords(t, p.ProducerID, epoch, seq, v)}}}}
		resp, err := pr.RequestWith(ctx(t), cl) // v12: the partition is added by the produce
		if err != nil {
			t.Fatalf("produce: %v", err)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	if code := produce(p.ProducerEpoch, 0, "in"); code != 0 {
		t.Fatalf("produce v12 without AddPartitionsToTxn: %v", kerr.ErrorForCode(code))
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = id, p.ProducerID, p.ProducerEpoch, true
	er, err := end.RequestWith(ctx(t), cl)
	if err != nil || er.ErrorCode != 0 || er.ProducerID != p.ProducerID || er.ProducerEpoch != p.ProducerEpoch+1 {
		t.Fatalf("EndTxn v5: %v %+v, want pid %d epoch %d", err, er, p.ProducerID, p.ProducerEpoch+1)
	}
	if code := produce(p.ProducerEpoch, 1, "late"); code != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("late produce of the committed transaction: %v, want INVALID_PRODUCER_EPOCH", kerr.ErrorForCode(code))
	}
	if code := produce(er.ProducerEpoch, 0, "next"); code != 0 {
		t.Fatalf("produce of the next transaction: %v", kerr.ErrorForCode(code))
	}
	if d := describeOne(t, cl, id); d.State != "Ongoing" || d.ProducerEpoch != er.ProducerEpoch {
		t.Fatalf("after the next produce: %s epoch %d", d.State, d.ProducerEpoch)
	}
	got := readAll(t, b.addr, "late2", false, 2)
	if !slices.Equal(got, []string{"in", "next"}) {
		t.Fatalf("read_uncommitted: %v, want [in next]: the late produce was not appended", got)
	}
}

// Kafka 4.x: which version a transaction ends at is decided per request,
// from the EndTxn version and the cluster's transaction.version. With
// the feature set down to 1 (UpdateFeatures, as kafka-features does),
// even an EndTxn v5 keeps the epoch and answers no producer id or
// epoch; set back to 2, the next EndTxn v5 bumps it.
func TestTransactionVersionFollowsTheFeature(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"transaction.state.log.num.partitions": "2"})
	createTopic(t, b.addr, "feat", 1, nil)
	cl := client(t, b.addr)
	setLevel := func(level int16, upgradeType int8) {
		t.Helper()
		res, err := kadm.NewClient(cl).UpdateFeatures(ctx(t), false,
			kadm.FeatureUpdate{Feature: "transaction.version", MaxVersionLevel: level, UpgradeType: upgradeType})
		if err != nil || res.Error() != nil {
			t.Fatalf("transaction.version %d: %v %v", level, err, res.Error())
		}
	}
	const id = "feat-tx"
	p := initTxn(t, cl, id, 30)
	commit := func(epoch int16) *kmsg.EndTxnResponse {
		t.Helper()
		if code := addPartitions(t, b.addr, 3, id, &kmsg.InitProducerIDResponse{ProducerID: p.ProducerID, ProducerEpoch: epoch}, "feat"); code != 0 {
			t.Fatalf("AddPartitionsToTxn: %v", kerr.ErrorForCode(code))
		}
		end := kmsg.NewPtrEndTxnRequest() // v5: kgo sends the highest version both know
		end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = id, p.ProducerID, epoch, true
		resp, err := end.RequestWith(ctx(t), cl)
		if err != nil || resp.ErrorCode != 0 || resp.Version < 5 {
			t.Fatalf("EndTxn: %v %+v", err, resp)
		}
		waitWithin(t, 10*time.Second, "the commit complete", func() bool { return describeOne(t, cl, id).State == "CompleteCommit" })
		return resp
	}
	setLevel(1, 2) // SAFE_DOWNGRADE
	if r := commit(p.ProducerEpoch); r.ProducerID != -1 || r.ProducerEpoch != -1 || describeOne(t, cl, id).ProducerEpoch != p.ProducerEpoch {
		t.Fatalf("EndTxn v5 at transaction.version 1: pid %d epoch %d, state epoch %d; want -1, -1 and the epoch kept",
			r.ProducerID, r.ProducerEpoch, describeOne(t, cl, id).ProducerEpoch)
	}
	setLevel(2, 1) // UPGRADE
	if r := commit(p.ProducerEpoch); r.ProducerID != p.ProducerID || r.ProducerEpoch != p.ProducerEpoch+1 {
		t.Fatalf("EndTxn v5 at transaction.version 2: pid %d epoch %d, want %d %d", r.ProducerID, r.ProducerEpoch,
			p.ProducerID, p.ProducerEpoch+1)
	}
}
