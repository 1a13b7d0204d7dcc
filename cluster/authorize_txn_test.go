package cluster_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// txnACLNode is an ACL node with topics orders and bobs, alice allowed
// to write orders in transaction alice-tx (and to read group app), bob
// allowed to write bobs and to describe, not write, the TransactionalIds
// alice-tx and bob-tx.
func txnACLNode(t *testing.T) *aclNode {
	t.Helper()
	n := startACLNode(t, t.TempDir(), map[string]string{"auto.create.topics.enable": "false",
		"transaction.state.log.num.partitions": "2"})
	adm := n.admin(t)
	for _, topic := range []string{"orders", "bobs"} {
		if res, err := adm.CreateTopic(ctx(t), 1, 1, nil, topic); err != nil || res.Err != nil {
			t.Fatalf("create %s: %v %v", topic, err, res.Err)
		}
	}
	lit := kadm.ACLPatternLiteral
	allowACL(t, adm, kadm.NewACLs().Allow("User:alice").Topics("orders").ResourcePatternType(lit).Operations(kadm.OpWrite, kadm.OpRead))
	allowACL(t, adm, kadm.NewACLs().Allow("User:alice").TransactionalIDs("alice-tx").ResourcePatternType(lit).Operations(kadm.OpWrite))
	allowACL(t, adm, kadm.NewACLs().Allow("User:alice").Groups("app").ResourcePatternType(lit).Operations(kadm.OpRead))
	allowACL(t, adm, kadm.NewACLs().Allow("User:bob").Topics("bobs").ResourcePatternType(lit).Operations(kadm.OpWrite))
	allowACL(t, adm, kadm.NewACLs().Allow("User:bob").TransactionalIDs("alice-tx", "bob-tx").ResourcePatternType(lit).Operations(kadm.OpDescribe))
	return n
}

func txnClient(t *testing.T, n *aclNode, user, id, topic string) *kgo.Client {
	// Transaction version 1: these tests check the ACLs of its requests
	// (AddPartitionsToTxn among them), which version 2 does not send.
	return n.as(t, user, kgo.TransactionalID(id), kgo.DefaultProduceTopic(topic), kgo.TransactionTimeout(10*time.Second),
		kgo.MaxVersions(tv1Versions()))
}

