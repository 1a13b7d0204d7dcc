package config

import (
	"testing"
)

// kafkaDefaults is Kafka 4's default of every broker property Varve
// knows, as DescribeConfigs shows it, typed from Kafka's definitions
// (ServerLogConfigs, LogConfig, CleanerConfig, SocketServerConfigs,
// ReplicationConfigs, ServerConfigs, KRaftConfigs, QuorumConfig,
// GroupCoordinatorConfig, TransactionLogConfig,
// TransactionStateManagerConfig, ShareCoordinatorConfig) and KIP-1030's
// 4.0 changes. It is kept apart from broker_defs.go on purpose: a test
// that read the table to check the table could not fail. "" is Kafka's
// null; derived nulls show the value derived from the defaults.
var kafkaDefaults = map[string]string{
	"node.id": "", "broker.id": "", "process.roles": "",
	"controller.quorum.voters": "", "controller.quorum.bootstrap.servers": "",
	"controller.listener.names": "", "cluster.id": "",
	"broker.heartbeat.interval.ms": "2000", "broker.session.timeout.ms": "9000",
	"controller.quorum.election.timeout.ms": "1000", "controller.quorum.fetch.timeout.ms": "2000",
	"controller.quorum.election.backoff.max.ms": "1000", "controller.quorum.append.linger.ms": "25",
	"controller.quorum.request.timeout.ms": "2000", "controller.quorum.retry.backoff.ms": "20",
	"metadata.log.dir": "", "broker.rack": "", "metadata.log.max.record.bytes.between.snapshots": "20971520",
	"metadata.log.max.snapshot.interval.ms": "3600000",

	"listeners": "PLAINTEXT://:9092", "advertised.listeners": "PLAINTEXT://:9092",
	"listener.security.protocol.map": "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT",
	"inter.broker.listener.name":     "PLAINTEXT",
	"security.inter.broker.protocol": "PLAINTEXT",

	"log.dirs": "/tmp/kafka-logs", "log.dir": "/tmp/kafka-logs", "num.partitions": "1",
	"default.replication.factor": "1", "auto.create.topics.enable": "true", "delete.topic.enable": "true",

	"log.segment.bytes": "1073741824", "log.roll.ms": "604800000", "log.roll.hours": "168",
	"log.roll.jitter.ms": "0", "log.roll.jitter.hours": "0", "log.index.interval.bytes": "4096",
	"log.index.size.max.bytes": "10485760", "log.flush.interval.messages": "9223372036854775807",
	"log.flush.interval.ms": "9223372036854775807", "log.flush.scheduler.interval.ms": "9223372036854775807",
	"log.flush.offset.checkpoint.interval.ms": "60000", "log.flush.start.offset.checkpoint.interval.ms": "60000",
	"log.segment.delete.delay.ms": "60000", "log.preallocate": "false",
	"log.message.timestamp.type": "CreateTime", "log.message.timestamp.before.max.ms": "9223372036854775807",
	"log.message.timestamp.after.max.ms": "3600000", "log.message.downconversion.enable": "true",
	"log.local.retention.ms": "-2", "log.local.retention.bytes": "-2",
	"message.max.bytes": "1048588", "compression.type": "producer", "compression.gzip.level": "-1",
	"compression.lz4.level": "9", "compression.zstd.level": "3", "num.recovery.threads.per.data.dir": "2",

	"log.retention.ms": "604800000", "log.retention.minutes": "", "log.retention.hours": "168",
	"log.retention.bytes": "-1", "log.retention.check.interval.ms": "300000", "log.cleanup.policy": "delete",

	"log.cleaner.enable": "true", "log.cleaner.threads": "1", "log.cleaner.dedupe.buffer.size": "134217728",
	"log.cleaner.io.buffer.size": "524288", "log.cleaner.io.buffer.load.factor": "0.9",
	"log.cleaner.io.max.bytes.per.second": "1.7976931348623157E308", "log.cleaner.backoff.ms": "15000",
	"log.cleaner.min.cleanable.ratio": "0.5", "log.cleaner.delete.retention.ms": "86400000",
	"log.cleaner.min.compaction.lag.ms": "0", "log.cleaner.max.compaction.lag.ms": "9223372036854775807",

	"num.network.threads": "3", "num.io.threads": "8", "background.threads": "10", "queued.max.requests": "500",
	"queued.max.request.bytes": "-1", "socket.request.max.bytes": "104857600", "socket.send.buffer.bytes": "102400",
	"socket.receive.buffer.bytes": "102400", "socket.listen.backlog.size": "50", "connections.max.idle.ms": "600000",
	"max.connections": "2147483647", "max.connections.per.ip": "2147483647", "request.timeout.ms": "30000",
	"max.connections.per.ip.overrides": "", "max.connection.creation.rate": "2147483647",
	"fetch.max.bytes":             "57671680",
	"controller.quota.window.num": "11", "controller.quota.window.size.seconds": "1",
	"quota.window.num": "11", "quota.window.size.seconds": "1",
	"replica.alter.log.dirs.io.max.bytes.per.second": "9223372036854775807",
	"alter.log.dirs.replication.quota.window.num":    "11", "alter.log.dirs.replication.quota.window.size.seconds": "1",
	"replication.quota.window.num": "11", "replication.quota.window.size.seconds": "1",
	"leader.replication.throttled.rate": "9223372036854775807", "follower.replication.throttled.rate": "9223372036854775807",

	"min.insync.replicas": "1", "replica.lag.time.max.ms": "30000", "replica.fetch.max.bytes": "1048576",
	"replica.fetch.response.max.bytes": "10485760", "replica.fetch.wait.max.ms": "500", "replica.fetch.min.bytes": "1",
	"replica.fetch.backoff.ms": "1000", "replica.socket.timeout.ms": "30000", "replica.socket.receive.buffer.bytes": "65536",
	"num.replica.fetchers": "1", "replica.selector.class": "",
	"max.incremental.fetch.session.cache.slots": "1000", "min.incremental.fetch.session.eviction.ms": "120000", "replica.high.watermark.checkpoint.interval.ms": "5000",
	"unclean.leader.election.enable": "false", "auto.leader.rebalance.enable": "true",
	"leader.imbalance.check.interval.seconds": "300", "leader.imbalance.per.broker.percentage": "10",
	"fetch.purgatory.purge.interval.requests": "1000", "producer.purgatory.purge.interval.requests": "1000",
	"controlled.shutdown.enable": "true",

	"offsets.topic.num.partitions": "50", "offsets.topic.replication.factor": "3",
	"offsets.topic.segment.bytes": "104857600", "offsets.retention.minutes": "10080",
	"offsets.retention.check.interval.ms": "600000", "offsets.commit.timeout.ms": "5000",
	"offsets.load.buffer.size": "5242880", "offset.metadata.max.bytes": "4096",
	"group.initial.rebalance.delay.ms": "3000", "group.min.session.timeout.ms": "6000",
	"group.max.session.timeout.ms": "1800000", "group.max.size": "2147483647",
	"group.coordinator.rebalance.protocols": "classic,consumer", "group.coordinator.threads": "1",
	"group.consumer.session.timeout.ms": "45000", "group.consumer.heartbeat.interval.ms": "5000",
	"group.consumer.max.size":  "2147483647",
	"group.consumer.assignors": "org.apache.kafka.coordinator.group.assignor.UniformAssignor,org.apache.kafka.coordinator.group.assignor.RangeAssignor",

	"group.consumer.migration.policy": "bidirectional",

	"producer.id.expiration.ms": "86400000", "transactional.id.expiration.ms": "604800000",
	"transaction.max.timeout.ms": "900000", "transaction.state.log.num.partitions": "50",
	"transaction.state.log.replication.factor": "3", "transaction.state.log.min.isr": "2",
	"transaction.state.log.segment.bytes": "104857600", "transaction.state.log.load.buffer.size": "5242880",
	"transaction.partition.verification.enable": "true",

	"share.coordinator.state.topic.num.partitions": "50", "share.coordinator.state.topic.replication.factor": "3",
	"share.coordinator.state.topic.min.isr": "2", "share.coordinator.state.topic.segment.bytes": "104857600",
	"share.coordinator.threads": "1",

	// BrokerSecurityConfigs, SslConfigs, SaslConfigs.
	"ssl.keystore.type": "JKS", "ssl.keystore.location": "", "ssl.keystore.password": "",
	"ssl.keystore.key": "", "ssl.keystore.certificate.chain": "", "ssl.key.password": "",
	"ssl.truststore.type": "JKS", "ssl.truststore.location": "", "ssl.truststore.password": "",
	"ssl.truststore.certificates": "", "ssl.client.auth": "none", "ssl.enabled.protocols": "TLSv1.2,TLSv1.3",
	"ssl.protocol": "TLSv1.3", "ssl.cipher.suites": "", "ssl.endpoint.identification.algorithm": "https",
	"ssl.principal.mapping.rules": "DEFAULT", "sasl.enabled.mechanisms": "GSSAPI",
	"sasl.mechanism.inter.broker.protocol": "GSSAPI", "sasl.mechanism.controller.protocol": "GSSAPI", "connection.failed.authentication.delay.ms": "100",
	"connections.max.reauth.ms":          "0",
	"sasl.oauthbearer.jwks.endpoint.url": "", "sasl.oauthbearer.jwks.endpoint.refresh.ms": "3600000",
	"sasl.oauthbearer.jwks.endpoint.retry.backoff.ms": "100", "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms": "10000",
	"sasl.oauthbearer.expected.audience": "", "sasl.oauthbearer.expected.issuer": "",
	"sasl.oauthbearer.sub.claim.name": "sub", "sasl.oauthbearer.scope.claim.name": "scope",
	"sasl.oauthbearer.clock.skew.seconds": "30",
	"authorizer.class.name":               "", "super.users": "", "allow.everyone.if.no.acl.found": "false",
}

