package cluster

import (
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/varve/varve/config"
	"github.com/varve/varve/metadata"
)

// Dynamic broker configuration (KIP-226) on a running node: the
// metadata image holds the dynamic settings (ConfigRecords of resource
// BROKER, this node's and the cluster default), and the node's effective
// configuration is its static one with those layered over it
// (config.Broker.WithDynamic). Readers that must see a change at once
// (topic defaults, the log cleaner, connection limits) read
// effectiveConfig; the rest of the node keeps b.cfg, the static
// configuration, for what is fixed at start-up.
//
// applyDynamicConfig runs after every image is applied (and, on a
// single node, after a change is written): it pushes what changed to
// the live logs, the cleaner and the network layer.

// dynamicConfig is the effective configuration for one pair of dynamic
// setting maps, and the image they were last seen in.
type dynamicConfig struct {
	img      *metadata.Image
	def, own map[string]string
	cfg      *config.Broker
}

// brokerConfigs is the node's dynamic configuration state.
type brokerConfigs struct {
	cur sync.Mutex // serializes recomputation; readers use last
	// last is the newest dynamicConfig; nil before the first.
	last    atomic.Pointer[dynamicConfig]
	applyMu sync.Mutex     // serializes applyDynamicConfig
	applied *config.Broker // REQUIRES applyMu: the configuration last applied
	// cleaners are the node's, once started. REQUIRES applyMu.
	cleaners *cleaners
}

// appliedConfig is the configuration last applied (the static one
// before any). REQUIRES b.dyn.applyMu.
func (b *Broker) appliedConfig() *config.Broker {
	if b.dyn.applied == nil {
		return b.cfg
	}
	return b.dyn.applied
}

// effectiveConfig returns the node's configuration with the dynamic
// settings of the current image. A stored setting that no longer
// parses leaves the static configuration in force (and is reported).
func (b *Broker) effectiveConfig() *config.Broker {
	img := b.meta.image()
	if d := b.dyn.last.Load(); d != nil && d.img == img {
		return d.cfg
	}
	b.dyn.cur.Lock()
	defer b.dyn.cur.Unlock()
	def, own := img.BrokerConfigs(""), img.BrokerConfigs(strconv.Itoa(int(b.nodeID)))
	d := b.dyn.last.Load()
	if d != nil && maps.Equal(d.def, def) && maps.Equal(d.own, own) {
		b.dyn.last.Store(&dynamicConfig{img: img, def: def, own: own, cfg: d.cfg})
		return d.cfg
	}
	cfg, err := b.cfg.WithDynamic(def, own)
	if err != nil {
		b.log.Warn("dynamic broker configuration does not apply; the static configuration stays in force", "err", err)
		cfg = b.cfg
	}
	b.dyn.last.Store(&dynamicConfig{img: img, def: def, own: own, cfg: cfg})
	return cfg
}

// applyDynamicConfig brings the live parts of the node in line with the
// effective configuration.
func (b *Broker) applyDynamicConfig() {
	if b.parts == nil {
		return // a controller-only node
	}
	b.dyn.applyMu.Lock()
	defer b.dyn.applyMu.Unlock()
	prev, next := b.appliedConfig(), b.effectiveConfig()
	if prev == next {
		return
	}
	b.dyn.applied = next
	if changedAny(prev, next, logDefaultProps()) {
		b.updateAllLogConfigs()
	}
	if changedAny(prev, next, cleanerProps) {
		b.restartCleaner(next)
	}
	if changedAny(prev, next, connectionProps) {
		b.setConnectionLimits(next)
	}
	if changedAny(prev, next, replicationRateProps) {
		b.setReplicationRates(next)
	}
	if changedAny(prev, next, config.ThreadCountProps) {
		b.setThreadCounts(next)
	}
	if prev.ReplicaAlterLogDirsIoMaxBytesPerSecond != next.ReplicaAlterLogDirsIoMaxBytesPerSecond {
		b.parts.LogDirs().SetMoveRate(next.ReplicaAlterLogDirsIoMaxBytesPerSecond)
	}
	b.log.Info("dynamic broker configuration applied", "cluster_default", next.DynamicDefault(), "node", next.DynamicNode())
}

