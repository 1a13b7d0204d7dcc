package cluster

import (
	"context"

	"github.com/varve/varve/compaction"
	vnet "github.com/varve/varve/net"
)

// NetStats are the node's network servers' counters and pool sizes.
func (b *Broker) NetStats() vnet.Stats { return b.server.Stats() }

// RunRetention runs one pass of the node's retention task now and
// returns the number of segments it deleted.
func (b *Broker) RunRetention(ctx context.Context) int { return b.cleaners.retention.RunOnce(ctx) }

// RunningCleaner is the node's log cleaner (nil when it has none), to
// show that a dynamic change replaced it.
func (b *Broker) RunningCleaner() *compaction.Cleaner {
	b.cleaners.mu.Lock()
	defer b.cleaners.mu.Unlock()
	return b.cleaners.cleaner
}
