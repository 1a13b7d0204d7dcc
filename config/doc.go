// Package config is a Varve node's configuration, in Kafka's words: every
// broker property has Kafka's name, Kafka's default and Kafka's meaning,
// and every topic property is Kafka's topic-level name, defaulting to the
// broker property Kafka takes it from. Someone who knows Kafka does not
// learn new words; a copied Kafka 4 server.properties starts a Varve node.
//
//	b, err := config.ParseFile("server.properties", []string{"log.dirs=/data"})
//	t, err := b.ParseTopic(map[string]string{"cleanup.policy": "compact"})
//	log, err := segment.Open(dir, b.LogConfig(t))
//	retention.Enforce(log, t.RetentionPolicy(), ...)
//
// One definitions table per level (broker_defs.go, topic_defs.go) holds
// each property's name, type, default, range and field; parsing, Get,
// Names, the lists below and the tests all read it.
//
// # Reading a configuration
//
// ReadProperties reads Java .properties text (comments # and !, key=value,
// key:value or key value, \ line continuations, \t \n \uXXXX escapes).
// ParseFile reads a file and applies --override style "key=value" pairs,
// which win. Parse checks every name and value:
//
//   - An unknown name is an error naming it, with the nearest known name.
//     Kafka only logs a warning for an unknown property; Varve refuses it,
//     so that a typo ("log.retention.hour") cannot silently leave a
//     default in place.
//   - A value is parsed as Kafka's ConfigDef parses its type (trimmed;
//     booleans in any case; lists split at commas) and checked against
//     Kafka's range. The error names the property, the value and what was
//     expected. All errors are reported at once (errors.Join of
//     *PropertyError, each wrapping ErrUnknownProperty, ErrInvalidValue or
//     ErrUnsupported).
//   - The properties Kafka leaves null are derived with Kafka's
//     precedence: log.retention.ms, else log.retention.minutes, else
//     log.retention.hours (a negative result is -1, unlimited); log.roll.ms
//     from log.roll.hours; log.roll.jitter.ms from log.roll.jitter.hours;
//     log.flush.interval.ms from log.flush.scheduler.interval.ms; log.dirs
//     from log.dir; advertised.listeners from listeners;
//     inter.broker.listener.name from security.inter.broker.protocol;
//     broker.id and node.id from each other (both given must agree).
//   - Cross-property checks follow Kafka's KafkaConfig and LogConfig:
//     listener names, ports and security protocols, advertised listeners
//     (never 0.0.0.0), the inter-broker listener, the KRaft roles, voters
//     and controller listeners, replica.fetch.wait.max.ms against
//     replica.lag.time.max.ms and replica.socket.timeout.ms, the dedupe
//     buffer per cleaner thread, min.compaction.lag.ms against
//     max.compaction.lag.ms.
//   - A listener overrides the ssl.* properties and
//     sasl.enabled.mechanisms with Kafka's prefix
//     listener.name.<lower-case listener name>. (KIP-103), and takes a SASL
//     mechanism's JAAS configuration from
//     listener.name.<listener>.<lower-case mechanism>.sasl.jaas.config;
//     Broker.Security resolves them. A prefix naming no listener is an
//     error. Password-typed values (keys, key store and trust store
//     contents and passwords) never show in Get or in errors.
//
// # Dynamic configuration
//
// Broker.WithDynamic layers dynamic settings (KIP-226: a node's own,
// then the cluster default) over the static configuration, re-derived
// as at start-up, and Broker.Synonyms and Broker.Source report each
// value's level in Kafka's order. CheckDynamic is Kafka's
// DynamicBrokerConfig.validateConfigs over dynamic.go's table, which
// mirrors Kafka's dynamic properties and their per-broker or
// cluster-wide rule; Varve accepts only the ones it applies live
// (IsDynamic) and refuses the others with Kafka's message.
//
// Properties marked "accepted" below are Kafka's, parsed and validated so
// that a Kafka configuration starts, but Varve does not act on them (Get
// still shows them). Varve's own properties start with "varve." and are
// marked so.
//
// # Invariants and concurrency
//
// Parse returns either a Broker in which every property is valid or an
// error; never a partial Broker. A Broker and a Topic are read-only after
// they are made, and any number of goroutines may read them. A Topic is a
// value: With returns a new Topic and leaves the old one as it was;
// Overrides is exactly what was set, the thing to persist, and
// ParseTopic(t.Overrides()) gives back t.
//
// # Where Varve differs from Kafka
//
// Defaults: node.id 1 and process.roles broker,controller (Kafka requires
// both); listeners PLAINTEXT://127.0.0.1:9092 (Kafka: PLAINTEXT://:9092,
// every interface; Varve listens on loopback until told otherwise, so a
// node started to try Varve is not reachable from the network); log.dir
// ./varve-data (Kafka: /tmp/kafka-logs). With no controller.quorum.voters
// and no controller.quorum.bootstrap.servers, a broker,controller node runs
// its controller in-process and needs no controller listener.
//
// Ranges, where the storage packages need more than Kafka allows, so that
// a bad value fails when the configuration is read and not when a log is
// opened: segment.index.bytes and log.index.size.max.bytes at least 48
// (four time-index entries; Kafka: 4); max.message.bytes and
// message.max.bytes at least 61, one batch header (Kafka: 0);
// log.cleaner.io.buffer.load.factor in (0, 1] and
// log.cleaner.io.max.bytes.per.second above 0 (Kafka: no range);
// default.replication.factor at least 1. segment.bytes keeps the old
// minimum of 14 (Kafka 4 raised it to 1 MiB) so that tests and
// experiments can roll tiny segments. A list item given twice is refused.
//
// log.cleaner.backoff.ms=0 makes an idle cleaner worker sleep 1 ms
// (Kafka's would spin).
//
// # Conversions
//
// Topic.SegmentConfig, Broker.LogConfig, Topic.RetentionPolicy,
// Topic.CompactionTopicConfig, Topic.CompactionConfig and
// Broker.CleanerConfig turn properties into segment.Config,
// retention.Policy and compaction.Config (convert.go). Those packages
// take every value as given, zero included, so each property maps onto
// its field value for value: retention.bytes=0 deletes every segment,
// flush.ms=0 makes every append durable, index.interval.bytes=0 indexes
// every batch, as in Kafka. Their DefaultConfig functions give the same
// numbers as the tables here (TestStorageDefaultsAgreeWithTheTables).
// config imports the storage packages and sits below net, replica, group
// and cluster; the conversions to net.Config, replica.Config and
// group.Config are therefore package cluster's, all in cluster/convert.go,
// so that every property's destination is in one of these two files.
//
// Properties files are read as UTF-8, not ISO-8859-1 as Java's
// Properties.load(InputStream) reads them.
//
// # Broker properties
//
// Name, default (as DescribeConfigs shows it; "null" is Kafka's null),
// and notes. Generated from broker_defs.go; TestDocListsEveryProperty
// fails when this list is stale, and `go test ./config -run
// TestDocListsEveryProperty -update` rewrites it.
//
//	advertised.listeners                             null                         (unset or empty: listeners)
//	allow.everyone.if.no.acl.found                   false                        (allow an operation on a resource no ACL applies to)
//	alter.log.dirs.replication.quota.window.num      11
//	alter.log.dirs.replication.quota.window.size.seconds 1
//	authorizer.class.name                            ""                           (empty: no authorization, as Kafka; org.apache.kafka.metadata.authorizer.StandardAuthorizer: ACLs from the cluster metadata)
//	auto.create.topics.enable                        true
//	auto.leader.rebalance.enable                     true
//	background.threads                               10                           (accepted)
//	broker.heartbeat.interval.ms                     2000
//	broker.id                                        null                         (Kafka: -1 (then node.id); alias of node.id; if both are given they must be equal)
//	broker.rack                                      null
//	broker.session.timeout.ms                        9000
//	cluster.id                                       null                         (Kafka keeps it in meta.properties (kafka-storage.sh format -t))
//	compression.gzip.level                           -1                           (accepted)
//	compression.lz4.level                            9                            (accepted)
//	compression.type                                 producer
//	compression.zstd.level                           3                            (accepted)
//	connection.failed.authentication.delay.ms        100
//	connections.max.idle.ms                          600000
//	connections.max.reauth.ms                        0                            (KIP-368: an authenticated SASL session's lifetime; a client re-authenticates on the connection before it ends, else its next request closes the connection; 0: sessions never expire)
//	controlled.shutdown.enable                       true                         (accepted)
//	controller.listener.names                        null                         (may stay empty on a single node, whose controller is in-process)
//	controller.quorum.append.linger.ms               25                           (accepted)
//	controller.quorum.bootstrap.servers              ""
//	controller.quorum.election.backoff.max.ms        1000                         (accepted)
//	controller.quorum.election.timeout.ms            1000
//	controller.quorum.fetch.timeout.ms               2000
//	controller.quorum.request.timeout.ms             2000
//	controller.quorum.retry.backoff.ms               20
//	controller.quorum.voters                         ""
//	controller.quota.window.num                      11
//	controller.quota.window.size.seconds             1
//	default.replication.factor                       1
//	delete.topic.enable                              true
//	fetch.max.bytes                                  57671680
//	fetch.purgatory.purge.interval.requests          1000                         (accepted)
//	follower.replication.throttled.rate              9223372036854775807          (bytes/s a follower fetches for follower.replication.throttled.replicas; Kafka takes it only dynamically)
//	group.consumer.assignors                         org.apache.kafka.coordinator.group.assignor.UniformAssignor,org.apache.kafka.coordinator.group.assignor.RangeAssignor
//	group.consumer.heartbeat.interval.ms             5000
//	group.consumer.max.size                          2147483647
//	group.consumer.migration.policy                  bidirectional
//	group.consumer.session.timeout.ms                45000
//	group.coordinator.rebalance.protocols            classic,consumer             (accepted)
//	group.coordinator.threads                        1                            (accepted)
//	group.initial.rebalance.delay.ms                 3000
//	group.max.session.timeout.ms                     1800000
//	group.max.size                                   2147483647
//	group.min.session.timeout.ms                     6000
//	inter.broker.listener.name                       null                         (unset: the listener named after security.inter.broker.protocol)
//	leader.imbalance.check.interval.seconds          300
//	leader.imbalance.per.broker.percentage           10
//	leader.replication.throttled.rate                9223372036854775807          (bytes/s a leader serves to the followers of leader.replication.throttled.replicas; Kafka takes it only dynamically)
//	listener.security.protocol.map                   SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT
//	listeners                                        PLAINTEXT://127.0.0.1:9092   (Kafka: PLAINTEXT://:9092; loopback by default: a node someone starts to try Varve is not reachable from the network until they say so)
//	log.cleaner.backoff.ms                           15000
//	log.cleaner.dedupe.buffer.size                   134217728
//	log.cleaner.delete.retention.ms                  86400000
//	log.cleaner.enable                               true
//	log.cleaner.io.buffer.load.factor                0.9
//	log.cleaner.io.buffer.size                       524288
//	log.cleaner.io.max.bytes.per.second              1.7976931348623157E308
//	log.cleaner.max.compaction.lag.ms                9223372036854775807
//	log.cleaner.min.cleanable.ratio                  0.5
//	log.cleaner.min.compaction.lag.ms                0
//	log.cleaner.threads                              1
//	log.cleanup.policy                               delete
//	log.dir                                          ./varve-data                 (Kafka: /tmp/kafka-logs)
//	log.dirs                                         null                         (unset: log.dir)
//	log.flush.interval.messages                      9223372036854775807
//	log.flush.interval.ms                            null                         (unset: log.flush.scheduler.interval.ms)
//	log.flush.offset.checkpoint.interval.ms          60000
//	log.flush.scheduler.interval.ms                  9223372036854775807
//	log.flush.start.offset.checkpoint.interval.ms    60000
//	log.index.interval.bytes                         4096
//	log.index.size.max.bytes                         10485760
//	log.local.retention.bytes                        -2                           (accepted; tiered storage)
//	log.local.retention.ms                           -2                           (accepted; tiered storage)
//	log.message.downconversion.enable                true                         (accepted; Varve never down-converts)
//	log.message.timestamp.after.max.ms               3600000
//	log.message.timestamp.before.max.ms              9223372036854775807
//	log.message.timestamp.type                       CreateTime
//	log.preallocate                                  false
//	log.retention.bytes                              -1
//	log.retention.check.interval.ms                  300000
//	log.retention.hours                              168
//	log.retention.minutes                            null
//	log.retention.ms                                 null                         (unset: log.retention.minutes, then log.retention.hours; negative: -1, unlimited)
//	log.roll.hours                                   168
//	log.roll.jitter.hours                            0
//	log.roll.jitter.ms                               null                         (unset: log.roll.jitter.hours)
//	log.roll.ms                                      null                         (unset: log.roll.hours)
//	log.segment.bytes                                1073741824
//	log.segment.delete.delay.ms                      60000
//	max.connection.creation.rate                     2147483647
//	max.connections                                  2147483647
//	max.connections.per.ip                           2147483647
//	max.connections.per.ip.overrides                 ""
//	max.incremental.fetch.session.cache.slots        1000
//	message.max.bytes                                1048588
//	metadata.log.dir                                 null
//	metadata.log.max.record.bytes.between.snapshots  20971520
//	metadata.log.max.snapshot.interval.ms            3600000
//	min.incremental.fetch.session.eviction.ms        120000
//	min.insync.replicas                              1
//	node.id                                          1                            (Kafka: none (required))
//	num.io.threads                                   8
//	num.network.threads                              3
//	num.partitions                                   1
//	num.recovery.threads.per.data.dir                2
//	num.replica.fetchers                             1
//	offset.metadata.max.bytes                        4096
//	offsets.commit.timeout.ms                        5000
//	offsets.load.buffer.size                         5242880                      (accepted)
//	offsets.retention.check.interval.ms              600000
//	offsets.retention.minutes                        10080
//	offsets.topic.num.partitions                     50
//	offsets.topic.replication.factor                 3
//	offsets.topic.segment.bytes                      104857600
//	process.roles                                    broker,controller            (Kafka: none (required))
//	producer.id.expiration.ms                        86400000
//	producer.purgatory.purge.interval.requests       1000                         (accepted)
//	queued.max.request.bytes                         -1                           (-1: not unbounded as in Kafka but half of GOMEMLIMIT, else a quarter of physical or cgroup memory, at least socket.request.max.bytes)
//	queued.max.requests                              500
//	quota.window.num                                 11
//	quota.window.size.seconds                        1
//	replica.alter.log.dirs.io.max.bytes.per.second   9223372036854775807
//	replica.fetch.backoff.ms                         1000
//	replica.fetch.max.bytes                          1048576
//	replica.fetch.min.bytes                          1
//	replica.fetch.response.max.bytes                 10485760
//	replica.fetch.wait.max.ms                        500
//	replica.high.watermark.checkpoint.interval.ms    5000
//	replica.lag.time.max.ms                          30000
//	replica.selector.class                           null
//	replica.socket.receive.buffer.bytes              65536                        (accepted)
//	replica.socket.timeout.ms                        30000
//	replication.quota.window.num                     11
//	replication.quota.window.size.seconds            1
//	request.timeout.ms                               30000                        (accepted)
//	sasl.enabled.mechanisms                          GSSAPI                       (accepted; Varve serves PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER; a SASL listener enabling GSSAPI stops start-up)
//	sasl.mechanism.controller.protocol               GSSAPI                       (accepted; the controller client's and raft transport's mechanism on a SASL controller listener: PLAIN or SCRAM)
//	sasl.mechanism.inter.broker.protocol             GSSAPI                       (accepted; the follower fetchers' mechanism on a SASL inter-broker listener: PLAIN or SCRAM, as the listener's JAAS username and password)
//	sasl.oauthbearer.clock.skew.seconds              30                           (accepted)
//	sasl.oauthbearer.expected.audience               null                         (accepted)
//	sasl.oauthbearer.expected.issuer                 null                         (accepted)
//	sasl.oauthbearer.jwks.endpoint.refresh.ms        3600000                      (accepted)
//	sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms 10000                     (accepted; accepted)
//	sasl.oauthbearer.jwks.endpoint.retry.backoff.ms  100                          (accepted; the least time between two fetches of the key set for a key id it lacks)
//	sasl.oauthbearer.jwks.endpoint.url               null                         (accepted; file:// or http(s):// URL of the JSON Web Key Set that signs tokens; unset: OAUTHBEARER needs the unsecured validator's JAAS configuration)
//	sasl.oauthbearer.scope.claim.name                scope                        (accepted)
//	sasl.oauthbearer.sub.claim.name                  sub                          (accepted)
//	security.inter.broker.protocol                   PLAINTEXT
//	share.coordinator.state.topic.min.isr            2                            (accepted)
//	share.coordinator.state.topic.num.partitions     50                           (accepted)
//	share.coordinator.state.topic.replication.factor 3                            (accepted)
//	share.coordinator.state.topic.segment.bytes      104857600                    (accepted)
//	share.coordinator.threads                        1                            (accepted)
//	socket.listen.backlog.size                       50
//	socket.receive.buffer.bytes                      102400
//	socket.request.max.bytes                         104857600
//	socket.send.buffer.bytes                         102400
//	ssl.cipher.suites                                null                         (accepted; IANA names of TLS 1.2 suites; unset: crypto/tls's secure defaults; TLS 1.3 always uses crypto/tls's three AEAD suites)
//	ssl.client.auth                                  none                         (accepted)
//	ssl.enabled.protocols                            TLSv1.2,TLSv1.3              (accepted)
//	ssl.endpoint.identification.algorithm            https                        (accepted; checked by this node's connections to other nodes (and by clients); empty: the chain is verified, not the host name)
//	ssl.key.password                                 null                         (accepted; Varve reads unencrypted PEM keys only)
//	ssl.keystore.certificate.chain                   null                         (accepted; PEM certificates, the node's first)
//	ssl.keystore.key                                 null                         (accepted; PEM private key (PKCS#8, PKCS#1 or SEC 1), unencrypted)
//	ssl.keystore.location                            null                         (accepted; with ssl.keystore.type=PEM: one file holding the private key and the certificate chain)
//	ssl.keystore.password                            null                         (accepted)
//	ssl.keystore.type                                JKS                          (accepted; Varve reads PEM only)
//	ssl.principal.mapping.rules                      DEFAULT                      (accepted; Kafka's RULE:pattern/replacement/[LU] and DEFAULT, mapping a TLS client's subject DN to its principal; patterns are Go (RE2) regular expressions)
//	ssl.protocol                                     TLSv1.3                      (accepted; Java's SSLContext protocol; crypto/tls negotiates within ssl.enabled.protocols)
//	ssl.truststore.certificates                      null                         (accepted)
//	ssl.truststore.location                          null                         (accepted)
//	ssl.truststore.password                          null                         (accepted)
//	ssl.truststore.type                              JKS                          (accepted; Varve reads PEM only)
//	super.users                                      ""                           (principals allowed everything, separated by semicolons (User:admin;User:broker))
//	transaction.max.timeout.ms                       900000
//	transaction.partition.verification.enable        true                         (accepted)
//	transaction.state.log.load.buffer.size           5242880                      (accepted)
//	transaction.state.log.min.isr                    2
//	transaction.state.log.num.partitions             50
//	transaction.state.log.replication.factor         3
//	transaction.state.log.segment.bytes              104857600
//	transactional.id.expiration.ms                   604800000
//	unclean.leader.election.enable                   false
//	varve.controller.mutation.rate                   100.0                        (Varve's own; partitions created or deleted per second by all clients together (Kafka's controller_mutation_rate quota, unbounded there by default); bursts up to rate x controller.quota.window.num x controller.quota.window.size.seconds; 0: unbounded)
//	varve.log.dir.probe.interval.ms                  5000                         (Varve's own; how often an offline log directory is probed (write, fsync, remove a small file) to bring it back online without a restart; Kafka keeps it offline until the broker restarts)
//	varve.metrics.listener                           127.0.0.1:7071               (Varve's own; HTTP address serving Prometheus metrics at /metrics; empty turns it off)
//	varve.network.model                              reactor                      (Varve's own; reactor: Kafka's acceptor, processors and handler pool; goroutine: one goroutine per connection, requests handed to the handler pool; goroutine-inline: each request served on its connection's goroutine)
//	varve.quorum.learner.listener                    ""                           (Varve's own; host:port on which a broker-only node (process.roles=broker) receives the metadata log from the controllers as a raft learner; required on such a node when controller.quorum.voters is set)
//
// # Topic properties
//
// Name and the broker property giving its default (or the fixed
// default). Generated from topic_defs.go like the list above.
//
//	cleanup.policy                                   from log.cleanup.policy
//	compression.gzip.level                           from compression.gzip.level  (accepted)
//	compression.lz4.level                            from compression.lz4.level   (accepted)
//	compression.type                                 from compression.type
//	compression.zstd.level                           from compression.zstd.level  (accepted)
//	delete.retention.ms                              from log.cleaner.delete.retention.ms
//	file.delete.delay.ms                             from log.segment.delete.delay.ms
//	flush.messages                                   from log.flush.interval.messages
//	flush.ms                                         from log.flush.interval.ms
//	follower.replication.throttled.replicas          default empty                ("*" or partition:broker pairs a follower throttles at follower.replication.throttled.rate)
//	index.interval.bytes                             from log.index.interval.bytes
//	leader.replication.throttled.replicas            default empty                ("*" or partition:broker pairs whose fetches a leader throttles at leader.replication.throttled.rate)
//	local.retention.bytes                            from log.local.retention.bytes (accepted; tiered storage)
//	local.retention.ms                               from log.local.retention.ms  (accepted; tiered storage)
//	max.compaction.lag.ms                            from log.cleaner.max.compaction.lag.ms
//	max.message.bytes                                from message.max.bytes
//	message.downconversion.enable                    from log.message.downconversion.enable (accepted; Varve never down-converts)
//	message.timestamp.after.max.ms                   from log.message.timestamp.after.max.ms
//	message.timestamp.before.max.ms                  from log.message.timestamp.before.max.ms
//	message.timestamp.type                           from log.message.timestamp.type
//	min.cleanable.dirty.ratio                        from log.cleaner.min.cleanable.ratio
//	min.compaction.lag.ms                            from log.cleaner.min.compaction.lag.ms
//	min.insync.replicas                              from min.insync.replicas
//	preallocate                                      from log.preallocate
//	remote.log.copy.disable                          default false                (accepted; tiered storage)
//	remote.log.delete.on.disable                     default false                (accepted; tiered storage)
//	remote.storage.enable                            default false                (accepted; true is refused: Varve has no tiered storage)
//	retention.bytes                                  from log.retention.bytes
//	retention.ms                                     from log.retention.ms
//	segment.bytes                                    from log.segment.bytes
//	segment.index.bytes                              from log.index.size.max.bytes
//	segment.jitter.ms                                from log.roll.jitter.ms
//	segment.ms                                       from log.roll.ms
//	unclean.leader.election.enable                   from unclean.leader.election.enable
package config
