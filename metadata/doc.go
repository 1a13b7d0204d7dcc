// Package metadata is the cluster's metadata as Kafka's KRaft brokers
// hold it: an immutable Image (brokers, topics and their partitions,
// configuration overrides, the producer-id block, finalized feature
// levels, SCRAM credentials, client quotas: quota.go, dynamic broker
// settings: broker_config.go, ACLs by id:
// image_acl.go) and the records that change it.
//
// A change is a list of records (TopicRecord, PartitionRecord,
// PartitionChangeRecord, RemoveTopicRecord, ConfigRecord,
// ProducerIdsRecord, RegisterBrokerRecord, BrokerRegistrationChangeRecord,
// FenceBrokerRecord, UnfenceBrokerRecord, FeatureLevelRecord,
// UserScramCredentialRecord, RemoveUserScramCredentialRecord,
// ClientQuotaRecord,
// AccessControlEntryRecord, RemoveAccessControlEntryRecord, in the
// shape of Kafka's)
// replayed by Apply over one image into the next. Apply is
// copy-on-write at the topic level: the next image shares every topic
// the records leave alone, copies each topic they change once, and
// copies the topic indexes (maps of pointers); the image it started
// from is unchanged and stays valid for whoever holds it.
//
// features.go holds what this software supports of Kafka's features
// (metadata.version over the 4.0 levels 22-25, whose record versions
// it writes; group.version 0-1, 1 being KIP-848 consumer groups;
// transaction.version 0-2, 2 being KIP-890 part 2; kraft.version at 0
// only) and the records a new cluster begins with (BootstrapRecords:
// metadata.version 25, 4.0-IV3, group.version 1 and transaction.version
// 2).
//
// Images come from a source: today the single-node metadata file (in
// cluster), which rebuilds its records at start and persists each new
// image before publishing it; the Raft controller's log (package
// quorum), whose entries hold one record each, a change of several
// framed by BeginTransactionRecord and EndTransactionRecord (KIP-868,
// codec_txn.go; IsControl records leave the image as it is). A
// Publisher holds the current image in an atomic.Pointer, so that a
// request handler reads metadata with one load and never waits for a
// change being made.
//
// # Kafka's format
//
// Records are written and read in Kafka's binary format, as Kafka's
// metadata log and snapshots hold them (codec.go: the framing, the api
// keys and the versions; codec_wire.go: the primitives; codec_broker.go
// codec_topic.go, codec_scram.go, codec_quota.go, codec_acl.go and
// codec_txn.go: each record's fields byte by byte). AppendEntry's lists
// of records (codec_entry.go) hold a quorum snapshot's records.
// SnapshotRecords writes an
// image as the records that rebuild it (snapshot.go), as Kafka's
// snapshots do. Decoding is bounded by its input and never panics;
// fields of Kafka's records that Varve does not model (a broker's
// supported features and log directories, replicas' directories, the
// eligible leader replicas of KIP-966) are written at Kafka's defaults
// and dropped on read, as each record's comment says.
//
// DESIGN.md sketches this package as cluster/metadata; it is top-level
// because packages below cluster need it too (the controller that
// produces its records, and tomorrow replica and group reading
// leadership from an image) and an import of cluster/... from them would
// run upward. It imports nothing of Varve's (its tests read a Kafka
// metadata log with package record).
//
// # Concurrency
//
// Images are immutable and safe to share between goroutines. Apply is a
// pure function. A Publisher is safe for concurrent use; sources
// serialise their own changes. The package has no goroutines and no
// clock.
//
// # Invariants
//
//   - Names and ids identify topics one to one.
//   - A topic's partitions are numbered 0..n-1 without gaps
//     (PartitionRecords arrive in order).
//   - Kafka's epoch rule (PartitionRegistration.merge): a
//     PartitionChangeRecord naming a leader bumps the leader epoch; every
//     PartitionChangeRecord bumps the partition epoch.
//   - A broker change names the epoch of the registration it changes; a
//     new registration starts over (not in controlled shutdown, unless
//     the record says so, as a snapshot's does).
//   - A partition's reassignment (KIP-455) is its AddingReplicas and
//     RemovingReplicas, both nil when none is under way.
//   - The producer-id block only moves forward.
//   - A list of records applies whole or not at all.
//
// Scripts under testdata/ replay records and show the images they make
// (github.com/cockroachdb/datadriven; -rewrite regenerates them).
package metadata
