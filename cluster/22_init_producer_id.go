package cluster

// InitProducerId, versions 0-5.
//
// Idempotent producers (no transactional id) get a fresh producer id and
// epoch 0; ids come from blocks reserved in the metadata file, so an id is
// never handed out twice, even across restarts. A request carrying a
// producer id and epoch (KIP-360, v3+) to bump gets the same id with the
// next epoch.
//
// A transactional id goes to the transaction coordinator of its
// __transaction_state partition (package txn), which bumps its epoch,
// fences the previous producer and aborts its open transaction; the
// request is held until that abort's markers are written, or those of
// a transaction ending as it arrives (txn_hold.go).
// PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v4 (KIP-588).

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/txn"
)

func init() {
	register(&api{key: kmsg.InitProducerID.Int16(), min: 0, max: 5, serve: serveInitProducerID})
}

func serveInitProducerID(b *Broker, r *vnet.Request, kreq kmsg.Request, respond func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if err := b.initProducerIDError(r, req); err != nil {
		resp.ErrorCode = errorCode(err)
		return resp
	}
	if req.TransactionalID != nil {
		id := *req.TransactionalID
		var res txn.InitResult
		init := func(c *txn.Coordinator) bool {
			res = c.InitProducerID(time.Now(), id, req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch)
			return concurrent(res.Code)
		}
		return b.answerHeld(id, r.Version, respond, init, func() kmsg.Response {
			resp.ProducerID, resp.ProducerEpoch = res.ProducerID, res.Epoch
			resp.ErrorCode = fencedForVersion(res.Code, r.Version, 4)
			return resp
		})
	}
	if req.ProducerID >= 0 && req.ProducerEpoch >= 0 && req.ProducerEpoch < 32767 {
		resp.ProducerID, resp.ProducerEpoch = req.ProducerID, req.ProducerEpoch+1
		return resp
	}
	id, err := b.nextProducerID()
	if err != nil {
		resp.ErrorCode = kerr.KafkaStorageError.Code
		return resp
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return resp
}

// fencedForVersion is KIP-588's compatibility rule: clients of versions
// before the one that knows PRODUCER_FENCED get INVALID_PRODUCER_EPOCH,
// which they treat the same way.
func fencedForVersion(code, version, since int16) int16 {
	if code == kerr.ProducerFenced.Code && version < since {
		return kerr.InvalidProducerEpoch.Code
	}
	return code
}
