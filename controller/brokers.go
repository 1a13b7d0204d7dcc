package controller

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/varve/varve/metadata"
)

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
	reg := metadata.RegisterBrokerRecord{BrokerID: req.BrokerID, IncarnationID: req.IncarnationID, BrokerEpoch: epoch,
		Endpoints: req.Endpoints, Rack: req.Rack, Fenced: true}
	if err := c.propose([]metadata.Record{reg}); err != nil {
		return RegisterResponse{}, err
	}
	c.sessions[req.BrokerID] = &session{lastContactMs: now, metadataOffset: -1}
	delete(c.shutdownOffset, req.BrokerID)
	return RegisterResponse{Records: append(recs, reg), BrokerEpoch: epoch}, nil
}

// alive reports whether a session has heard from its broker within
// broker.session.timeout.ms. Kafka: BrokerHeartbeatManager.hasValidSession.
func (c *Controller) alive(s *session, now int64) bool {
	return now <= s.lastContactMs+c.cfg.SessionTimeoutMs
}

// HeartbeatRequest is a broker's heartbeat. Kafka: BrokerHeartbeatRequest
// (api key 63).
type HeartbeatRequest struct {
	BrokerID       int32
	BrokerEpoch    int64
	MetadataOffset int64 // the offset of the last metadata record the broker replayed
	WantFence      bool
	WantShutDown   bool
}

// HeartbeatResponse answers a heartbeat.
type HeartbeatResponse struct {
	Records        []metadata.Record
	Err            error // nil, or a kerr error
	IsCaughtUp     bool
	IsFenced       bool
	ShouldShutDown bool
}

// Heartbeat handles a broker's heartbeat at time now: it keeps the
// broker's session alive, unfences a broker that has caught up with the
// log (its metadata offset has reached its registration), fences one
// that asks to be fenced, and runs a controlled shutdown. Kafka:
// BrokerHeartbeatManager.calculateNextBrokerState.
func (c *Controller) Heartbeat(now int64, req HeartbeatRequest) (HeartbeatResponse, error) {
	b, ok := c.img.Broker(req.BrokerID)
	if !ok {
		return HeartbeatResponse{Err: kerr.BrokerIDNotRegistered}, nil
	}
	if b.Epoch != req.BrokerEpoch {
		return HeartbeatResponse{Err: kerr.StaleBrokerEpoch}, nil
	}
	s := c.sessions[b.ID]
	if s == nil {
		s = &session{}
		c.sessions[b.ID] = s
	}
	s.lastContactMs, s.metadataOffset = now, req.MetadataOffset
	recs, err := c.nextBrokerState(b, req)
	if err != nil {
		return HeartbeatResponse{}, err
	}
	b, _ = c.img.Broker(req.BrokerID)
	return HeartbeatResponse{
		Records:        recs,
		IsCaughtUp:     req.MetadataOffset >= b.Epoch,
		IsFenced:       b.Fenced,
		ShouldShutDown: req.WantShutDown && c.mayShutDown(b),
	}, nil
}

// nextBrokerState moves a broker between fenced, unfenced and
// controlled shutdown as its heartbeat asks.
func (c *Controller) nextBrokerState(b *metadata.Broker, req HeartbeatRequest) ([]metadata.Record, error) {
	switch {
	case req.WantShutDown && !b.Fenced:
		return c.controlledShutdown(b)
	case req.WantShutDown, b.InControlledShutdown:
		return nil, nil
	case b.Fenced && !req.WantFence && req.MetadataOffset >= b.Epoch:
		return c.unfence(b)
	case !b.Fenced && req.WantFence:
		return c.fence(b)
	}
	return nil, nil
}

// fence fences b: it leaves every ISR and its leaderships move, in the
// same list of records. Kafka: ReplicationControlManager.handleBrokerFenced.
func (c *Controller) fence(b *metadata.Broker) ([]metadata.Record, error) {
	rec := []metadata.Record{metadata.BrokerRegistrationChangeRecord{
		BrokerID: b.ID, BrokerEpoch: b.Epoch, Fenced: metadata.FenceBroker}}
	if err := c.propose(rec); err != nil {
		return nil, err
	}
	moves := c.removeFromPartitions(b.ID)
	if err := c.propose(moves); err != nil {
		return nil, err
	}
	return append(rec, moves...), nil
}

// unfence unfences b and elects leaders for the partitions it can now
// lead. Kafka: ReplicationControlManager.handleBrokerUnfenced.
func (c *Controller) unfence(b *metadata.Broker) ([]metadata.Record, error) {
	rec := []metadata.Record{metadata.BrokerRegistrationChangeRecord{
		BrokerID: b.ID, BrokerEpoch: b.Epoch, Fenced: metadata.UnfenceBroker}}
	if err := c.propose(rec); err != nil {
		return nil, err
	}
	elected := c.electLeaderless()
	if err := c.propose(elected); err != nil {
		return nil, err
	}
	return append(rec, elected...), nil
}

// Tick handles the passing of time: it fences every unfenced broker
// whose session has expired (no heartbeat for broker.session.timeout.ms)
// and, every leader.imbalance.check.interval.seconds, moves leaderships
// back to preferred replicas when auto.leader.rebalance.enable is set.
// Kafka: QuorumController's maybeFenceStaleBroker and
// maybeBalancePartitionLeaders.
func (c *Controller) Tick(now int64) ([]metadata.Record, error) {
	var recs []metadata.Record
	for _, b := range c.img.Brokers() {
		s := c.sessions[b.ID]
		if b.Fenced || s == nil || c.alive(s, now) {
			continue
		}
		fence, err := c.fence(b)
		if err != nil {
			return nil, err
		}
		recs = append(recs, fence...)
	}
	if c.cfg.AutoLeaderRebalance && now >= c.nextBalanceMs {
		c.nextBalanceMs = now + c.cfg.LeaderImbalanceCheckIntervalMs
		moves, err := c.rebalance()
		if err != nil {
			return nil, err
		}
		recs = append(recs, moves...)
	}
	return recs, nil
}

// lowestActiveOffset is the lowest metadata offset the active brokers
// have reported: every one of them has replayed the log up to it. Kafka:
// BrokerHeartbeatManager.lowestActiveOffset.
func (c *Controller) lowestActiveOffset() int64 {
	lowest := int64(math.MaxInt64)
	for _, b := range c.img.Brokers() {
		if s := c.sessions[b.ID]; c.active(b.ID) && s != nil {
			lowest = min(lowest, s.metadataOffset)
		}
	}
	return lowest
}
