package cluster

import (
	"time"

	"github.com/varve/varve/config"
	"github.com/varve/varve/group"
	"github.com/varve/varve/logdir"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/segment"
)

// The node's conversions from broker properties to the configs of the
// packages it wires, in one place. The storage ones (segment.Config,
// retention.Policy, compaction.Config) are config's own methods
// (config/convert.go), because config sits above the storage packages;
// net sits beside config and replica and group above it, so their
// conversions live here, where both sides are visible. Each adds to the
// properties only what the node supplies itself (its logger, its metrics,
// its partitions).

// logConfig is what the replica manager opens a topic's logs with: the
// topic's properties, and the broker's metrics for flush times.
func (b *Broker) logConfig(topic string) segment.Config {
	c := b.cfg.LogConfig(b.topicConfig(topic))
	c.OnFlush = b.metrics.flushed
	return c
}

// replicaConfig is the log manager's configuration: log.dirs,
// num.recovery.threads.per.data.dir and the checkpoint intervals.
func (b *Broker) replicaConfig() logdir.Config {
	return logdir.Config{
		LogDirs:                    b.cfg.LogDirs,
		RecoveryThreadsPerDataDir:  b.cfg.NumRecoveryThreadsPerDataDir,
		RecoveryCheckpointInterval: b.cfg.LogFlushOffsetCheckpointIntervalMs.Duration(),
		StartOffsetCheckpoint:      b.cfg.LogFlushStartOffsetCheckpointIntervalMs.Duration(),
		HWCheckpointInterval:       b.cfg.ReplicaHighWatermarkCheckpointIntervalMs.Duration(),
		ProbeInterval:              b.cfg.LogDirProbeIntervalMs.Duration(),
		Logger:                     b.log,
		LogConfig:                  b.logConfig,
		BrokerEpoch:                b.brokerEpoch,
		MoveRate:                   moveRate(b.cfg.ReplicaAlterLogDirsIoMaxBytesPerSecond),
		MoveQuotaWindows:           b.cfg.AlterLogDirsReplicationQuotaWindowNum,
		MoveQuotaWindowSize:        time.Duration(b.cfg.AlterLogDirsReplicationQuotaWindowSizeSeconds) * time.Second,
	}
}

// moveRate is replica.alter.log.dirs.io.max.bytes.per.second as
// logdir.Config takes it: Kafka's 0 is a negative rate there.
func moveRate(v int64) int64 {
	if v == 0 {
		return -1
	}
	return v
}

// netConfig is the network layer's configuration: the socket server
// properties, the request memory pool and connection quotas, and
// varve.network.model's choice of inline handlers.
func netConfig(cfg *config.Broker) vnet.Config {
	nc := vnet.Config{
		NumNetworkThreads:        cfg.NumNetworkThreads,
		NumIOThreads:             cfg.NumIoThreads,
		QueuedMaxRequests:        cfg.QueuedMaxRequests,
		SocketRequestMaxBytes:    int32(cfg.SocketRequestMaxBytes),
		ConnectionsMaxIdle:       cfg.ConnectionsMaxIdleMs.Duration(),
		SocketSendBufferBytes:    cfg.SocketSendBufferBytes,
		SocketReceiveBufferBytes: cfg.SocketReceiveBufferBytes,
		MaxConnections:           cfg.MaxConnections,
		InlineHandlers:           cfg.NetworkModel == config.NetworkGoroutineInline,

		QueuedMaxRequestBytes:        cfg.QueuedMaxRequestBytes,
		MaxConnectionsPerIP:          cfg.MaxConnectionsPerIP,
		MaxConnectionsPerIPOverrides: cfg.MaxConnectionsPerIPOverrides,
		MaxConnectionCreationRate:    cfg.MaxConnectionCreationRate,
	}
	if cfg.MaxConnectionsPerIP == 0 {
		nc.MaxConnectionsPerIP = vnet.NoConnectionsPerIP // Kafka's 0: only the overrides may connect
	}
	return nc
}

// groupConfig is the group coordinator's configuration: group.* and
// offsets.* properties, and which partitions the node has.
func (b *Broker) groupConfig() group.Config {
	return group.Config{
		InitialRebalanceDelay:  b.cfg.GroupInitialRebalanceDelayMs.Duration(),
		MinSessionTimeout:      b.cfg.GroupMinSessionTimeoutMs.Duration(),
		MaxSessionTimeout:      b.cfg.GroupMaxSessionTimeoutMs.Duration(),
		MaxSize:                b.cfg.GroupMaxSize,
		OffsetsRetention:       time.Duration(b.cfg.OffsetsRetentionMinutes) * time.Minute,
		RetentionCheckInterval: b.cfg.OffsetsRetentionCheckIntervalMs.Duration(),
		OffsetMetadataMaxBytes: b.cfg.OffsetMetadataMaxBytes,
		// One bound on member metadata for every coordinator of the broker.
		MetadataBudget: group.NewMetadataBudget(group.DefaultMaxBrokerMetadataBytes),
		KnownPartition: func(topic string, p int32) bool {
			_, ok := b.parts.Partition(segment.TopicPartition{Topic: topic, Partition: p})
			return ok
		},
		ConsumerSessionTimeout:    b.cfg.GroupConsumerSessionTimeoutMs.Duration(),
		ConsumerHeartbeatInterval: b.cfg.GroupConsumerHeartbeatIntervalMs.Duration(),
		ConsumerMaxSize:           b.cfg.GroupConsumerMaxSize,
		ConsumerAssignors:         consumerAssignors(b.cfg.GroupConsumerAssignors),
		MigrationPolicy:           b.cfg.GroupConsumerMigrationPolicy,
		Topics:                    groupTopics{b},
		Logger:                    b.log.With("component", "group-coordinator"),
	}
}
