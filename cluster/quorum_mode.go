package cluster

// A node of a cluster. With controller.quorum.voters set, the node's
// metadata is the controller quorum's log (package quorum), of which
// this node is a voter (process.roles=broker,controller, Kafka's
// combined mode) or, on a broker-only node (process.roles=broker), a
// raft learner that follows the log on varve.quorum.learner.listener. The broker's image is the quorum's committed image;
// its metadata changes go to the active controller
// (controller_forward.go); its partitions follow the image
// (replicas.go); and it registers and heartbeats as Kafka's
// BrokerLifecycleManager does, leaving its leaderships to others before
// it stops (controlled shutdown).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/varve/varve/config"
	"github.com/varve/varve/controller"
	"github.com/varve/varve/logdir"
	"github.com/varve/varve/metadata"
	"github.com/varve/varve/quorum"
)

// inQuorum says whether cfg runs a node of a cluster rather than a
// single node with its metadata file.
// A broker-only node is always one of a cluster.
func inQuorum(cfg *config.Broker) bool {
	return len(cfg.ControllerQuorumVoters) > 0 || len(cfg.ControllerQuorumBootstrapServers) > 0 || !cfg.HasRole("controller")
}

// openQuorum opens this node's member of the controller quorum and
// makes the broker take its metadata from it.
func (b *Broker) openQuorum() error {
	clusterID, err := clusterIDOf(b.cfg)
	if err != nil {
		return err
	}
	qc := quorumConfig(b.cfg, clusterID)
	if len(qc.Voters) == 0 {
		if qc.Voters, err = b.discoverVoters(); err != nil {
			return err
		}
	}
	qc.Logger = b.log
	b.secureQuorum(&qc)
	// The loop starts after newMetrics has run.
	qc.OnElections = func(elected, unclean int, took time.Duration) { b.metrics.elections(elected, unclean, took) }
	node, err := quorum.New(qc)
	if err != nil {
		return err
	}
	b.quorum = node
	b.meta = &metaSource{nodeID: b.nodeID, pub: node.Publisher()}
	b.ctrl = node.Client()
	b.SetControllerClient(b.ctrl) // AlterPartition
	return nil
}

// discoverVoters finds the voters of a broker-only node given
// controller.quorum.bootstrap.servers alone (quorum.DiscoverVoters),
// waiting up to voterDiscoveryTimeout for a bootstrap server to answer.
// A controller needs controller.quorum.voters: KIP-853's dynamic quorum
// is not supported.
func (b *Broker) discoverVoters() ([]quorum.Voter, error) {
	switch {
	case b.cfg.HasRole("controller"):
		return nil, quorum.ErrDynamicQuorum
	case b.cfg.QuorumLearnerListener == "":
		return nil, errors.New("process.roles=broker with controller.quorum.bootstrap.servers: the node follows the metadata log as a raft learner and needs varve.quorum.learner.listener to receive it on")
	}
	addrs := b.cfg.ControllerQuorumBootstrapServers
	ctx, cancel := context.WithTimeout(context.Background(), voterDiscoveryTimeout)
	defer cancel()
	voters, err := quorum.DiscoverVoters(ctx, addrs, fmt.Sprintf("varve-broker-%d", b.nodeID), time.Duration(max(b.cfg.QuorumRetryBackoffMs, 100))*time.Millisecond)
	if err != nil {
		return nil, err
	}
	b.log.Info("voters found through controller.quorum.bootstrap.servers", "voters", voters)
	return voters, nil
}

// voterDiscoveryTimeout bounds a broker's wait for a bootstrap server.
const voterDiscoveryTimeout = 60 * time.Second

// startLifecycle registers the broker with the controller, with the
// endpoints its listeners ended up on, and heartbeats from then on.
func (b *Broker) startLifecycle() {
	endpoints := b.registration().Endpoints
	if e, ok := b.quorum.LearnerEndpoint(); ok {
		// Last: clients are told of the first endpoints only.
		endpoints = append(endpoints, e)
	}
	b.lifecycle = quorum.NewLifecycle(b.quorum.Client(), quorum.LifecycleConfig{
		BrokerID:            b.nodeID,
		ClusterID:           b.meta.image().ClusterID(),
		Endpoints:           endpoints,
		Rack:                b.cfg.BrokerRack,
		HeartbeatIntervalMs: int64(b.cfg.BrokerHeartbeatIntervalMs),
		MetadataOffset:      b.quorum.MetadataOffset,
		Logger:              b.log,
		PreviousBrokerEpoch: b.parts.PreviousBrokerEpoch,
		ProducerIDFloor:     b.logsProducerIDFloor,
	})
	b.repl.lifecycle.Store(b.lifecycle)
	b.lifecycle.Start()
}

// controlledShutdown moves this broker's leaderships to other replicas
// before it stops, as Kafka's broker does on SIGTERM; bounded by ctx,
// after which the broker stops anyway.
func (b *Broker) controlledShutdown(ctx context.Context) {
	if b.lifecycle == nil {
		return
	}
	start := time.Now()
	// Leave time for the rest of the shutdown within ctx.
	cctx, cancel := context.WithTimeout(ctx, controlledShutdownTimeout(ctx))
	defer cancel()
	err := b.lifecycle.ControlledShutdown(cctx)
	if err == nil {
		// The controller lets the node go once its leaderships have
		// moved; wait (briefly) until this node's replicas have applied
		// that too, so the produces it holds are answered
		// NOT_LEADER_OR_FOLLOWER, with the new leader (KIP-951), and
		// clients move at once rather than after the connection drops.
		b.awaitLeadingNothing(cctx, 2*time.Second)
	}
	b.log.Info("controlled shutdown", "took", time.Since(start), "err", err)
	b.lifecycle.Stop()
}

