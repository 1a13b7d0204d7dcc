package config

import (
	"errors"
	"strings"
)

// Kafka's defaults in the table below come from Kafka's own definitions
// (ServerLogConfigs, LogConfig, CleanerConfig, SocketServerConfigs,
// ReplicationConfigs, ServerConfigs, KRaftConfigs, QuorumConfig,
// GroupCoordinatorConfig, TransactionLogConfig,
// TransactionStateManagerConfig, ShareCoordinatorConfig), with the 4.0
// changes of KIP-1030 (num.recovery.threads.per.data.dir 2,
// log.message.timestamp.after.max.ms one hour) and KIP-848
// (group.coordinator.rebalance.protocols classic,consumer).

const (
	longMax   = "9223372036854775807"    // Long.MAX_VALUE
	intMax    = "2147483647"             // Integer.MAX_VALUE
	doubleMax = "1.7976931348623157E308" // Double.MAX_VALUE
	protoMap  = "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"
)

// brokerDefs is every broker property Varve knows. Order matters only
// for the order of errors; Names sorts.
var brokerDefs = []def{
	// Node identity and the KRaft quorum (KRaftConfigs, QuorumConfig).
	{name: "node.id", typ: tInt, deflt: "1", kafka: "none (required)", check: atLeast(0), field: func(b *Broker) any { return &b.NodeID }},
	{name: "broker.id", typ: tInt, null: true, derived: true, kafka: "-1 (then node.id)", check: atLeast(0), field: func(b *Broker) any { return &b.brokerID },
		note: "alias of node.id; if both are given they must be equal"},
	{name: "process.roles", typ: tList, deflt: "broker,controller", kafka: "none (required)", check: all(nonEmptyList, listOf("broker", "controller")), field: func(b *Broker) any { return &b.ProcessRoles }},
	{name: "controller.quorum.voters", typ: tVoters, deflt: "", field: func(b *Broker) any { return &b.ControllerQuorumVoters }},
	{name: "controller.quorum.bootstrap.servers", typ: tHostPorts, deflt: "", field: func(b *Broker) any { return &b.ControllerQuorumBootstrapServers }},
	{name: "controller.listener.names", typ: tList, null: true, field: func(b *Broker) any { return &b.ControllerListenerNames },
		note: "may stay empty on a single node, whose controller is in-process"},
	{name: "cluster.id", typ: tString, null: true, field: func(b *Broker) any { return &b.ClusterID },
		note: "Kafka keeps it in meta.properties (kafka-storage.sh format -t)"},
	{name: "broker.heartbeat.interval.ms", typ: tInt, deflt: "2000", field: func(b *Broker) any { return &b.BrokerHeartbeatIntervalMs }},
	{name: "broker.session.timeout.ms", typ: tInt, deflt: "9000", field: func(b *Broker) any { return &b.BrokerSessionTimeoutMs }},
	{name: "controller.quorum.election.timeout.ms", typ: tInt, deflt: "1000", field: func(b *Broker) any { return &b.QuorumElectionTimeoutMs }},
	{name: "controller.quorum.fetch.timeout.ms", typ: tInt, deflt: "2000", field: func(b *Broker) any { return &b.QuorumFetchTimeoutMs }},
	{name: "controller.quorum.election.backoff.max.ms", typ: tInt, deflt: "1000"},
	{name: "controller.quorum.append.linger.ms", typ: tInt, deflt: "25"},
	{name: "controller.quorum.request.timeout.ms", typ: tInt, deflt: "2000", field: func(b *Broker) any { return &b.QuorumRequestTimeoutMs }},
	{name: "controller.quorum.retry.backoff.ms", typ: tInt, deflt: "20", field: func(b *Broker) any { return &b.QuorumRetryBackoffMs }},
	{name: "metadata.log.dir", typ: tString, null: true, field: func(b *Broker) any { return &b.MetadataLogDir }},
	{name: "metadata.log.max.record.bytes.between.snapshots", typ: tLong, deflt: "20971520", check: atLeast(1), field: func(b *Broker) any { return &b.MetadataLogMaxRecordBytesBetweenSnapshots }},
	{name: "metadata.log.max.snapshot.interval.ms", typ: tLong, deflt: "3600000", check: atLeast(0), field: func(b *Broker) any { return &b.MetadataLogMaxSnapshotIntervalMs }},
	{name: "broker.rack", typ: tString, null: true, field: func(b *Broker) any { return &b.BrokerRack }},

	// Listeners (SocketServerConfigs, ReplicationConfigs).
	{name: "listeners", typ: tListeners, deflt: "PLAINTEXT://127.0.0.1:9092", kafka: "PLAINTEXT://:9092", field: func(b *Broker) any { return &b.Listeners },
		note: "loopback by default: a node someone starts to try Varve is not reachable from the network until they say so"},
	{name: "advertised.listeners", typ: tListeners, null: true, derived: true, field: func(b *Broker) any { return &b.AdvertisedListeners },
		note: "unset or empty: listeners"},
	{name: "listener.security.protocol.map", typ: tProtocolMap, deflt: protoMap, field: func(b *Broker) any { return &b.ListenerSecurityProtocolMap }},
	{name: "inter.broker.listener.name", typ: tString, null: true, derived: true, field: func(b *Broker) any { return &b.InterBrokerListenerName },
		note: "unset: the listener named after security.inter.broker.protocol"},
	{name: "security.inter.broker.protocol", typ: tString, deflt: "PLAINTEXT", check: oneOf(securityProtocols...), field: func(b *Broker) any { return &b.securityInterBrokerProtocol }},

	// Log directories and topic creation (ServerLogConfigs, ReplicationConfigs, ServerConfigs).
	{name: "log.dirs", typ: tList, null: true, derived: true, field: func(b *Broker) any { return &b.LogDirs }, note: "unset: log.dir"},
	{name: "log.dir", typ: tString, deflt: "./varve-data", kafka: "/tmp/kafka-logs", field: func(b *Broker) any { return &b.logDir }},
	{name: "num.partitions", typ: tInt, deflt: "1", check: atLeast(1), field: func(b *Broker) any { return &b.NumPartitions }},
	{name: "default.replication.factor", typ: tInt, deflt: "1", check: atLeast(1), field: func(b *Broker) any { return &b.DefaultReplicationFactor }},
	{name: "auto.create.topics.enable", typ: tBool, deflt: "true", field: func(b *Broker) any { return &b.AutoCreateTopicsEnable }},
	{name: "delete.topic.enable", typ: tBool, deflt: "true", field: func(b *Broker) any { return &b.DeleteTopicEnable }},

	// Segments, indexes, flushing: the defaults of the topic-level settings.
	{name: "log.segment.bytes", typ: tInt, deflt: "1073741824", check: atLeast(minSegmentBytes), field: func(b *Broker) any { return &b.LogSegmentBytes }},
	{name: "log.roll.ms", typ: tLong, null: true, derived: true, check: atLeast(1), field: func(b *Broker) any { return &b.LogRollMs }, note: "unset: log.roll.hours"},
	{name: "log.roll.hours", typ: tInt, deflt: "168", check: atLeast(1), field: func(b *Broker) any { return &b.logRollHours }},
	{name: "log.roll.jitter.ms", typ: tLong, null: true, derived: true, check: atLeast(0), field: func(b *Broker) any { return &b.LogRollJitterMs }, note: "unset: log.roll.jitter.hours"},
	{name: "log.roll.jitter.hours", typ: tInt, deflt: "0", check: atLeast(0), field: func(b *Broker) any { return &b.logRollJitterHours }},
	{name: "log.index.interval.bytes", typ: tInt, deflt: "4096", check: atLeast(0), field: func(b *Broker) any { return &b.LogIndexIntervalBytes }},
	{name: "log.index.size.max.bytes", typ: tInt, deflt: "10485760", check: atLeast(minIndexBytes), field: func(b *Broker) any { return &b.LogIndexSizeMaxBytes }},
	{name: "log.flush.interval.messages", typ: tLong, deflt: longMax, check: atLeast(1), field: func(b *Broker) any { return &b.LogFlushIntervalMessages }},
	{name: "log.flush.interval.ms", typ: tLong, null: true, derived: true, check: atLeast(0), field: func(b *Broker) any { return &b.LogFlushIntervalMs }, note: "unset: log.flush.scheduler.interval.ms"},
	{name: "log.flush.scheduler.interval.ms", typ: tLong, deflt: longMax, check: atLeast(0), field: func(b *Broker) any { return &b.LogFlushSchedulerIntervalMs }},
	{name: "log.flush.offset.checkpoint.interval.ms", typ: tInt, deflt: "60000", check: atLeast(0), field: func(b *Broker) any { return &b.LogFlushOffsetCheckpointIntervalMs }},
	{name: "log.flush.start.offset.checkpoint.interval.ms", typ: tInt, deflt: "60000", check: atLeast(0), field: func(b *Broker) any { return &b.LogFlushStartOffsetCheckpointIntervalMs }},
	{name: "log.segment.delete.delay.ms", typ: tLong, deflt: "60000", check: atLeast(0), field: func(b *Broker) any { return &b.LogSegmentDeleteDelayMs }},
	{name: "log.preallocate", typ: tBool, deflt: "false", field: func(b *Broker) any { return &b.LogPreallocate }},
	{name: "log.message.timestamp.type", typ: tTimestamp, deflt: "CreateTime", field: func(b *Broker) any { return &b.LogMessageTimestampType }},
	{name: "log.message.timestamp.before.max.ms", typ: tLong, deflt: longMax, check: atLeast(0), field: func(b *Broker) any { return &b.LogMessageTimestampBeforeMaxMs }},
	{name: "log.message.timestamp.after.max.ms", typ: tLong, deflt: "3600000", check: atLeast(0), field: func(b *Broker) any { return &b.LogMessageTimestampAfterMaxMs }},
	{name: "log.message.downconversion.enable", typ: tBool, deflt: "true", note: "Varve never down-converts"},
	{name: "log.local.retention.ms", typ: tLong, deflt: "-2", check: atLeast(-2), note: "tiered storage"},
	{name: "log.local.retention.bytes", typ: tLong, deflt: "-2", check: atLeast(-2), note: "tiered storage"},
	{name: "message.max.bytes", typ: tInt, deflt: "1048588", check: atLeast(minMessageBytes), field: func(b *Broker) any { return &b.MessageMaxBytes }},
	{name: "compression.type", typ: tString, deflt: "producer", check: oneOf(compressionTypes...), field: func(b *Broker) any { return &b.CompressionType }},
	{name: "compression.gzip.level", typ: tInt, deflt: "-1", check: levelOrMinusOne(1, 9)},
	{name: "compression.lz4.level", typ: tInt, deflt: "9", check: between(1, 17)},
	{name: "compression.zstd.level", typ: tInt, deflt: "3", check: between(-131072, 22)},
	{name: "num.recovery.threads.per.data.dir", typ: tInt, deflt: "2", check: atLeast(1), field: func(b *Broker) any { return &b.NumRecoveryThreadsPerDataDir }},

	// Retention.
	{name: "log.retention.ms", typ: tLong, null: true, derived: true, field: func(b *Broker) any { return &b.LogRetentionMs },
		note: "unset: log.retention.minutes, then log.retention.hours; negative: -1, unlimited"},
	{name: "log.retention.minutes", typ: tInt, null: true, field: func(b *Broker) any { return &b.logRetentionMinutes }},
	{name: "log.retention.hours", typ: tInt, deflt: "168", field: func(b *Broker) any { return &b.logRetentionHours }},
	{name: "log.retention.bytes", typ: tLong, deflt: "-1", field: func(b *Broker) any { return &b.LogRetentionBytes }},
	{name: "log.retention.check.interval.ms", typ: tLong, deflt: "300000", check: atLeast(1), field: func(b *Broker) any { return &b.LogRetentionCheckIntervalMs }},
	{name: "log.cleanup.policy", typ: tCleanup, deflt: "delete", field: func(b *Broker) any { return &b.LogCleanupPolicy }},

	// The log cleaner (CleanerConfig).
	{name: "log.cleaner.enable", typ: tBool, deflt: "true", field: func(b *Broker) any { return &b.LogCleanerEnable }},
	{name: "log.cleaner.threads", typ: tInt, deflt: "1", check: atLeast(0), field: func(b *Broker) any { return &b.LogCleanerThreads }},
	{name: "log.cleaner.dedupe.buffer.size", typ: tLong, deflt: "134217728", field: func(b *Broker) any { return &b.LogCleanerDedupeBufferSize }},
	{name: "log.cleaner.io.buffer.size", typ: tInt, deflt: "524288", check: atLeast(0), field: func(b *Broker) any { return &b.LogCleanerIoBufferSize }},
	{name: "log.cleaner.io.buffer.load.factor", typ: tDouble, deflt: "0.9", check: aboveZeroAtMostOne, field: func(b *Broker) any { return &b.LogCleanerIoBufferLoadFactor }},
	{name: "log.cleaner.io.max.bytes.per.second", typ: tDouble, deflt: doubleMax, check: aboveZero, field: func(b *Broker) any { return &b.LogCleanerIoMaxBytesPerSecond }},
	{name: "log.cleaner.backoff.ms", typ: tLong, deflt: "15000", check: atLeast(0), field: func(b *Broker) any { return &b.LogCleanerBackoffMs }},
	{name: "log.cleaner.min.cleanable.ratio", typ: tDouble, deflt: "0.5", check: between(0, 1), field: func(b *Broker) any { return &b.LogCleanerMinCleanableRatio }},
	{name: "log.cleaner.delete.retention.ms", typ: tLong, deflt: "86400000", check: atLeast(0), field: func(b *Broker) any { return &b.LogCleanerDeleteRetentionMs }},
	{name: "log.cleaner.min.compaction.lag.ms", typ: tLong, deflt: "0", check: atLeast(0), field: func(b *Broker) any { return &b.LogCleanerMinCompactionLagMs }},
	{name: "log.cleaner.max.compaction.lag.ms", typ: tLong, deflt: longMax, check: atLeast(1), field: func(b *Broker) any { return &b.LogCleanerMaxCompactionLagMs }},

	// Network (SocketServerConfigs, ServerConfigs).
	{name: "num.network.threads", typ: tInt, deflt: "3", check: atLeast(1), field: func(b *Broker) any { return &b.NumNetworkThreads }},
	{name: "num.io.threads", typ: tInt, deflt: "8", check: atLeast(1), field: func(b *Broker) any { return &b.NumIoThreads }},
	{name: "background.threads", typ: tInt, deflt: "10", check: atLeast(1)},
	{name: "queued.max.requests", typ: tInt, deflt: "500", check: atLeast(1), field: func(b *Broker) any { return &b.QueuedMaxRequests }},
	{name: "queued.max.request.bytes", typ: tLong, deflt: "-1", field: func(b *Broker) any { return &b.QueuedMaxRequestBytes },
		note: "-1: not unbounded as in Kafka but half of GOMEMLIMIT, else a quarter of physical or cgroup memory, at least socket.request.max.bytes"},
	{name: "socket.request.max.bytes", typ: tInt, deflt: "104857600", check: atLeast(1), field: func(b *Broker) any { return &b.SocketRequestMaxBytes }},
	{name: "socket.send.buffer.bytes", typ: tInt, deflt: "102400", field: func(b *Broker) any { return &b.SocketSendBufferBytes }},
	{name: "socket.receive.buffer.bytes", typ: tInt, deflt: "102400", field: func(b *Broker) any { return &b.SocketReceiveBufferBytes }},
	{name: "socket.listen.backlog.size", typ: tInt, deflt: "50", check: atLeast(1), field: func(b *Broker) any { return &b.SocketListenBacklogSize }},
	{name: "connections.max.idle.ms", typ: tLong, deflt: "600000", field: func(b *Broker) any { return &b.ConnectionsMaxIdleMs }},
	{name: "max.connections", typ: tInt, deflt: intMax, check: atLeast(0), field: func(b *Broker) any { return &b.MaxConnections }},
	{name: "max.connections.per.ip", typ: tInt, deflt: intMax, check: atLeast(0), field: func(b *Broker) any { return &b.MaxConnectionsPerIP }},
	{name: "max.connections.per.ip.overrides", typ: tConnOverrides, deflt: "", field: func(b *Broker) any { return &b.MaxConnectionsPerIPOverrides }},
	{name: "max.connection.creation.rate", typ: tInt, deflt: intMax, check: atLeast(0), field: func(b *Broker) any { return &b.MaxConnectionCreationRate }},
	{name: "request.timeout.ms", typ: tInt, deflt: "30000"},
	{name: "fetch.max.bytes", typ: tInt, deflt: "57671680", check: atLeast(1024), field: func(b *Broker) any { return &b.FetchMaxBytes }},

	// Replication (ReplicationConfigs, ServerLogConfigs).
	{name: "min.insync.replicas", typ: tInt, deflt: "1", check: atLeast(1), field: func(b *Broker) any { return &b.MinInsyncReplicas }},
	{name: "replica.lag.time.max.ms", typ: tLong, deflt: "30000", field: func(b *Broker) any { return &b.ReplicaLagTimeMaxMs }},
	{name: "replica.fetch.max.bytes", typ: tInt, deflt: "1048576", check: atLeast(0), field: func(b *Broker) any { return &b.ReplicaFetchMaxBytes }},
	{name: "replica.fetch.response.max.bytes", typ: tInt, deflt: "10485760", check: atLeast(0), field: func(b *Broker) any { return &b.ReplicaFetchResponseMaxBytes }},
	{name: "replica.fetch.wait.max.ms", typ: tInt, deflt: "500", field: func(b *Broker) any { return &b.ReplicaFetchWaitMaxMs }},
	{name: "replica.fetch.min.bytes", typ: tInt, deflt: "1", field: func(b *Broker) any { return &b.ReplicaFetchMinBytes }},
	{name: "replica.fetch.backoff.ms", typ: tInt, deflt: "1000", check: atLeast(0), field: func(b *Broker) any { return &b.ReplicaFetchBackoffMs }},
	{name: "replica.socket.timeout.ms", typ: tInt, deflt: "30000", field: func(b *Broker) any { return &b.ReplicaSocketTimeoutMs }},
	{name: "replica.socket.receive.buffer.bytes", typ: tInt, deflt: "65536"},
	{name: "replica.selector.class", typ: tString, null: true, check: oneOfOrNull(RackAwareReplicaSelector), field: func(b *Broker) any { return &b.ReplicaSelectorClass }},
	{name: "max.incremental.fetch.session.cache.slots", typ: tInt, deflt: "1000", check: atLeast(0), field: func(b *Broker) any { return &b.MaxIncrementalFetchSessionCacheSlots }},
	{name: "min.incremental.fetch.session.eviction.ms", typ: tInt, deflt: "120000", check: atLeast(0), field: func(b *Broker) any { return &b.MinIncrementalFetchSessionEvictionMs }},
	{name: "num.replica.fetchers", typ: tInt, deflt: "1", check: atLeast(1), field: func(b *Broker) any { return &b.NumReplicaFetchers }},
	{name: "replica.high.watermark.checkpoint.interval.ms", typ: tLong, deflt: "5000", field: func(b *Broker) any { return &b.ReplicaHighWatermarkCheckpointIntervalMs }},
	{name: "unclean.leader.election.enable", typ: tBool, deflt: "false", field: func(b *Broker) any { return &b.UncleanLeaderElectionEnable }},
	{name: "auto.leader.rebalance.enable", typ: tBool, deflt: "true", field: func(b *Broker) any { return &b.AutoLeaderRebalanceEnable }},
	{name: "leader.imbalance.check.interval.seconds", typ: tLong, deflt: "300", check: atLeast(1), field: func(b *Broker) any { return &b.LeaderImbalanceCheckIntervalSeconds }},
	{name: "leader.imbalance.per.broker.percentage", typ: tInt, deflt: "10", field: func(b *Broker) any { return &b.LeaderImbalancePerBrokerPercentage }},
	{name: "fetch.purgatory.purge.interval.requests", typ: tInt, deflt: "1000"},
	{name: "producer.purgatory.purge.interval.requests", typ: tInt, deflt: "1000"},
	{name: "controlled.shutdown.enable", typ: tBool, deflt: "true"},

	// Group coordinator and committed offsets (GroupCoordinatorConfig).
	{name: "offsets.topic.num.partitions", typ: tInt, deflt: "50", check: atLeast(1), field: func(b *Broker) any { return &b.OffsetsTopicNumPartitions }},
	{name: "offsets.topic.replication.factor", typ: tShort, deflt: "3", check: atLeast(1), field: func(b *Broker) any { return &b.OffsetsTopicReplicationFactor }},
	{name: "offsets.topic.segment.bytes", typ: tInt, deflt: "104857600", check: atLeast(1), field: func(b *Broker) any { return &b.OffsetsTopicSegmentBytes }},
	{name: "offsets.retention.minutes", typ: tInt, deflt: "10080", check: atLeast(1), field: func(b *Broker) any { return &b.OffsetsRetentionMinutes }},
	{name: "offsets.retention.check.interval.ms", typ: tLong, deflt: "600000", check: atLeast(1), field: func(b *Broker) any { return &b.OffsetsRetentionCheckIntervalMs }},
	{name: "offsets.commit.timeout.ms", typ: tInt, deflt: "5000", check: atLeast(1), field: func(b *Broker) any { return &b.OffsetsCommitTimeoutMs }},
	{name: "offsets.load.buffer.size", typ: tInt, deflt: "5242880", check: atLeast(1)},
	{name: "offset.metadata.max.bytes", typ: tInt, deflt: "4096", field: func(b *Broker) any { return &b.OffsetMetadataMaxBytes }},
	{name: "group.initial.rebalance.delay.ms", typ: tInt, deflt: "3000", field: func(b *Broker) any { return &b.GroupInitialRebalanceDelayMs }},
	{name: "group.min.session.timeout.ms", typ: tInt, deflt: "6000", field: func(b *Broker) any { return &b.GroupMinSessionTimeoutMs }},
	{name: "group.max.session.timeout.ms", typ: tInt, deflt: "1800000", field: func(b *Broker) any { return &b.GroupMaxSessionTimeoutMs }},
	{name: "group.max.size", typ: tInt, deflt: intMax, check: atLeast(1), field: func(b *Broker) any { return &b.GroupMaxSize }},
	{name: "group.coordinator.rebalance.protocols", typ: tList, deflt: "classic,consumer", check: all(nonEmptyList, listOf("classic", "consumer", "share", "streams"))},
	{name: "group.coordinator.threads", typ: tInt, deflt: "1", check: atLeast(1)},
	{name: "group.consumer.session.timeout.ms", typ: tInt, deflt: "45000", check: atLeast(1), field: func(b *Broker) any { return &b.GroupConsumerSessionTimeoutMs }},
	{name: "group.consumer.heartbeat.interval.ms", typ: tInt, deflt: "5000", check: atLeast(1), field: func(b *Broker) any { return &b.GroupConsumerHeartbeatIntervalMs }},
	{name: "group.consumer.max.size", typ: tInt, deflt: intMax, check: atLeast(1), field: func(b *Broker) any { return &b.GroupConsumerMaxSize }},
	{name: "group.consumer.assignors", typ: tList, deflt: "org.apache.kafka.coordinator.group.assignor.UniformAssignor,org.apache.kafka.coordinator.group.assignor.RangeAssignor",
		check: all(nonEmptyList, listOf("uniform", "range", "org.apache.kafka.coordinator.group.assignor.UniformAssignor", "org.apache.kafka.coordinator.group.assignor.RangeAssignor")),
		field: func(b *Broker) any { return &b.GroupConsumerAssignors }},
	{name: "group.consumer.migration.policy", typ: tString, deflt: "bidirectional", // Kafka's check ignores case
		check: func(v any) error {
			return oneOf("disabled", "upgrade", "downgrade", "bidirectional")(strings.ToLower(v.(string)))
		},
		field: func(b *Broker) any { return &b.GroupConsumerMigrationPolicy }},

	// Producers and transactions (TransactionLogConfig, TransactionStateManagerConfig).
	{name: "producer.id.expiration.ms", typ: tInt, deflt: "86400000", check: atLeast(1), field: func(b *Broker) any { return &b.ProducerIDExpirationMs }},
	{name: "transactional.id.expiration.ms", typ: tInt, deflt: "604800000", check: atLeast(1), field: func(b *Broker) any { return &b.TransactionalIDExpirationMs }},
	{name: "transaction.max.timeout.ms", typ: tInt, deflt: "900000", check: atLeast(1), field: func(b *Broker) any { return &b.TransactionMaxTimeoutMs }},
	{name: "transaction.state.log.num.partitions", typ: tInt, deflt: "50", check: atLeast(1), field: func(b *Broker) any { return &b.TransactionStateLogNumPartitions }},
	{name: "transaction.state.log.replication.factor", typ: tShort, deflt: "3", check: atLeast(1), field: func(b *Broker) any { return &b.TransactionStateLogReplicationFactor }},
	{name: "transaction.state.log.min.isr", typ: tInt, deflt: "2", check: atLeast(1), field: func(b *Broker) any { return &b.TransactionStateLogMinIsr }},
	{name: "transaction.state.log.segment.bytes", typ: tInt, deflt: "104857600", check: atLeast(1), field: func(b *Broker) any { return &b.TransactionStateLogSegmentBytes }},
	{name: "transaction.state.log.load.buffer.size", typ: tInt, deflt: "5242880", check: atLeast(1)},
	{name: "transaction.partition.verification.enable", typ: tBool, deflt: "true"},

	// Share groups (ShareCoordinatorConfig): accepted so that a copied
	// Kafka 4 server.properties starts.
	{name: "share.coordinator.state.topic.num.partitions", typ: tInt, deflt: "50", check: atLeast(1)},
	{name: "share.coordinator.state.topic.replication.factor", typ: tShort, deflt: "3", check: atLeast(1)},
	{name: "share.coordinator.state.topic.min.isr", typ: tShort, deflt: "2", check: atLeast(1)},
	{name: "share.coordinator.state.topic.segment.bytes", typ: tInt, deflt: "104857600", check: atLeast(1)},
	{name: "share.coordinator.threads", typ: tInt, deflt: "1", check: atLeast(1)},

	// Controller mutation quotas (QuotaConfig, KIP-599).
	{name: "controller.quota.window.num", typ: tInt, deflt: "11", check: atLeast(1), field: func(b *Broker) any { return &b.ControllerQuotaWindowNum }},
	{name: "controller.quota.window.size.seconds", typ: tInt, deflt: "1", check: atLeast(1), field: func(b *Broker) any { return &b.ControllerQuotaWindowSizeSeconds }},
	// Client quotas (QuotaConfig).
	{name: "quota.window.num", typ: tInt, deflt: "11", check: atLeast(1), field: func(b *Broker) any { return &b.QuotaWindowNum }},
	{name: "quota.window.size.seconds", typ: tInt, deflt: "1", check: atLeast(1), field: func(b *Broker) any { return &b.QuotaWindowSizeSeconds }},
	// Moves between log dirs (QuotaConfig: the ALTER_LOG_DIRS replication
	// quota, ReplicaAlterLogDirsThread).
	{name: "replica.alter.log.dirs.io.max.bytes.per.second", typ: tLong, deflt: longMax, check: atLeast(0), field: func(b *Broker) any { return &b.ReplicaAlterLogDirsIoMaxBytesPerSecond }},
	{name: "alter.log.dirs.replication.quota.window.num", typ: tInt, deflt: "11", check: atLeast(1), field: func(b *Broker) any { return &b.AlterLogDirsReplicationQuotaWindowNum }},
	{name: "alter.log.dirs.replication.quota.window.size.seconds", typ: tInt, deflt: "1", check: atLeast(1), field: func(b *Broker) any { return &b.AlterLogDirsReplicationQuotaWindowSizeSeconds }},
	// Replication quotas (KIP-73): the two rates are Kafka's
	// DynamicConfig.Broker properties, meant to be set dynamically.
	{name: "replication.quota.window.num", typ: tInt, deflt: "11", check: atLeast(1), field: func(b *Broker) any { return &b.ReplicationQuotaWindowNum }},
	{name: "replication.quota.window.size.seconds", typ: tInt, deflt: "1", check: atLeast(1), field: func(b *Broker) any { return &b.ReplicationQuotaWindowSizeSeconds }},
	{name: "leader.replication.throttled.rate", typ: tLong, deflt: "9223372036854775807", check: atLeast(0), field: func(b *Broker) any { return &b.LeaderReplicationThrottledRate },
		note: "bytes/s a leader serves to the followers of leader.replication.throttled.replicas; Kafka takes it only dynamically"},
	{name: "follower.replication.throttled.rate", typ: tLong, deflt: "9223372036854775807", check: atLeast(0), field: func(b *Broker) any { return &b.FollowerReplicationThrottledRate },
		note: "bytes/s a follower fetches for follower.replication.throttled.replicas; Kafka takes it only dynamically"},

	// Security (BrokerSecurityConfigs, SslConfigs, SaslConfigs). Each
	// ssl.* property and sasl.enabled.mechanisms may be given per
	// listener with the prefix listener.name.<lower-case name>.; see
	// Broker.Security. Password-typed values never show in Get.
	{name: "ssl.keystore.type", typ: tString, deflt: "JKS", listener: true, note: "Varve reads PEM only"},
	{name: "ssl.keystore.location", typ: tString, null: true, listener: true, note: "with ssl.keystore.type=PEM: one file holding the private key and the certificate chain"},
	{name: "ssl.keystore.password", typ: tPassword, null: true, listener: true},
	{name: "ssl.keystore.key", typ: tPassword, null: true, listener: true, note: "PEM private key (PKCS#8, PKCS#1 or SEC 1), unencrypted"},
	{name: "ssl.keystore.certificate.chain", typ: tPassword, null: true, listener: true, note: "PEM certificates, the node's first"},
	{name: "ssl.key.password", typ: tPassword, null: true, listener: true, note: "Varve reads unencrypted PEM keys only"},
	{name: "ssl.truststore.type", typ: tString, deflt: "JKS", listener: true, note: "Varve reads PEM only"},
	{name: "ssl.truststore.location", typ: tString, null: true, listener: true},
	{name: "ssl.truststore.password", typ: tPassword, null: true, listener: true},
	{name: "ssl.truststore.certificates", typ: tPassword, null: true, listener: true},
	{name: "ssl.client.auth", typ: tString, deflt: "none", listener: true, check: oneOf("required", "requested", "none")},
	{name: "ssl.enabled.protocols", typ: tList, deflt: "TLSv1.2,TLSv1.3", listener: true, check: all(nonEmptyList, listOf(tlsProtocols...))},
	{name: "ssl.protocol", typ: tString, deflt: "TLSv1.3", listener: true, check: oneOf(append([]string{"TLS"}, tlsProtocols...)...),
		note: "Java's SSLContext protocol; crypto/tls negotiates within ssl.enabled.protocols"},
	{name: "ssl.cipher.suites", typ: tList, null: true, listener: true,
		note: "IANA names of TLS 1.2 suites; unset: crypto/tls's secure defaults; TLS 1.3 always uses crypto/tls's three AEAD suites"},
	{name: "ssl.endpoint.identification.algorithm", typ: tString, deflt: "https", listener: true, check: oneOfOrNull("https", "HTTPS"),
		note: "checked by this node's connections to other nodes (and by clients); empty: the chain is verified, not the host name"},
	{name: "ssl.principal.mapping.rules", typ: tString, deflt: "DEFAULT", check: checkPrincipalRules,
		note: "Kafka's RULE:pattern/replacement/[LU] and DEFAULT, mapping a TLS client's subject DN to its principal; patterns are Go (RE2) regular expressions"},
	{name: "sasl.enabled.mechanisms", typ: tList, deflt: "GSSAPI", listener: true, check: listOf(saslMechanisms...),
		note: "Varve serves PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER; a SASL listener enabling GSSAPI stops start-up"},
	{name: "sasl.mechanism.inter.broker.protocol", typ: tString, deflt: "GSSAPI", check: oneOf(saslMechanisms...),
		note: "the follower fetchers' mechanism on a SASL inter-broker listener: PLAIN or SCRAM, as the listener's JAAS username and password"},
	{name: "sasl.mechanism.controller.protocol", typ: tString, deflt: "GSSAPI", check: oneOf(saslMechanisms...),
		note: "the controller client's and raft transport's mechanism on a SASL controller listener: PLAIN or SCRAM"},
	{name: "connection.failed.authentication.delay.ms", typ: tInt, deflt: "100", check: atLeast(0), field: func(b *Broker) any { return &b.ConnectionFailedAuthenticationDelayMs }},
	// OAUTHBEARER's server side (SaslConfigs, KIP-768): the secured
	// validator when a JWKS endpoint is given, per listener too as
	// listener.name.<l>.oauthbearer.sasl.oauthbearer.*.
	{name: "sasl.oauthbearer.jwks.endpoint.url", typ: tString, null: true, listener: true, note: "file:// or http(s):// URL of the JSON Web Key Set that signs tokens; unset: OAUTHBEARER needs the unsecured validator's JAAS configuration"},
	{name: "sasl.oauthbearer.jwks.endpoint.refresh.ms", typ: tLong, deflt: "3600000", listener: true, check: atLeast(1)},
	{name: "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", typ: tLong, deflt: "100", listener: true, check: atLeast(0), note: "the least time between two fetches of the key set for a key id it lacks"},
	{name: "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", typ: tLong, deflt: "10000", listener: true, check: atLeast(0), note: "accepted"},
	{name: "sasl.oauthbearer.expected.audience", typ: tList, null: true, listener: true},
	{name: "sasl.oauthbearer.expected.issuer", typ: tString, null: true, listener: true},
	{name: "sasl.oauthbearer.sub.claim.name", typ: tString, deflt: "sub", listener: true},
	{name: "sasl.oauthbearer.scope.claim.name", typ: tString, deflt: "scope", listener: true},
	{name: "sasl.oauthbearer.clock.skew.seconds", typ: tInt, deflt: "30", listener: true, check: atLeast(0)},
	{name: "connections.max.reauth.ms", typ: tLong, deflt: "0", check: atLeast(0), field: func(b *Broker) any { return &b.ConnectionsMaxReauthMs },
		note: "KIP-368: an authenticated SASL session's lifetime; a client re-authenticates on the connection before it ends, else its next request closes the connection; 0: sessions never expire"},
	{name: "authorizer.class.name", typ: tString, deflt: "", check: authorizerClass, field: func(b *Broker) any { return &b.AuthorizerClassName },
		note: "empty: no authorization, as Kafka; " + StandardAuthorizer + ": ACLs from the cluster metadata"},
	{name: "super.users", typ: tString, deflt: "", field: func(b *Broker) any { return &b.SuperUsers },
		note: "principals allowed everything, separated by semicolons (User:admin;User:broker)"},
	{name: "allow.everyone.if.no.acl.found", typ: tBool, deflt: "false", field: func(b *Broker) any { return &b.AllowEveryoneIfNoACLFound },
		note: "allow an operation on a resource no ACL applies to"},

	// Varve's own.
	{name: "varve.controller.mutation.rate", typ: tDouble, deflt: "100.0", varve: true, check: atLeast(0), field: func(b *Broker) any { return &b.ControllerMutationRate },
		note: "partitions created or deleted per second by all clients together (Kafka's controller_mutation_rate quota, unbounded there by default); bursts up to rate x controller.quota.window.num x controller.quota.window.size.seconds; 0: unbounded"},
	{name: "varve.log.dir.probe.interval.ms", typ: tLong, deflt: "5000", varve: true, check: atLeast(1), field: func(b *Broker) any { return &b.LogDirProbeIntervalMs },
		note: "how often an offline log directory is probed (write, fsync, remove a small file) to bring it back online without a restart; Kafka keeps it offline until the broker restarts"},
	{name: "varve.metrics.listener", typ: tString, deflt: "127.0.0.1:7071", varve: true, check: hostPortOrEmpty, field: func(b *Broker) any { return &b.MetricsListener },
		note: "HTTP address serving Prometheus metrics at /metrics; empty turns it off"},
	{name: "varve.quorum.learner.listener", typ: tString, deflt: "", varve: true, check: hostPortOrEmpty, field: func(b *Broker) any { return &b.QuorumLearnerListener },
		note: "host:port on which a broker-only node (process.roles=broker) receives the metadata log from the controllers as a raft learner; required on such a node when controller.quorum.voters is set"},
	{name: "varve.network.model", typ: tString, deflt: NetworkReactor, varve: true, check: oneOf(NetworkReactor, NetworkGoroutine, NetworkGoroutineInline), field: func(b *Broker) any { return &b.NetworkModel },
		note: "reactor: Kafka's acceptor, processors and handler pool; goroutine: one goroutine per connection, requests handed to the handler pool; goroutine-inline: each request served on its connection's goroutine"},
}

