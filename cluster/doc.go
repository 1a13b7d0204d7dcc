// Package cluster is a Varve node: the Kafka APIs over the node's
// partitions, served by the network layer, plus the node's background
// work (retention, compaction, checkpoints) and its metrics.
//
// Each API lives in a file named after its key (00_produce.go,
// 01_fetch.go, ...) that opens with the versions it serves, what it does,
// and what it leaves out; api.go registers them and ApiVersions lists
// exactly what is registered. Requests are decoded and responses encoded
// with franz-go's kmsg, generated from Kafka's own message definitions,
// except the Fetch response, which is written by hand around file regions
// so that records reach the socket through sendfile.
//
// A key or version that is not served closes the connection, as Kafka's
// SocketServer does; ApiVersions at an unknown version is answered at v0
// with UNSUPPORTED_VERSION so the client can retry. A body that does not
// decode closes the connection. Nothing a client sends can make the
// broker panic or allocate beyond socket.request.max.bytes.
//
// Today a node is a single broker and its own controller. Handlers
// answer from a metadata.Image (brokers, topics, partitions with their
// leaders and epochs, configuration overrides, the producer-id block)
// taken from a metadata.Publisher with one atomic load. Its single-node
// source is varve-metadata.json in the first log dir (metastore.go): a
// change is planned on the current image, applied to a copy, written
// atomically, then published; a failed write publishes nothing. Every
// partition has one replica, on this node. Topic deletion is recorded
// in the file (the topic removed and its directories queued) before any
// directory goes, and a start finishes queued deletions before adopting
// stray partitions and recreating missing ones (reconcile.go).
// Creations and deletions count against Kafka's controller mutation
// quota (KIP-599): the client's controller_mutation_rate, if one applies
// (quota_mutation.go), and the node's own bound (quota.go).
//
// Client quotas (KIP-13, KIP-124, KIP-546) are metadata: AlterClientQuotas
// and DescribeClientQuotas (48, 49) change and list them, and each
// Produce, consumer Fetch and request answered at once is measured
// against the quota Kafka's DefaultQuotaCallback picks for its user and
// client id (quota_client.go); a client over it gets throttle_time_ms and
// its connection stays muted for that time (KIP-219, quota_enforce.go).
//
// Replication quotas (KIP-73, replication_quota.go): the node's
// leader.replication.throttled.rate and follower.replication.throttled.rate
// (dynamic, per node or cluster default) bound the replica manager's
// two quotas, and each topic's leader.replication.throttled.replicas and
// follower.replication.throttled.replicas, as an image brings them,
// say which of this node's replicas they cover. A follower's fetch of a
// throttled replica outside the ISR is answered with no records while
// the leader's quota is exceeded (it parks in the purgatory until
// max.wait.ms), with no throttle time; the follower's side is the
// replica package's fetcher.
//
// In a cluster (quorum_mode.go) a node is a broker and a voter
// (process.roles=broker,controller), a broker alone that follows the
// metadata log as a raft learner (process.roles=broker), or a
// controller alone (process.roles=controller, controller_only.go): the
// quorum member and its metrics, with no broker part at all.
//
// # Replication
//
// replicas.go follows the metadata publisher (one goroutine, taking
// Wait before Image) and applies each image's partition states to the
// replicas, as Kafka's ReplicaManager.applyDelta does: a partition
// assigned to this node gets its log and becomes leader or follower
// with the image's leader, epochs, ISR and replicas; one no longer
// assigned, or whose topic left the image, is stopped and deleted;
// brokers fenced or in controlled shutdown are ineligible for any ISR.
// A LeadershipListener hears of this node's leadership changes, and
// AlterPartition goes to the active controller through a
// ControllerClient. replica_client.go is the follower fetchers' wire:
// Fetch v17 to the leader's inter-broker endpoint, dialed from this
// node's own listener host. Fetch serves followers to the log end and
// consumers to the high watermark from the same file-region path.
//
// # Security
//
// Each broker listener gets its security protocol's treatment
// (security.go): TLS on SSL and SASL_SSL listeners (security_tls.go,
// PEM key and trust stores), served by a goroutine-per-connection
// server beside the Reactor (security_servers.go); SASL on SASL_PLAINTEXT
// and SASL_SSL listeners (sasl.go: the connection's stages, kept in its
// net.ConnState, and re-authentication, KIP-368; sasl_mechanisms.go:
// PLAIN and SCRAM, whose users are in the metadata image
// (AlterUserScramCredentials) or the JAAS property; sasl_oauthbearer.go,
// sasl_jwt.go, sasl_jwks.go: OAUTHBEARER with Kafka's secured and
// unsecured validators; sasl_jaas.go: Kafka's sasl.jaas.config).
// Broker.Serve refuses any request a SASL connection's stage does not
// allow before dispatching it, and closes a connection whose session
// is over. A
// connection's principal (security.principal) is the SASL user, else the
// TLS client certificate's subject DN mapped by
// ssl.principal.mapping.rules (a certificate no rule maps fails its
// handshake), else User:ANONYMOUS. Key and trust stores named by file
// are reloaded when the files change, at most once a second, on a
// handshake (security_reload.go); a file that does not load is logged
// and the old material kept. The controller listener and the
// inter-broker listener take the same protocols; this node's own
// connections to them (follower fetchers, controller client, raft
// transport) present its key store, verify with its trust store and
// authenticate with PLAIN or SCRAM as the listener says
// (security_peer.go, security_quorum.go). What is not built stops
// start-up instead of serving less than was configured.
//
// With authorizer.class.name set to Kafka's StandardAuthorizer, every
// API checks Kafka's required operation against the ACLs of the
// metadata image (authorize.go: the index and its refresh;
// authorize_apis.go: each API's rule, in a table) and answers Kafka's
// authorization errors; 29_describe_acls.go, 30_create_acls.go and
// 31_delete_acls.go manage the ACLs.
//
// # Configuration and background cleaning
//
// Properties are package config's. The conversions into the configs of
// the packages the node wires are in two files: config/convert.go for the
// storage packages (segment, retention, compaction), which config sits
// above, and convert.go here for net, replica and group, which sit beside
// or above config, so config cannot import them and cluster, above all
// of them, is the one place that can see both sides.
//
// Dynamic broker configuration (KIP-226, broker_config*.go): the
// metadata image holds each node's dynamic settings and the cluster
// default as ConfigRecords; the node's effective configuration layers
// them over the static one (config.Broker.WithDynamic) and is what topic
// defaults, the log cleaner and the connection limits read. Every image
// applied, and every change on a single node, brings the live logs, the
// cleaner and the network servers in line (applyDynamicConfig, under its
// own lock); the rest of the node reads the static configuration.
// broker_logger.go serves BROKER_LOGGER resources: log levels per
// component over slog, set at run time.
//
// cleaners.go runs Kafka's two cleanup tasks: the retention scheduler
// over every log whose cleanup.policy is delete alone, and the log
// cleaner over the compacted logs. retention and compaction do not know
// each other; the node composes Kafka's cleaner-thread round, clean then
// delete, by giving each compaction.Target a Retain that runs
// retention.Enforce with the topic's policy.
//
// # Concurrency
//
// The metadata source has two locks, neither taken by Produce or Fetch:
// an admin lock serialising topic creation, growth and deletion across
// their metadata write and their partition directories, and below it
// the change lock held across one plan, apply, write and publish.
//
// Broker.Serve is called by the network layer's handler goroutines
// (num.io.threads) concurrently. A Fetch that must wait, and an acks=all
// Produce whose high watermark lags, wait in the broker's purgatory
// (replica.Purgatory) without a goroutine: the goroutine of the event
// that satisfies one (an append, a high-watermark advance, a deletion)
// answers it, or the purgatory's reaper at its timeout. The broker's
// other goroutines: the purgatory's reaper, the listeners' accept loops,
// the retention scheduler, the log cleaner's workers, the image
// follower of replicas.go and the replica manager's ISR check,
// AlterPartition sender and fetchers (package replica), the log manager's
// checkpoint and log-dir probe loops (package logdir), the group
// coordinators' timer and their loader of
// __consumer_offsets at start, the transaction coordinators' timer,
// their loaders of __transaction_state, one marker writer per
// transaction being committed or aborted (txns.go, txn_markers.go), one
// goroutine per transactional request held while the previous
// transaction ends, at most txnHoldMax (txn_hold.go),
// and the metrics HTTP server.
package cluster