// awaitLeadingNothing waits until the replica manager has applied an
// image in which this node leads no partition, or max passes.
func (b *Broker) awaitLeadingNothing(ctx context.Context, max time.Duration) {
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if img := b.repl.applied.Load(); img != nil {
			if _, leading, _ := b.replicaCounts(img); leading == 0 {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, inImage, _ := b.replicaCounts(b.meta.image())
	applied := -1
	if img := b.repl.applied.Load(); img != nil {
		_, applied, _ = b.replicaCounts(img)
	}
	b.log.Warn("still leading partitions after the controlled shutdown", "in_image", inImage, "applied", applied, "image_version", b.meta.image().Version())
}

func controlledShutdownTimeout(ctx context.Context) time.Duration {
	d := 30 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl)/2)
	}
	return max(d, 0)
}

// stopQuorum stops this node's member of the quorum, after the broker.
func (b *Broker) stopQuorum(ctx context.Context) error {
	if b.quorum == nil {
		return nil
	}
	if err := b.quorum.Stop(ctx); err != nil && !errors.Is(err, quorum.ErrStopped) {
		return err
	}
	return nil
}

// clusterIDOf is cluster.id: the property, else the one the log dir
// was formatted with (meta.properties, as `varve cluster up` and
// kafka-storage.sh format write it). A node of a cluster must know it
// before it starts: nodes that each invented one would never agree.
func clusterIDOf(cfg *config.Broker) (string, error) {
	dir := cfg.MetadataLogDir
	if dir == "" {
		dir = cfg.LogDirs[0]
	}
	data, err := os.ReadFile(filepath.Join(dir, logdir.MetaPropertiesFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		if cfg.ClusterID == "" {
			return "", fmt.Errorf("%s has no %s and cluster.id is not set: format the node's storage (varve cluster up does) or set cluster.id to the cluster's id", dir, logdir.MetaPropertiesFile)
		}
		return cfg.ClusterID, nil
	case err != nil:
		return "", err
	}
	mp, err := logdir.ParseMetaProperties(data)
	if err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(dir, logdir.MetaPropertiesFile), err)
	}
	if cfg.ClusterID != "" && cfg.ClusterID != mp.ClusterID {
		return "", fmt.Errorf("cluster.id %s does not match %s's %s", cfg.ClusterID, dir, mp.ClusterID)
	}
	return mp.ClusterID, nil
}

// quorumConfig is the quorum node's configuration from the broker's.
func quorumConfig(cfg *config.Broker, clusterID string) quorum.Config {
	q := quorum.DefaultConfig()
	q.NodeID = int32(cfg.NodeID)
	q.ClusterID = clusterID
	for _, v := range cfg.ControllerQuorumVoters {
		q.Voters = append(q.Voters, quorum.Voter{ID: int32(v.ID), Addr: fmt.Sprintf("%s:%d", v.Host, v.Port)})
	}
	for _, l := range cfg.Listeners {
		if slices.Contains(cfg.ControllerListenerNames, l.Name) {
			q.ListenAddr = fmt.Sprintf("%s:%d", l.Host, l.Port)
			break
		}
	}
	if !cfg.HasRole("controller") {
		// A raft learner: the controllers push the log to it there.
		q.ListenAddr = cfg.QuorumLearnerListener
	}
	q.MetadataLogDir = cfg.MetadataLogDir
	if q.MetadataLogDir == "" {
		q.MetadataLogDir = cfg.LogDirs[0]
	}
	q.ElectionTimeoutMs = int64(cfg.QuorumElectionTimeoutMs)
	if q.TickMs > q.ElectionTimeoutMs/5 {
		q.TickMs = max(q.ElectionTimeoutMs/10, 1)
	}
	q.RetryBackoffMs = int64(cfg.QuorumRetryBackoffMs)
	q.RequestTimeoutMs = int64(cfg.QuorumRequestTimeoutMs)
	q.SnapshotIntervalMs = cfg.MetadataLogMaxSnapshotIntervalMs
	q.SnapshotBytes = cfg.MetadataLogMaxRecordBytesBetweenSnapshots
	q.Controller = controllerConfig(cfg)
	q.Net = netConfig(cfg)
	return q
}

func controllerConfig(cfg *config.Broker) controller.Config {
	c := controller.DefaultConfig()
	c.SessionTimeoutMs = int64(cfg.BrokerSessionTimeoutMs)
	c.UncleanLeaderElection = cfg.UncleanLeaderElectionEnable
	c.AutoLeaderRebalance = cfg.AutoLeaderRebalanceEnable
	c.LeaderImbalanceCheckIntervalMs = cfg.LeaderImbalanceCheckIntervalSeconds * 1000
	c.LeaderImbalancePerBrokerPercentage = cfg.LeaderImbalancePerBrokerPercentage
	c.DefaultReplicationFactor = int16(cfg.DefaultReplicationFactor)
	c.NumPartitions = int32(cfg.NumPartitions)
	c.TopicSettings = func(overrides map[string]string) (controller.TopicSettings, error) {
		return cfg.ParseTopic(overrides)
	}
	c.BrokerSettings = config.CheckDynamic
	return c
}

// MetadataDump describes this node's metadata image as the records that
// rebuild it: two nodes with the same image print the same text.
func (b *Broker) MetadataDump() string {
	var out []byte
	for _, r := range metadata.SnapshotRecords(b.meta.image()) {
		out = fmt.Appendf(out, "%#v\n", r)
	}
	return string(out)
}

// IsActiveController says whether this node is the cluster's active
// controller (the raft leader that has caught up with its log).
func (b *Broker) IsActiveController() bool { return b.quorum != nil && b.quorum.IsActive() }