var (
	cleanerProps = []string{"log.cleaner.threads", "log.cleaner.io.max.bytes.per.second", "log.cleaner.dedupe.buffer.size",
		"log.cleaner.io.buffer.size", "log.cleaner.io.buffer.load.factor", "log.cleaner.backoff.ms"}
	connectionProps = []string{"max.connections", "max.connections.per.ip"}
)

// logDefaultProps are the broker properties that are topic defaults.
var logDefaultProps = sync.OnceValue(func() []string {
	var out []string
	for _, n := range config.TopicNames() {
		out = append(out, config.TopicSynonym(n)...)
	}
	return out
})

func changedAny(a, b *config.Broker, names []string) bool {
	for _, n := range names {
		va, _ := a.Get(n)
		vb, _ := b.Get(n)
		if va != vb {
			return true
		}
	}
	return false
}

// updateAllLogConfigs re-reads every topic's log settings (those without
// an override of their own take the new default).
func (b *Broker) updateAllLogConfigs() {
	for t := range b.meta.image().Topics() {
		if err := b.parts.UpdateLogConfig(t.Name); err != nil {
			b.log.Warn("topic log config not updated", "topic", t.Name, "err", err)
		}
	}
}

// restartCleaner replaces the log cleaner with one built from cfg, as
// Kafka's LogCleaner.reconfigure shuts its threads down and starts new
// ones: a cleaning in progress finishes first. REQUIRES b.dyn.applyMu.
func (b *Broker) restartCleaner(cfg *config.Broker) {
	c := b.dyn.cleaners
	if c == nil {
		return // not started yet: startCleaners reads the applied configuration
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return
	}
	if c.cleaner != nil {
		c.cleaner.Stop()
		c.cleaner = nil
	}
	c.cleaner = b.startCleaner(c.ctx, cfg)
}

// brokerConfigMetas are img's dynamic broker settings as a single
// node's metadata file holds them.
func brokerConfigMetas(img *metadata.Image) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, res := range img.BrokerConfigResources() {
		out[res] = maps.Clone(img.BrokerConfigs(res))
	}
	return out
}

// brokerConfigRecords are the records of the file's dynamic broker
// settings.
func brokerConfigRecords(m map[string]map[string]string) []metadata.Record {
	var recs []metadata.Record
	for _, res := range slices.Sorted(maps.Keys(m)) {
		recs = append(recs, metadata.BrokerConfigRecords(res, nil, m[res])...)
	}
	return recs
}

// connectionLimiter is a network server whose connection limits change
// at run time.
type connectionLimiter interface {
	SetConnectionLimits(maxConns, perIP int)
}

// threadResizer is a network server whose thread pools resize at run
// time.
type threadResizer interface {
	SetIOThreads(n int)
	SetNetworkThreads(n int) error
}

// setThreadCounts applies num.io.threads and num.network.threads to
// every server of the node, as Kafka's DynamicThreadPool.reconfigure
// resizes the request handler pool and SocketServer its processors.
func (b *Broker) setThreadCounts(cfg *config.Broker) {
	for _, srv := range b.servers() {
		r, ok := srv.(threadResizer)
		if !ok {
			continue
		}
		r.SetIOThreads(cfg.NumIoThreads)
		if err := r.SetNetworkThreads(cfg.NumNetworkThreads); err != nil {
			b.log.Warn("num.network.threads not applied", "err", err)
		}
	}
}

// servers are the node's network servers (none before it listens).
func (b *Broker) servers() []server {
	s, ok := b.server.(*servers)
	if !ok {
		return nil
	}
	srvs := []server{s.plain}
	if s.separate() {
		srvs = append(srvs, s.tls)
	}
	return srvs
}

// setConnectionLimits applies max.connections and max.connections.per.ip
// to every server of the node: new connections are checked against
// them, open ones stay (Kafka's ConnectionQuotas).
func (b *Broker) setConnectionLimits(cfg *config.Broker) {
	for _, srv := range b.servers() {
		if l, ok := srv.(connectionLimiter); ok {
			l.SetConnectionLimits(cfg.MaxConnections, cfg.MaxConnectionsPerIP)
		}
	}
}
