package cluster

// EndTxn, versions 0-5.
//
// Commits or aborts the producer's transaction (package txn): answered
// once PrepareCommit or PrepareAbort is written; the markers are written
// to the partitions afterwards (txn_markers.go). v5 on a cluster at
// transaction.version 2 is transaction version 2 (KIP-890 part 2): the
// epoch is bumped and the answer carries the producer id and epoch the
// client goes on with; older versions, or v5 below level 2, keep the
// epoch (Kafka's transactionVersionForEndTxn). An EndTxn that arrives
// while the previous transaction's markers are still written is held
// until they are (txn_hold.go). PRODUCER_FENCED is
// INVALID_PRODUCER_EPOCH before v2 (KIP-588).
//
// Authorization: Write on the TransactionalId
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), as Kafka's KafkaApis.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/txn"
)

func init() {
	register(&api{key: kmsg.EndTxn.Int16(), min: 0, max: 5, serve: serveEndTxn})
}

func serveEndTxn(b *Broker, r *vnet.Request, kreq kmsg.Request, respond func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.EndTxnRequest)
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if resp.ErrorCode = b.txnIDRefusal(r, acl.OpWrite, req.TransactionalID); resp.ErrorCode != 0 {
		return resp
	}
	var tv int16
	if r.Version >= 5 && b.transactionVersion() >= 2 {
		tv = 2
	}
	var res txn.EndResult
	end := func(c *txn.Coordinator) bool {
		res = c.EndTxn(time.Now(), req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit, tv)
		return concurrent(res.Code)
	}
	return b.answerHeld(req.TransactionalID, r.Version, respond, end, func() kmsg.Response {
		resp.ProducerID, resp.ProducerEpoch = res.ProducerID, res.Epoch
		resp.ErrorCode = fencedForVersion(res.Code, r.Version, 2)
		return resp
	})
}
