package cluster

// A controller-only node (process.roles=controller), as Kafka's
// dedicated controllers: a raft voter of the metadata log that may be
// the active controller, and nothing of a broker. It has no client
// listener, never registers as a broker (so it holds no partition and
// no client is told of it), runs no replica manager, group coordinator
// or log cleaner; its log dirs hold the metadata log alone. It serves
// the controller listener (package quorum) and, when set,
// varve.metrics.listener with the controller's metrics. Brokers reach
// it as they reach any controller: through controller.quorum.voters.

import (
	"context"
	"errors"
	"time"
)

// controllerOnly reports whether this node runs no broker.
func (b *Broker) controllerOnly() bool { return !b.cfg.HasRole("broker") }

// openControllerOnly finishes New for a controller-only node: the
// quorum member is open, the metrics are the only other part.
func (b *Broker) openControllerOnly() (*Broker, error) {
	if len(b.cfg.ControllerQuorumVoters) == 0 {
		return nil, errors.New("process.roles=controller: a controller-only node needs controller.quorum.voters (a single node runs broker,controller)")
	}
	b.metrics = newMetrics(b)
	return b, nil
}

// startControllerOnly serves the controller listener and the metrics.
func (b *Broker) startControllerOnly() error {
	if err := b.quorum.Start(); err != nil {
		return err
	}
	return b.metrics.start(b.cfg.MetricsListener)
}

// stopControllerOnly stops the quorum member: cleanly, or (ctx nil) as
// a crash would.
func (b *Broker) stopControllerOnly(ctx context.Context) error {
	start := time.Now()
	b.metrics.stop()
	if ctx == nil {
		b.quorum.Kill()
		return nil
	}
	err := b.stopQuorum(ctx)
	b.log.Info("controller shut down", "took", time.Since(start), "err", err)
	return err
}
