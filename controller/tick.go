package controller

import (
	"github.com/varve/varve/metadata"
)

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
