package cluster

// EndTxn, versions 0-4.
//
// Commits or aborts the producer's transaction (package txn, transaction
// version 1): answered once PrepareCommit or PrepareAbort is written; the
// markers are written to the partitions afterwards (txn_markers.go).
// PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2 (KIP-588).
//
// Authorization: Write on the TransactionalId
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), as Kafka's KafkaApis.
//
// Not served: v5 (transaction version 2, KIP-890 part 2's epoch bump at
// every EndTxn, which is not advertised).

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/txn"
)

func init() {
	register(&api{key: kmsg.EndTxn.Int16(), min: 0, max: 4, serve: serveEndTxn})
}

func serveEndTxn(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.EndTxnRequest)
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	if resp.ErrorCode = b.txnIDRefusal(r, acl.OpWrite, req.TransactionalID); resp.ErrorCode != 0 {
		return resp
	}
	b.txns.do(req.TransactionalID, func(c *txn.Coordinator) {
		resp.ErrorCode = c.EndTxn(time.Now(), req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit)
	})
	resp.ErrorCode = fencedForVersion(resp.ErrorCode, r.Version, 2)
	return resp
}
