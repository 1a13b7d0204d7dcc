// Package group is Varve's group coordinator: Kafka's GroupCoordinator
// and GroupMetadataManager. It runs classic groups (consumers, Kafka
// Connect) through JoinGroup, SyncGroup, Heartbeat and LeaveGroup, and
// KIP-848 consumer groups through ConsumerGroupHeartbeat with
// server-side assignment (consumer*.go); it stores committed offsets
// (OffsetCommit, OffsetFetch, OffsetDelete) for both, and answers
// DescribeGroups, ConsumerGroupDescribe, ListGroups and DeleteGroups.
//
// # Shape
//
// A Coordinator owns the groups of one partition of the internal topic
// __consumer_offsets (PartitionFor maps a group id to its partition as
// Kafka does, by Java's String.hashCode). It is a deterministic state
// machine in the manner of etcd's raft: no goroutines, no clock, no
// locks. Every method takes the current time; Tick(now) fires the
// deadlines that passed (session timeouts, rebalance timeouts, the
// initial rebalance delay, the SyncGroup deadline, the offsets
// retention check) and NextDeadline says when to call it next. JoinGroup
// and SyncGroup may be answered later than the call that brought them:
// their reply functions are called from inside whichever method
// completes them (a later Join, a Tick, Stop). Everything it writes goes
// through its Log, synchronously: a change is applied in memory only
// once its records are in the log (a failed write leaves the state as it
// was and answers Kafka's error).
//
// # Concurrency
//
// A Coordinator is not safe for concurrent use; the caller serialises
// every call (the broker holds one mutex per partition and runs one
// timer goroutine that calls Tick). Reply functions must not block and
// must not call back into the Coordinator. The package starts no
// goroutine.
//
// # Invariants
//
//   - A group is in one of Empty, PreparingRebalance,
//     CompletingRebalance, Stable, Dead, and moves only along Kafka's
//     transitions (state.go); Dead groups are dropped at once.
//   - The generation id increases by one at each completed rebalance and
//     is stored with the group; members of other generations get
//     ILLEGAL_GENERATION.
//   - Each group.instance.id maps to at most one member; a newer join
//     with the same instance id fences the older member id
//     (FENCED_INSTANCE_ID).
//   - A member has at most one parked JoinGroup and one parked SyncGroup;
//     each reply is called exactly once.
//   - The member metadata a group holds (protocols, assignments, client
//     ids) stays under Config.MaxGroupMetadataBytes, and all groups of
//     the broker under the shared MetadataBudget, except right after a
//     load; a JoinGroup that would pass a bound is refused and kept
//     nowhere, and a member's bytes are released when it goes (bound.go).
//   - The in-memory offsets and groups are what replaying the log
//     (BeginLoad, Load, FinishLoad) would rebuild.
//   - A group is classic or a consumer group (its cons field set), never
//     both. A consumer group may have classic members (consumer
//     protocol JoinGroup, SyncGroup, Heartbeat, LeaveGroup served from
//     it, consumer_classic.go); a classic group with members becomes a
//     consumer group when a consumer member joins it, and a consumer
//     group whose last consumer member leaves or is fenced turns back
//     into a classic group, as it does when a static classic member
//     replaces its last consumer member, if
//     group.consumer.migration.policy allows (consumer_migrate.go);
//     otherwise either kind turns into the other
//     only while Empty, keeping its offsets.
//   - In a consumer group no partition is held by two members at once:
//     a member is given a partition of its target only once no other
//     member has it assigned or pending revocation; a member that must
//     revoke keeps its epoch until it reports the revocation done.
//   - The group epoch increases by one at each change of membership,
//     subscriptions or subscribed topics' metadata; the target
//     assignment is recomputed when its epoch lags the group's.
//   - A consumer group holds a resolution (record type 16) for exactly
//     the regular expressions its members subscribe to; a member's
//     subscribed topics are its names and its regular expression's
//     resolution (consumer_regex.go).
//
// # Records in __consumer_offsets
//
// Kafka's own formats (kmsg's OffsetCommitKey/Value and
// GroupMetadataKey/Value), big-endian, strings as int16 length + bytes
// (nullable: length -1), bytes as int32 length + bytes. Each operation
// appends one uncompressed v2 batch, CreateTime, producer id -1. A key
// opens with its version, which says what the record is.
//
// Offset commit, key version 1 (0 is identical):
//
//	key:   version int16 = 1 | group string | topic string | partition int32
//	value: version int16 = 3 | offset int64 | leader_epoch int32 (-1: none)
//	       | metadata string | commit_timestamp int64 (ms)
//	value v1 (written when OffsetCommit v2-v4 set a retention time):
//	       version int16 = 1 | offset int64 | metadata string
//	       | commit_timestamp int64 | expire_timestamp int64
//
// Group metadata, key version 2:
//
//	key:   version int16 = 2 | group string
//	value: version int16 = 3 | protocol_type string | generation int32
//	       | protocol nullable string | leader nullable string
//	       | current_state_timestamp int64 (ms, -1: unknown)
//	       | member count int32, then per member:
//	         member_id string | group_instance_id nullable string
//	         | client_id string | client_host string
//	         | rebalance_timeout int32 (ms) | session_timeout int32 (ms)
//	         | subscription bytes (metadata of the selected protocol)
//	         | assignment bytes
//
// A null value is a tombstone: it deletes the key, and compaction
// (cleanup.policy=compact) later removes both. Offset values v0, v2 and
// v4 and group values v0-v4 are read as well. Consumer group records
// (key types 3, 5, 6, 7, 8, 16) are Kafka's ConsumerGroup* formats,
// drawn in consumer_records.go; type 4 is skipped when loading.
//
// Transactional offset commits (TxnOffsetCommit) are offset records in a
// transactional batch of the producer (its id, epoch and a sequence that
// continues across its transactions); they stay pending until the
// transaction's COMMIT or ABORT control batch is written to the
// partition (CompleteTxn at run time, the marker itself when loading).
// OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT for a
// partition with a pending offset (txn_offsets.go).
//
// # Scripted tests
//
// The coordinator's central scenarios (the classic rebalance, static
// membership, offset commit, fetch and expiry, the initial rebalance
// delay, group.max.size, loading after a restart; for consumer groups,
// joins, revocation before assignment, both assignors, static members,
// leaves, session and rebalance timeouts, member-epoch commits, regular
// expression subscriptions, classic members, the online upgrade and
// downgrade, by a member leaving or replaced) are
// scripts under testdata/script, run by TestScripts with
// github.com/cockroachdb/datadriven:
// each step is a request, a clock tick, a load, unload or crash, and its
// expected output (the replies, the groups' state, the records written)
// is written below it. `go test ./group -run TestScripts -rewrite`
// rewrites the expected output; review the diff as documentation.
//
// # Not done
//
// Share and streams groups. In KIP-848 consumer groups: rack-aware
// assignment and client-side assignors. The protocol
// metadata of classic members of a consumer group is not counted
// against the metadata bounds (bound.go), as no consumer group member's
// is. Regular expressions are resolved in the heartbeat that
// needs them (Kafka resolves them in the background) and, as in Kafka,
// with the principal of the member whose heartbeat resolves them; like
// Kafka's, they may match internal topics the member may describe. The
// uniform assignor is Varve's own balanced,
// sticky algorithm, not Kafka's code: its choices may differ from
// Kafka's, never its balance (members with one subscription differ by
// at most one partition). A transactional offset and a plain commit of the
// same partition are ordered by when the marker arrives, not by their
// offsets in the log as Kafka orders them. require_stable is checked for
// the partitions named, not for a fetch of every offset of a group.
package group
