package controller

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/varve/varve/metadata"
)

// BrokerRegistration (api key 62): a broker joins the cluster, or
// rejoins it after a restart, and gets its broker epoch.

// RegisterRequest is a broker's registration. Kafka:
// BrokerRegistrationRequest (api key 62).
type RegisterRequest struct {
	BrokerID      int32
	IncarnationID [16]byte // random per process start
	Endpoints     []metadata.Endpoint
	Rack          string
	// PreviousBrokerEpoch is the epoch the broker held before it shut
	// down cleanly, -1 when it did not (KIP-966).
	PreviousBrokerEpoch int64
	// ProducerIDFloor is one more than the highest producer id in the
	// broker's logs (0: none). Not Kafka's: a Varve broker that adopted
	// partitions whose producer state this cluster never handed out
	// (a Kafka log dir copied in) names it, so that no producer id at
	// or below one of theirs is handed out after it registers.
	ProducerIDFloor int64
}

// RegisterResponse answers a registration: the broker's new epoch, or
// an error.
type RegisterResponse struct {
	Records     []metadata.Record
	Err         error // nil, or a kerr error
	BrokerEpoch int64
}

// Register registers a broker at time now. Its epoch is the log offset
// of its RegisterBrokerRecord (Kafka: ClusterControlManager.registerBroker
// takes the next write offset). A new registration starts fenced, and
// is unfenced once its heartbeats show it has replayed the log up to it.
//
// A broker that registers again while its previous registration is
// unfenced is fenced first (out of every ISR, its leaderships moved):
// a process that did not shut down cleanly may have lost records it had
// acknowledged, and Kafka 3.7+ removes it from ISRs on such an unclean
// shutdown (KIP-966). A different incarnation of a broker id whose
// session is still alive, and that does not name the registration's
// epoch as its previous one, is a second process with the same node.id:
// DUPLICATE_BROKER_REGISTRATION (Kafka: ClusterControlManager).
//
// A registration naming a producer-id floor above the cluster's next
// producer id moves the next id up to it, with a ProducerIdsRecord in
// the same batch as the registration: the broker is fenced until it has
// replayed both, so no block handed out once it can lead is below the
// floor. Replayed by every controller, the floor survives a failover;
// naming it again (a retried or later registration) changes nothing.
func (c *Controller) Register(now int64, req RegisterRequest) (RegisterResponse, error) {
	if req.BrokerID < 0 {
		return RegisterResponse{Err: kerr.InvalidRequest}, nil
	}
	old, registered := c.img.Broker(req.BrokerID)
	if s := c.sessions[req.BrokerID]; registered && s != nil && c.alive(s, now) &&
		old.IncarnationID != req.IncarnationID && old.Epoch != req.PreviousBrokerEpoch {
		return RegisterResponse{Err: kerr.DuplicateBrokerRegistration}, nil
	}
	var recs []metadata.Record
	if registered && !old.Fenced {
		fence, err := c.fence(old)
		if err != nil {
			return RegisterResponse{}, err
		}
		recs = fence
	}
	epoch := c.end
	reg := []metadata.Record{metadata.RegisterBrokerRecord{BrokerID: req.BrokerID, IncarnationID: req.IncarnationID, BrokerEpoch: epoch,
		Endpoints: req.Endpoints, Rack: req.Rack, Fenced: true}}
	if req.ProducerIDFloor > c.img.ProducerIDs().NextProducerID {
		reg = append(reg, metadata.ProducerIdsRecord{BrokerID: req.BrokerID, BrokerEpoch: epoch, NextProducerID: req.ProducerIDFloor})
	}
	if err := c.propose(reg); err != nil {
		return RegisterResponse{}, err
	}
	c.sessions[req.BrokerID] = &session{lastContactMs: now, metadataOffset: -1}
	delete(c.shutdownOffset, req.BrokerID)
	return RegisterResponse{Records: append(recs, reg...), BrokerEpoch: epoch}, nil
}

// alive reports whether a session has heard from its broker within
// broker.session.timeout.ms. Kafka: BrokerHeartbeatManager.hasValidSession.
func (c *Controller) alive(s *session, now int64) bool {
	return now <= s.lastContactMs+c.cfg.SessionTimeoutMs
}
