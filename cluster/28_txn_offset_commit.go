package cluster

// TxnOffsetCommit, versions 0-3 (v3: the member id, generation and
// instance id of KIP-447).
//
// The group's coordinator writes the offsets in a transactional batch of
// the producer and keeps them pending until the transaction's marker
// reaches the group's __consumer_offsets partition (package group,
// txn_offsets.go; completeGroupTxn below). PRODUCER_FENCED is
// INVALID_PRODUCER_EPOCH before v3 (KIP-588).
//
// Authorization, as Kafka's KafkaApis: Write on the TransactionalId
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), Read on the group
// (GROUP_AUTHORIZATION_FAILED), Read on each topic
// (TOPIC_AUTHORIZATION_FAILED), answered per partition.
//
// Not served: v4 and up (transaction version 2, which is not advertised).

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/group"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.TxnOffsetCommit.Int16(), min: 0, max: 3, serve: serveTxnOffsetCommit})
}

func serveTxnOffsetCommit(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.TxnOffsetCommitRequest)
	sub, refused := b.authorizeTxnOffsetCommit(r, req)
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	if len(sub.Topics) > 0 || len(refused) == 0 {
		b.groups.do(req.Group, func(c *group.Coordinator) { resp = c.TxnCommitOffsets(time.Now(), sub) })
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
