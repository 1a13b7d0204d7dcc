package cluster

// InitProducerId, versions 0-5.
//
// Idempotent producers (no transactional id) get a fresh producer id and
// epoch 0; ids come from blocks reserved in the metadata file, so an id is
// never handed out twice, even across restarts. A request carrying a
// producer id and epoch (KIP-360, v3+) to bump gets the same id with the
// next epoch.
//
// Not served: transactional ids (no transaction coordinator yet) get
// COORDINATOR_NOT_AVAILABLE.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.InitProducerID.Int16(), min: 0, max: 5, serve: serveInitProducerID})
}

func serveInitProducerID(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if err := b.initProducerIDError(r, req); err != nil {
		resp.ErrorCode = errorCode(err)
		return resp
	}
	if req.TransactionalID != nil {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp
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
