package cluster_test

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// Kafka: KIP-98. A transactional producer finds its coordinator
// (FindCoordinator key type 1, which creates __transaction_state with
// Kafka's internal-topic configuration), gets a producer id and epoch,
// and a second InitProducerId for the same id fences the first
// (PRODUCER_FENCED, or INVALID_PRODUCER_EPOCH for AddPartitionsToTxn
// before v2, KIP-588).
func TestTransactionCoordinatorWire(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"transaction.state.log.num.partitions": "4"})
	createTopic(t, b.addr, "txn-in", 2, nil)
	cl := client(t, b.addr)

	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorType, fc.CoordinatorKeys = 1, []string{"app-1"}
	fr, err := fc.RequestWith(ctx(t), cl)
	if err != nil || fr.Coordinators[0].ErrorCode != 0 || fr.Coordinators[0].NodeID < 0 {
		t.Fatalf("FindCoordinator(transaction): %v %+v", err, fr)
	}
	adm := kadm.NewClient(cl)
	cfgs, err := adm.DescribeTopicConfigs(ctx(t), "__transaction_state")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range cfgs[0].Configs {
		got[c.Key] = c.MaybeValue()
	}
	for name, want := range map[string]string{"cleanup.policy": "compact", "min.insync.replicas": "1", "compression.type": "uncompressed"} {
		if got[name] != want {
			t.Errorf("__transaction_state %s = %q, want %q", name, got[name], want)
		}
	}
	td, err := adm.ListTopics(ctx(t), "__transaction_state")
	if err != nil || len(td["__transaction_state"].Partitions) != 4 {
		t.Fatalf("__transaction_state partitions: %v %v", err, td)
	}

	first := initTxn(t, cl, "app-1", 5)
	second := initTxn(t, cl, "app-1", 5)
	if second.ProducerID != first.ProducerID || second.ProducerEpoch != first.ProducerEpoch+1 {
		t.Fatalf("second InitProducerId %d/%d after %d/%d", second.ProducerID, second.ProducerEpoch, first.ProducerID, first.ProducerEpoch)
	}
	if code := addPartitions(t, b.addr, 3, "app-1", first, "txn-in"); code != kerr.ProducerFenced.Code {
		t.Errorf("zombie AddPartitionsToTxn v3: %s", kerr.ErrorForCode(code))
	}
	if code := addPartitions(t, b.addr, 1, "app-1", first, "txn-in"); code != kerr.InvalidProducerEpoch.Code {
		t.Errorf("zombie AddPartitionsToTxn v1: %s", kerr.ErrorForCode(code))
	}
	if code := addPartitions(t, b.addr, 3, "app-1", second, "no-such-topic"); code != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("AddPartitionsToTxn of a missing topic: %s", kerr.ErrorForCode(code))
	}
	if code := addPartitions(t, b.addr, 3, "app-1", second, "txn-in"); code != 0 {
		t.Fatalf("AddPartitionsToTxn: %s", kerr.ErrorForCode(code))
	}

	// Kafka: KIP-664. The tools see the ongoing transaction.
	ls, err := adm.ListTransactions(ctx(t), nil, []string{"Ongoing"})
	if err != nil || len(ls.TransactionalIDs()) != 1 || ls.TransactionalIDs()[0] != "app-1" {
		t.Fatalf("ListTransactions: %v %v", err, ls)
	}
	ds, err := adm.DescribeTransactions(ctx(t), "app-1", "unknown-id")
	if err != nil {
		t.Fatal(err)
	}
	d := ds["app-1"]
	if d.Err != nil || d.State != "Ongoing" || d.ProducerID != second.ProducerID || d.TimeoutMillis != 5000 || len(d.Topics["txn-in"]) != 1 {
		t.Fatalf("DescribeTransactions(app-1): %+v", d)
	}
	if u := ds["unknown-id"]; u.Err == nil || !errors.Is(u.Err, kerr.TransactionalIDNotFound) {
		t.Fatalf("DescribeTransactions(unknown-id): %+v", u)
	}

	// Kafka: transaction.max.timeout.ms.
	init := kmsg.NewPtrInitProducerIDRequest()
	id := "app-2"
	init.TransactionalID, init.TransactionTimeoutMillis = &id, 900_001
	ir, err := init.RequestWith(ctx(t), cl)
	if err != nil || ir.ErrorCode != kerr.InvalidTransactionTimeout.Code {
		t.Fatalf("InitProducerId over the max timeout: %v %+v", err, ir)
	}
}

func initTxn(t *testing.T, cl kmsg.Requestor, id string, timeoutSec int32) *kmsg.InitProducerIDResponse {
	t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID, req.TransactionTimeoutMillis = &id, timeoutSec*1000
	resp, err := req.RequestWith(ctx(t), cl)
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("InitProducerId(%s): %v %+v", id, err, resp)
	}
	return resp
}