// compressionTypes are Kafka's BrokerCompressionType names.
var compressionTypes = []string{"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}

// Where Varve's storage layer needs more than Kafka's ConfigDef allows,
// the range here is the storage layer's, so a bad value fails when the
// configuration is parsed rather than when a log is opened.
const (
	// minSegmentBytes is Kafka's LegacyRecord.RECORD_OVERHEAD_V0 (Kafka 4
	// raised the minimum to 1 MiB; Varve keeps 14 so tests and experiments
	// can roll tiny segments).
	minSegmentBytes = 14
	// minIndexBytes is four 12-byte time-index entries, the least a
	// segment opens with (Kafka's minimum is 4).
	minIndexBytes = 48
	// minMessageBytes is a v2 batch header (Kafka's minimum is 0, which
	// refuses every batch).
	minMessageBytes = 61
)

// all combines checks; the first failure wins.
func all(cs ...check) check {
	return func(v any) error {
		for _, c := range cs {
			if err := c(v); err != nil {
				return err
			}
		}
		return nil
	}
}

// aboveZero refuses 0 and negatives (Kafka accepts 0 for
// log.cleaner.io.max.bytes.per.second, which stalls the cleaner).
func aboveZero(v any) error {
	if number(v) <= 0 {
		return errors.New("expected a value above 0")
	}
	return nil
}
