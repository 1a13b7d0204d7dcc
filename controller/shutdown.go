package controller

import (
	"github.com/varve/varve/metadata"
)

// controlledShutdown handles the heartbeat of an unfenced broker that
// wants to shut down: it is marked in controlled shutdown (KIP-841,
// persisted so that a new controller knows), leaves every ISR and its
// leaderships move, in one list of records. Kafka:
// ReplicationControlManager.handleBrokerInControlledShutdown. A later
// heartbeat moves whatever it still leads, which is usually nothing.
func (c *Controller) controlledShutdown(b *metadata.Broker) ([]metadata.Record, error) {
	var recs []metadata.Record
	if !b.InControlledShutdown {
		recs = append(recs, metadata.BrokerRegistrationChangeRecord{
			BrokerID: b.ID, BrokerEpoch: b.Epoch, InControlledShutdown: true})
		if err := c.proposePart(recs); err != nil {
			return nil, err
		}
	}
	moves := c.removeFromPartitions(b.ID)
	if err := c.propose(moves); err != nil {
		return nil, err
	}
	recs = append(recs, moves...)
	if _, known := c.shutdownOffset[b.ID]; len(recs) > 0 || !known {
		c.shutdownOffset[b.ID] = c.end - 1
	}
	return recs, nil
}

// mayShutDown reports whether broker b, which wants to shut down, may
// exit now: it is fenced, or it is in controlled shutdown, leads no
// partition, and every active broker has replayed the records of its
// shutdown (so the new leaders know they lead before the old one goes).
// Kafka: BrokerHeartbeatManager, CONTROLLED_SHUTDOWN to SHUTDOWN_NOW.
func (c *Controller) mayShutDown(b *metadata.Broker) bool {
	if b.Fenced {
		return true
	}
	if !b.InControlledShutdown || c.leads(b.ID) > 0 {
		return false
	}
	return c.lowestActiveOffset() >= c.shutdownOffset[b.ID]
}