// addPartitions adds partition 0 of topic at the given version and
// returns its code.
func addPartitions(t *testing.T, addr string, version int16, id string, p *kmsg.InitProducerIDResponse, topic string) int16 {
	t.Helper()
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(kmsg.AddPartitionsToTxn.Int16(), version)
	cl := client(t, addr, kgo.MaxVersions(vs))
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = version
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, p.ProducerID, p.ProducerEpoch
	rt := kmsg.NewAddPartitionsToTxnRequestTopic()
	rt.Topic, rt.Partitions = topic, []int32{0}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx(t), cl)
	if err != nil || resp.Version != version {
		t.Fatalf("AddPartitionsToTxn v%d: %v %+v", version, err, resp)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

// Kafka: KIP-98 AddOffsetsToTxn and TxnOffsetCommit, KIP-447
// require_stable. The group's offsets committed in a transaction are
// written to __consumer_offsets at once but stay pending: a fetch with
// require_stable gets UNSTABLE_OFFSET_COMMIT, one without sees the
// offset committed before.
func TestTxnOffsetCommitPending(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"transaction.state.log.num.partitions": "2"})
	createTopic(t, b.addr, "src", 1, nil)
	cl := client(t, b.addr)
	adm := kadm.NewClient(cl)
	if _, err := adm.CommitOffsets(ctx(t), "grp", kadm.OffsetsFromRecords(kgo.Record{Topic: "src", Partition: 0, Offset: 4})); err != nil {
		t.Fatal(err)
	}
	p := initTxn(t, cl, "eos", 30)
	ao := kmsg.NewPtrAddOffsetsToTxnRequest()
	ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = "eos", p.ProducerID, p.ProducerEpoch, "grp"
	if r, err := ao.RequestWith(ctx(t), cl); err != nil || r.ErrorCode != 0 {
		t.Fatalf("AddOffsetsToTxn: %v %+v", err, r)
	}
	tc := kmsg.NewPtrTxnOffsetCommitRequest()
	tc.TransactionalID, tc.Group, tc.ProducerID, tc.ProducerEpoch, tc.Generation = "eos", "grp", p.ProducerID, p.ProducerEpoch, -1
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = "src"
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = 0, 9
	rt.Partitions = append(rt.Partitions, rp)
	tc.Topics = append(tc.Topics, rt)
	if r, err := tc.RequestWith(ctx(t), cl); err != nil || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("TxnOffsetCommit: %v %+v", err, r)
	}
	for _, stable := range []bool{false, true} {
		of := kmsg.NewPtrOffsetFetchRequest()
		of.RequireStable = stable
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group = "grp"
		gt := kmsg.NewOffsetFetchRequestGroupTopic()
		gt.Topic, gt.Partitions = "src", []int32{0}
		g.Topics = append(g.Topics, gt)
		of.Groups = append(of.Groups, g)
		r, err := of.RequestWith(ctx(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		got := r.Groups[0].Topics[0].Partitions[0]
		want := kmsg.OffsetFetchResponseGroupTopicPartition{Offset: 5} // the record at 4 consumed
		if stable {
			want = kmsg.OffsetFetchResponseGroupTopicPartition{Offset: -1, ErrorCode: kerr.UnstableOffsetCommit.Code}
		}
		if got.Offset != want.Offset || got.ErrorCode != want.ErrorCode {
			t.Errorf("OffsetFetch require_stable=%v: offset %d code %d, want %d code %d", stable, got.Offset, got.ErrorCode, want.Offset, want.ErrorCode)
		}
	}
	// The commit's marker reaches __consumer_offsets: the offset is the
	// group's, stable.
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = "eos", p.ProducerID, p.ProducerEpoch, true
	if r, err := end.RequestWith(ctx(t), cl); err != nil || r.ErrorCode != 0 {
		t.Fatalf("EndTxn: %v %+v", err, r)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		offs, err := adm.FetchOffsets(ctx(t), "grp")
		if o, ok := offs.Lookup("src", 0); err == nil && ok && o.Err == nil && o.At == 9 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the committed transaction's offset never became the group's: %v %v", err, offs)
		}
	}
}

// Kafka: KIP-664 DescribeProducers, what kafka-transactions
// describe-producers prints: an idempotent producer's id, epoch and last
// sequence, no open transaction; a missing partition is
// UNKNOWN_TOPIC_OR_PARTITION.
func TestDescribeProducers(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	createTopic(t, b.addr, "idem", 1, nil)
	pc := client(t, b.addr, kgo.DefaultProduceTopic("idem"))
	for i := range 3 {
		produceSync(t, pc, &kgo.Record{Value: []byte{byte(i)}})
	}
	req := kmsg.NewPtrDescribeProducersRequest()
	for _, name := range []string{"idem", "missing"} {
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic, rt.Partitions = name, []int32{0}
		req.Topics = append(req.Topics, rt)
	}
	// Straight to the broker: the client would shard the request by
	// leader and answer for the missing topic itself.
	cl := client(t, b.addr)
	if err := cl.Ping(ctx(t)); err != nil {
		t.Fatal(err)
	}
	kresp, err := cl.DiscoveredBrokers()[0].Request(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	resp := kresp.(*kmsg.DescribeProducersResponse)
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || len(p.ActiveProducers) != 1 {
		t.Fatalf("idem-0: %+v", p)
	}
	ap := p.ActiveProducers[0]
	if ap.ProducerID < 0 || ap.ProducerEpoch != 0 || ap.LastSequence != 2 || ap.CurrentTxnStartOffset != -1 {
		t.Fatalf("active producer %+v, want epoch 0, last sequence 2, no transaction", ap)
	}
	if code := resp.Topics[1].Partitions[0].ErrorCode; code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("missing-0: %s", kerr.ErrorForCode(code))
	}
}