// Kafka: a transactional producer needs Write on its TransactionalId
// (InitProducerId, AddPartitionsToTxn, EndTxn) and on each topic; with
// the ACLs it commits, without Write on the TransactionalId it fails
// with TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
func TestACLTransactionalProducer(t *testing.T) {
	n := txnACLNode(t)
	alice := txnClient(t, n, "alice", "alice-tx", "orders")
	if err := inTxn(t, alice, true, "a1", "a2"); err != nil {
		t.Fatalf("alice, with the ACLs: %v", err)
	}
	reader := n.as(t, "admin", kgo.ConsumeTopics("orders"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	for len(got) < 2 {
		fs := reader.PollFetches(ctx(t))
		if err := fs.Err0(); err != nil {
			t.Fatalf("read_committed after alice's commit: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if !slices.Equal(got, []string{"a1", "a2"}) {
		t.Errorf("read_committed after alice's commit: %v", got)
	}
	// Write on alice-tx denied after InitProducerId: the next transaction's
	// AddPartitionsToTxn is refused.
	allowACL(t, n.admin(t), kadm.NewACLs().Deny("User:alice").DenyHosts().TransactionalIDs("alice-tx").
		ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpWrite))
	if err := inTxn(t, alice, true, "a3"); err == nil || !strings.Contains(err.Error(), kerr.TransactionalIDAuthorizationFailed.Message) {
		t.Errorf("alice, Write on alice-tx denied: %v, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED", err)
	}
	bob := txnClient(t, n, "bob", "bob-tx", "bobs")
	err := bob.BeginTransaction() // franz-go has asked InitProducerId already
	if err == nil {
		err = bob.ProduceSync(ctx(t), &kgo.Record{Value: []byte("b")}).FirstErr()
	}
	// franz-go reports the fatal producer id error by its message.
	if err == nil || !strings.Contains(err.Error(), kerr.TransactionalIDAuthorizationFailed.Message) {
		t.Errorf("bob, Describe but no Write on bob-tx: %v, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED", err)
	}
}

// Kafka: KafkaApis.handleAddPartitionsToTxnRequest. A client's request
// (v0-3) needs Write on the TransactionalId, then Write on each topic;
// an internal topic is refused even to a super user; a refused
// partition leaves the others OPERATION_NOT_ATTEMPTED.
func TestACLAddPartitionsToTxn(t *testing.T) {
	n := txnACLNode(t)
	alice := txnClient(t, n, "alice", "alice-tx", "orders")
	if err := inTxn(t, alice, true, "a1"); err != nil { // alice-tx has a producer id
		t.Fatal(err)
	}
	pid, epoch := producerOf(t, n, "alice-tx")
	v3 := kversion.Stable()
	v3.SetMaxKeyVersion(kmsg.AddPartitionsToTxn.Int16(), 3)
	add := func(user string, topics ...string) map[string]int16 {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch = "alice-tx", pid, epoch
		for _, topic := range topics {
			rt := kmsg.NewAddPartitionsToTxnRequestTopic()
			rt.Topic, rt.Partitions = topic, []int32{0}
			req.Topics = append(req.Topics, rt)
		}
		out := map[string]int16{}
		for _, rt := range request[*kmsg.AddPartitionsToTxnResponse](t, n.as(t, user, kgo.MaxVersions(v3)), req).Topics {
			out[rt.Topic] = rt.Partitions[0].ErrorCode
		}
		return out
	}
	xac, tac, nat := kerr.TransactionalIDAuthorizationFailed.Code, kerr.TopicAuthorizationFailed.Code, kerr.OperationNotAttempted.Code
	if got := add("bob", "bobs"); got["bobs"] != xac {
		t.Errorf("bob, without Write on alice-tx: %v", got)
	}
	if got := add("alice", "orders", "bobs"); got["orders"] != nat || got["bobs"] != tac {
		t.Errorf("alice, orders and bobs: %v, want OPERATION_NOT_ATTEMPTED and TOPIC_AUTHORIZATION_FAILED", got)
	}
	if got := add("admin", "__consumer_offsets"); got["__consumer_offsets"] != tac {
		t.Errorf("admin, an internal topic: %v", got)
	}
	if got := add("alice", "orders"); got["orders"] != 0 {
		t.Errorf("alice, orders: %v", got)
	}
}

// producerOf is the producer id and epoch of a transactional id, as the
// super user describes it.
func producerOf(t *testing.T, n *aclNode, id string) (int64, int16) {
	t.Helper()
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{id}
	st := request[*kmsg.DescribeTransactionsResponse](t, findTxnCoordinator(t, n.as(t, "admin"), id), req).TransactionStates[0]
	if st.ErrorCode != 0 {
		t.Fatalf("describe %s: %d", id, st.ErrorCode)
	}
	return st.ProducerID, st.ProducerEpoch
}

// findTxnCoordinator returns cl once the node answers FindCoordinator
// for id (the node is its own coordinator).
func findTxnCoordinator(t *testing.T, cl *kgo.Client, id string) *kgo.Client {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType, req.CoordinatorKey, req.CoordinatorKeys = 1, id, []string{id}
	request[*kmsg.FindCoordinatorResponse](t, cl, req)
	return cl
}

// Kafka: AddOffsetsToTxn needs Write on the TransactionalId and Read on
// the group; TxnOffsetCommit also Read on each topic.
func TestACLTransactionalOffsets(t *testing.T) {
	n := txnACLNode(t)
	alice := txnClient(t, n, "alice", "alice-tx", "orders")
	if err := inTxn(t, alice, true, "a1"); err != nil {
		t.Fatal(err)
	}
	pid, epoch := producerOf(t, n, "alice-tx")
	addOffsets := func(group string) int16 {
		req := kmsg.NewPtrAddOffsetsToTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = "alice-tx", pid, epoch, group
		return request[*kmsg.AddOffsetsToTxnResponse](t, n.as(t, "alice"), req).ErrorCode
	}
	if c := addOffsets("other"); c != kerr.GroupAuthorizationFailed.Code {
		t.Errorf("alice, group other: %d", c)
	}
	if c := addOffsets("app"); c != 0 {
		t.Errorf("alice, group app: %d", c)
	}
	commit := func(topic string) int16 {
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = "alice-tx", "app", pid, epoch, -1
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Offset = 1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return request[*kmsg.TxnOffsetCommitResponse](t, n.as(t, "alice"), req).Topics[0].Partitions[0].ErrorCode
	}
	if c := commit("bobs"); c != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("alice commits bobs: %d", c)
	}
	if c := commit("orders"); c == kerr.TopicAuthorizationFailed.Code || c == kerr.GroupAuthorizationFailed.Code {
		t.Errorf("alice commits orders: refused with %d", c)
	}
}

// Kafka: ListTransactions lists only the TransactionalIds the principal
// may describe; DescribeTransactions needs Describe on each and lists
// only the topics the principal may describe (KafkaApis,
// kafka-transactions list|describe).
func TestACLListDescribeTransactions(t *testing.T) {
	n := txnACLNode(t)
	alice := txnClient(t, n, "alice", "alice-tx", "orders")
	if err := alice.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := alice.ProduceSync(ctx(t), &kgo.Record{Value: []byte("open")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	defer alice.EndTransaction(ctx(t), kgo.TryAbort)
	hidden := txnClient(t, n, "admin", "hidden-tx", "orders")
	if err := inTxn(t, hidden, true, "h"); err != nil {
		t.Fatal(err)
	}
	list := func(user string) []string {
		var ids []string
		for _, st := range request[*kmsg.ListTransactionsResponse](t, n.as(t, user), kmsg.NewPtrListTransactionsRequest()).TransactionStates {
			ids = append(ids, st.TransactionalID)
		}
		slices.Sort(ids)
		return ids
	}
	if got := list("admin"); !slices.Equal(got, []string{"alice-tx", "hidden-tx"}) {
		t.Errorf("admin lists %v", got)
	}
	if got := list("bob"); !slices.Equal(got, []string{"alice-tx"}) {
		t.Errorf("bob lists %v, want alice-tx only", got)
	}
	describe := func(user string) kmsg.DescribeTransactionsResponseTransactionState {
		req := kmsg.NewPtrDescribeTransactionsRequest()
		req.TransactionalIDs = []string{"alice-tx"}
		return request[*kmsg.DescribeTransactionsResponse](t, n.as(t, user), req).TransactionStates[0]
	}
	if st := describe("admin"); st.ErrorCode != 0 || len(st.Topics) != 1 || st.Topics[0].Topic != "orders" {
		t.Errorf("admin describes alice-tx: %d %v", st.ErrorCode, st.Topics)
	}
	if st := describe("bob"); st.ErrorCode != 0 || st.State != "Ongoing" || len(st.Topics) != 0 {
		t.Errorf("bob describes alice-tx: %d %s %v, want Ongoing without orders", st.ErrorCode, st.State, st.Topics)
	}
}
