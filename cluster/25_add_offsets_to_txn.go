package cluster

// AddOffsetsToTxn, versions 0-4 (v4: the client knows
// TRANSACTION_ABORTABLE, KIP-890).
//
// The __consumer_offsets partition of the group joins the producer's
// transaction (package txn), so that the group's TxnOffsetCommit
// offsets get the transaction's marker. PRODUCER_FENCED is
// INVALID_PRODUCER_EPOCH before v2 (KIP-588). Always transaction
// version 0, as in Kafka (a version 2 client sends TxnOffsetCommit v5
// instead). Held while the previous transaction ends (txn_hold.go).
//
// Authorization: Write on the TransactionalId
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), Read on the group
// (GROUP_AUTHORIZATION_FAILED), as Kafka's KafkaApis.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/group"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/txn"
)

func init() {
	register(&api{key: kmsg.AddOffsetsToTxn.Int16(), min: 0, max: 4, serve: serveAddOffsetsToTxn})
}

func serveAddOffsetsToTxn(b *Broker, r *vnet.Request, kreq kmsg.Request, respond func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.AddOffsetsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	if resp.ErrorCode = b.addOffsetsRefusal(r, req); resp.ErrorCode != 0 {
		return resp // Write on the TransactionalId, Read on the group
	}
	tp := txn.TopicPartition{Topic: group.OffsetsTopic, Partition: group.PartitionFor(req.Group, len(b.groups.shards))}
	var code int16
	add := func(c *txn.Coordinator) bool {
		code = c.AddOffsets(time.Now(), req.TransactionalID, req.ProducerID, req.ProducerEpoch, tp)
		return concurrent(code)
	}
	return b.answerHeld(req.TransactionalID, r.Version, respond, add, func() kmsg.Response {
		resp.ErrorCode = fencedForVersion(code, r.Version, 2)
		return resp
	})
}