// Kafka: AutoTopicCreationManager creates an internal topic with its own
// configuration: a Metadata request naming __transaction_state creates
// it with transaction.state.log.num.partitions partitions, compacted,
// never with num.partitions.
func TestMetadataCreatesTransactionStateAsInternal(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"transaction.state.log.num.partitions": "3", "num.partitions": "1"})
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = true
	rt := kmsg.NewMetadataRequestTopic()
	name := "__transaction_state"
	rt.Topic = &name
	req.Topics = append(req.Topics, rt)
	cl := client(t, b.addr)
	if _, err := req.RequestWith(ctx(t), cl); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	td, err := adm.ListTopics(ctx(t), name)
	if err != nil || len(td[name].Partitions) != 3 || !td[name].IsInternal {
		t.Fatalf("%s: %v %+v", name, err, td[name])
	}
	cfgs, err := adm.DescribeTopicConfigs(ctx(t), name)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfgs[0].Configs {
		if c.Key == "cleanup.policy" && c.MaybeValue() != "compact" {
			t.Fatalf("cleanup.policy %q", c.MaybeValue())
		}
	}
}

// Kafka: KIP-890 part 1. The partition leader asks the transaction
// coordinator before it appends a transactional batch: a partition not
// added to the producer's transaction, or a produce arriving after the
// transaction ended, is refused, so no hanging transaction holds the
// last stable offset back: TRANSACTION_ABORTABLE from Produce v11, which
// knows the code, INVALID_TXN_STATE before (Kafka's
// AddPartitionsToTxnManager); an older epoch is INVALID_PRODUCER_EPOCH.
func TestTransactionalProduceVerified(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"transaction.state.log.num.partitions": "2"})
	createTopic(t, b.addr, "ver", 1, nil)
	cl := client(t, b.addr)
	tv1 := client(t, b.addr, kgo.MaxVersions(tv1Versions()))
	initTxn(t, cl, "late", 30)
	p := initTxn(t, cl, "late", 30) // epoch 1: epoch 0 is a zombie's
	id := "late"
	if code := produceTxnAt(t, cl, 10, "ver", &id, txnRecords(t, p.ProducerID, p.ProducerEpoch, 0, "early")); code != kerr.InvalidTxnState.Code {
		t.Fatalf("produce v10 before AddPartitionsToTxn: %s", kerr.ErrorForCode(code))
	}
	if code := produceTxn(t, cl, "ver", &id, txnRecords(t, p.ProducerID, p.ProducerEpoch, 0, "early")); code != kerr.TransactionAbortable.Code {
		t.Fatalf("produce v11 before AddPartitionsToTxn: %s", kerr.ErrorForCode(code))
	}
	if code := addPartitions(t, b.addr, 3, id, p, "ver"); code != 0 {
		t.Fatalf("AddPartitionsToTxn: %s", kerr.ErrorForCode(code))
	}
	if code := produceTxn(t, cl, "ver", &id, txnRecords(t, p.ProducerID, p.ProducerEpoch-1, 0, "old")); code != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("produce with an older epoch: %s", kerr.ErrorForCode(code))
	}
	if code := produceTxn(t, cl, "ver", &id, txnRecords(t, p.ProducerID, p.ProducerEpoch, 0, "in")); code != 0 {
		t.Fatalf("produce in the transaction: %s", kerr.ErrorForCode(code))
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = id, p.ProducerID, p.ProducerEpoch, true
	if r, err := end.RequestWith(ctx(t), tv1); err != nil || r.ErrorCode != 0 {
		t.Fatalf("EndTxn v4: %v %+v", err, r) // transaction version 1: the epoch stays
	}
	adm := kadm.NewClient(cl)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ds, err := adm.DescribeTransactions(ctx(t), id)
		if err == nil && ds[id].State == "CompleteCommit" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("transaction not complete: %v %+v", err, ds)
		}
	}
	if code := produceTxnAt(t, cl, 10, "ver", &id, txnRecords(t, p.ProducerID, p.ProducerEpoch, 1, "late")); code != kerr.InvalidTxnState.Code {
		t.Fatalf("produce v10 after the commit: %s", kerr.ErrorForCode(code))
	}
	if code := produceTxn(t, cl, "ver", &id, txnRecords(t, p.ProducerID, p.ProducerEpoch, 1, "late")); code != kerr.TransactionAbortable.Code {
		t.Fatalf("produce v11 after the commit: %s", kerr.ErrorForCode(code))
	}
}
