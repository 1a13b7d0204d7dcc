package controller

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/varve/varve/metadata"
)

// BrokerHeartbeat (api key 63): a broker's liveness, its catching up
// with the metadata log, and its requests to be fenced or to shut down.

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
	if err := c.proposePart(rec); err != nil {
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