// varveDefaults are the properties whose default in Varve is not Kafka's,
// with Varve's value (doc.go, "Where Varve differs from Kafka"), and
// Varve's own properties.
var varveDefaults = map[string]string{
	"node.id":              "1",
	"broker.id":            "1",
	"process.roles":        "broker,controller",
	"listeners":            "PLAINTEXT://127.0.0.1:9092",
	"advertised.listeners": "PLAINTEXT://127.0.0.1:9092",
	"log.dir":              "./varve-data",
	"log.dirs":             "./varve-data",

	"varve.controller.mutation.rate":  "100.0",
	"varve.log.dir.probe.interval.ms": "5000",
	"varve.metrics.listener":          "127.0.0.1:7071",
	"varve.network.model":             "reactor",
	"varve.quorum.learner.listener":   "",
}

// Kafka: every broker default is Kafka 4's, except the documented ones.
func TestBrokerDefaultsMatchKafka(t *testing.T) {
	b := Default()
	for _, name := range b.Names() {
		want, isKafka := kafkaDefaults[name]
		if v, ok := varveDefaults[name]; ok {
			want = v
		} else if !isKafka {
			t.Errorf("%s: no expected default in this test; add Kafka's", name)
			continue
		}
		if got, _ := b.Get(name); got != want {
			t.Errorf("default %s = %q, want %q", name, got, want)
		}
		if !b.IsDefault(name) {
			t.Errorf("IsDefault(%s) = false for Default()", name)
		}
	}
	for name := range kafkaDefaults {
		if _, ok := b.Get(name); !ok {
			t.Errorf("%s: Kafka property missing from the definitions", name)
		}
	}
}

