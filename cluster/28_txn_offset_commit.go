package cluster

// TxnOffsetCommit, versions 0-5 (v3: the member id, generation and
// instance id of KIP-447; v4: TRANSACTION_ABORTABLE known; v5: a client
// at transaction version 2, KIP-890 part 2).
//
// The group's coordinator writes the offsets in a transactional batch of
// the producer and keeps them pending until the transaction's marker
// reaches the group's __consumer_offsets partition (package group,
// txn_offsets.go; completeGroupTxn below). PRODUCER_FENCED is
// INVALID_PRODUCER_EPOCH before v3 (KIP-588).
//
// A v5 request on a cluster at transaction.version 2 comes without
// AddOffsetsToTxn: the group's __consumer_offsets partition is first
// added to the producer's transaction (txn_add.go), as Kafka's group
// coordinator does through its AddPartitionsToTxnManager. An older one
// comes after AddOffsetsToTxn, and the coordinator is asked whether the
// partition is in the ongoing transaction (KIP-890 part 1): if not, the
// commit is TRANSACTION_ABORTABLE from v4, INVALID_TXN_STATE before.
// If either fails, every partition gets its error and nothing is
// written.
//
// Authorization, as Kafka's KafkaApis: Write on the TransactionalId
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), Read on the group
// (GROUP_AUTHORIZATION_FAILED), Read on each topic
// (TOPIC_AUTHORIZATION_FAILED), answered per partition.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/group"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/txn"
)

func init() {
	register(&api{key: kmsg.TxnOffsetCommit.Int16(), min: 0, max: 5, serve: serveTxnOffsetCommit})
}

func serveTxnOffsetCommit(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.TxnOffsetCommitRequest)
	sub, refused := b.authorizeTxnOffsetCommit(r, req)
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	if len(sub.Topics) > 0 || len(refused) == 0 {
		if code := b.txnOffsetsPartition(r.Version, req); code != 0 {
			resp.Topics = txnOffsetCommitFailed(sub, code)
		} else {
			b.groups.do(req.Group, func(c *group.Coordinator) { resp = c.TxnCommitOffsets(time.Now(), sub) })
		}
	}
	resp.Topics = append(resp.Topics, refused...)
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			p := &resp.Topics[i].Partitions[j]
			p.ErrorCode = fencedForVersion(p.ErrorCode, r.Version, 3)
		}
	}
	return resp
}

// txnOffsetsPartition makes sure the group's __consumer_offsets
// partition is in the producer's transaction before its offsets are
// written, as Kafka's group coordinator does through its
// AddPartitionsToTxnManager: a v5 request at transaction version 2 adds
// it (txn_add.go), an older one has it verified (txn_verify.go): it was
// added by AddOffsetsToTxn, or the commit is TRANSACTION_ABORTABLE from
// v4, INVALID_TXN_STATE before. 0 if it is in; else the code every
// partition of the request gets.
func (b *Broker) txnOffsetsPartition(version int16, req *kmsg.TxnOffsetCommitRequest) int16 {
	tp := txn.TopicPartition{Topic: group.OffsetsTopic, Partition: group.PartitionFor(req.Group, len(b.groups.shards))}
	var code int16
	if version >= 5 && b.transactionVersion() >= 2 {
		code = b.addToTxn(req.TransactionalID, req.ProducerID, req.ProducerEpoch, tp)
	} else {
		code = b.verifyInTxn(req.TransactionalID, req.ProducerID, req.ProducerEpoch, tp)
	}
	return txnOffsetsVerifyCode(verifiedFor(code, version >= txnOffsetCommitAbortableVersion))
}

// txnOffsetsVerifyCode is Kafka's group coordinator's answer for a
// verification that failed (CoordinatorOperationExceptionHelper): a
// network error becomes COORDINATOR_LOAD_IN_PROGRESS, which clients
// retry at once; a timeout, COORDINATOR_NOT_AVAILABLE.
func txnOffsetsVerifyCode(code int16) int16 {
	switch code {
	case kerr.NetworkException.Code:
		return kerr.CoordinatorLoadInProgress.Code
	case kerr.NotEnoughReplicas.Code, kerr.RequestTimedOut.Code, kerr.UnknownTopicOrPartition.Code:
		return kerr.CoordinatorNotAvailable.Code
	}
	return code
}

// txnOffsetCommitFailed answers every partition of req with code.
func txnOffsetCommitFailed(req *kmsg.TxnOffsetCommitRequest, code int16) []kmsg.TxnOffsetCommitResponseTopic {
	var out []kmsg.TxnOffsetCommitResponseTopic
	for _, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		out = append(out, rt)
	}
	return out
}

// completeGroupTxn tells the group coordinator of a __consumer_offsets
// partition that producerID's transaction marker is written there, so
// that the offsets it committed in the transaction are applied or
// dropped (Kafka's GroupCoordinator.onTransactionCompleted). The
// partition's leader calls it once the marker is acknowledged
// (SetTxnMarkerWritten, set in txns.go).
func (b *Broker) completeGroupTxn(partition int32, producerID int64, commit bool) {
	if int(partition) >= len(b.groups.shards) {
		return
	}
	s := b.groups.shards[partition]
	s.do(func(c *group.Coordinator) { c.CompleteTxn(time.Now(), producerID, commit) })
	b.groups.kick(s)
}