// Each Varve-specific default is documented with Kafka's own, so that the
// doc.go list shows both; Varve's own properties say they are Varve's.
func TestVarveDefaultsAreDocumented(t *testing.T) {
	for name := range varveDefaults {
		d := brokerIndex().byName[name]
		switch {
		case d == nil:
			t.Errorf("%s: not defined", name)
		case d.varve != (len(name) > 6 && name[:6] == "varve."):
			t.Errorf("%s: varve flag %v disagrees with its name", name, d.varve)
		case !d.varve && d.kafka == "" && !d.derived:
			t.Errorf("%s: differs from Kafka but has no kafka default to show", name)
		}
	}
}

// kafkaTopicDefaults is Kafka's default of each topic property
// (LogConfig), which is its broker synonym's default.
var kafkaTopicDefaultValues = map[string]string{
	"cleanup.policy": "delete", "compression.type": "producer", "compression.gzip.level": "-1",
	"compression.lz4.level": "9", "compression.zstd.level": "3", "delete.retention.ms": "86400000",
	"file.delete.delay.ms": "60000", "flush.messages": "9223372036854775807", "flush.ms": "9223372036854775807",
	"index.interval.bytes": "4096", "max.compaction.lag.ms": "9223372036854775807", "max.message.bytes": "1048588",
	"message.timestamp.type": "CreateTime", "message.timestamp.before.max.ms": "9223372036854775807",
	"message.timestamp.after.max.ms": "3600000", "min.cleanable.dirty.ratio": "0.5", "min.compaction.lag.ms": "0",
	"min.insync.replicas": "1", "preallocate": "false", "retention.bytes": "-1", "retention.ms": "604800000",
	"segment.bytes": "1073741824", "segment.index.bytes": "10485760", "segment.jitter.ms": "0",
	"segment.ms": "604800000", "unclean.leader.election.enable": "false", "message.downconversion.enable": "true",
	"leader.replication.throttled.replicas": "", "follower.replication.throttled.replicas": "",
	"remote.storage.enable": "false", "local.retention.ms": "-2", "local.retention.bytes": "-2",
	"remote.log.copy.disable": "false", "remote.log.delete.on.disable": "false",
}

// Kafka: a topic with no override shows its broker defaults (LogConfig).
func TestTopicDefaultsMatchKafka(t *testing.T) {
	td := Default().TopicDefaults()
	names := TopicNames()
	if len(names) != len(kafkaTopicDefaultValues) {
		t.Errorf("TopicNames has %d names, the expected table %d", len(names), len(kafkaTopicDefaultValues))
	}
	for _, name := range names {
		want, ok := kafkaTopicDefaultValues[name]
		if !ok {
			t.Errorf("%s: no expected default in this test", name)
			continue
		}
		got, isDefault, ok := td.Get(name)
		if !ok || !isDefault || got != want {
			t.Errorf("topic default %s = %q (default %v, known %v), want %q", name, got, isDefault, ok, want)
		}
		var zero Topic
		if z, _, _ := zero.Get(name); z != want {
			t.Errorf("zero Topic %s = %q, want Kafka's %q", name, z, want)
		}
	}
}
