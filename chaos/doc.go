// Package chaos is the fault-test harness: a workload of Kafka clients
// that records every operation in a History, checkers that read a
// finished History and report anomalies with the records that show
// them, and faults applied to nodes on a schedule drawn from a seed.
//
// It is a top-level package, not one under experiments/internal,
// because its users live in several places: the single-node test here,
// cluster tests that run three nodes, and the fault experiments under
// experiments/. Of Varve's packages it imports only internal/localcluster,
// which writes nodes' properties and runs their processes: it talks to
// brokers only through the Kafka protocol (franz-go) and to their
// processes through signals, so it tests Varve as any Kafka client
// would see it.
//
// # History
//
// A History holds appends (one unique value each, to one partition:
// invoke and completion times, then OK with its offset, Failed with the
// broker's non-retriable Kafka error, or Unknown: a timeout or broken
// connection after which the write may or may not have happened), polls
// (each consumer's records in the order it received them, and its
// assignments), events (faults), and Final, a full read of every
// partition from its start taken after the run. Times come from one
// monotonic clock (time.Since of the History's start).
//
// # Checkers
//
//   - lost: an acknowledged value, or one a consumer read (consumers
//     read only below the high watermark), that the final read does not
//     hold.
//   - unwritten: a value read that no append wrote, or that the broker
//     refused.
//   - duplicated: a value read at two places in the log.
//   - inconsistent-offsets: two values at one offset of one partition,
//     across readers and acknowledgements.
//   - nonmonotonic-poll: a consumer reading an offset at or below one it
//     read before, with no assignment in between.
//   - skipped-offsets: a reader stepping over an offset (offsets are
//     dense: the workload writes no transactions and nothing compacts).
//   - linearizable: per partition, porcupine over the appends, where an
//     append returning offset o is legal iff o is the log's length at its
//     linearization point; indeterminate appends are resolved by the
//     final read (see CheckLinearizable). Consumers' reads are not part
//     of the model (the other checkers cover them), except that a poll
//     that saw a value bounds when its append took effect. A search that
//     outlasts LinearizeTimeout is reported, never passed.
//
// # Invariants
//
// Every appended value is unique within a History (the checkers key on
// values). An Append's ID is its index; a Poll's ID is its index, and
// one consumer's polls are in the order it received them. Completion
// is never before invocation. The checkers assume offsets are dense
// (one record per append, no transactions, no compaction).
//
// # Faults
//
// A Schedule is a list of faults at times from the start of a run,
// drawn from a seed by NewSchedule (random kinds), or by
// NewScenarioSchedule (a fixed list of faults in a seeded order), so a
// failing run replays with the same seed. Kill (SIGKILL, then a restart
// after the fault's hold), Pause (SIGSTOP, then SIGCONT) and Restart
// (SIGTERM, then start) act on a Node; Cut (a link, one way or both)
// and Isolate (a node from all others) are functions the cluster
// harness supplies. A fault strikes its drawn node, or the node that
// holds a role when it strikes (Target: a partition's leader, the
// active controller), which the Runner's Locate finds; the Runner's
// Settle runs before each fault (the cluster harness waits there for
// every running node to have registered and been unfenced since its
// last start, which it reads from the node's log, and then for every
// ISR to be full), so one fault at a time is one node short at a time.
//
// Compound faults strike while a change of a partition's state is in
// flight; the Runner hands them to its Compound, which the cluster
// harness supplies (Cluster.Compound) and which finds its roles over
// the Kafka protocol when it strikes:
//
//   - KillAtISRChange cuts a follower from its leader (a partition led
//     away from the active controller, so that the follower keeps
//     heartbeating and the leader's AlterPartition, not the
//     controller's fencing, shrinks the ISR), polls every node's
//     Metadata every 10 ms, and SIGKILLs the leader or the active
//     controller as soon as one shows the shrunk ISR.
//   - KillMidReassign moves a partition off its leader to a node that
//     holds none of it (AlterPartitionReassignments) with that node cut
//     from the leader, SIGKILLs the leader or the active controller
//     once ListPartitionReassignments shows replicas being added, and
//     after the restart waits for the reassignment to complete. It
//     needs a replication factor below the node count.
//   - DropTailThenKill SIGKILLs a follower, drops its unsynced tail
//     (DropUnflushed), starts it, and SIGKILLs the partition's leader as
//     soon as the follower serves.
//
// # Losing an unsynced tail
//
// A SIGKILL loses nothing a process wrote (the page cache outlives it);
// a power failure loses what was not fsynced. DropUnflushed does that
// to a stopped node's log directory, from the harness alone: each
// partition of a topic is cut back to its recovery point
// (recovery-point-offset-checkpoint), whole batches; checkpoints, which
// are fsynced when written, stay. Varve has no setting or hook for it:
// nothing of it reaches an operator. It models the default flush
// policy, where no acknowledgement waits for an fsync, and is never
// applied to the metadata log.
// Proc is a Node for a `varve server` child process with a fixed data
// directory and listener, so that it comes back where clients expect it;
// a localcluster.Node is one too.
//
// # Network partitions
//
// A test that cuts links runs in a private network namespace:
// EnterNetns re-runs the test alone in a child of the test binary in a
// new namespace (unshare(CLONE_NEWNET)) with its loopback interface up,
// so nodes on 127.0.0.1, .2, .3 and the rules between them are the
// test's own and vanish with it. There, Net cuts links with nft rules
// that drop packets by source and destination address where they are
// received (a sender sees timeouts, never a refusal): Cut (both ways or
// one way; it is the Runner's NetCut), Isolate, Split (a majority from a
// minority) and HealAll. Net refuses to run in the namespace of the
// process that started the test, or of process 1. StartCluster runs a
// localcluster of `varve server` processes there, one address per node,
// with its Net, and Runner applies a Schedule to both; its clients bind
// to the address after the last node's (ClientOpts), so that no cut
// between nodes cuts them. Roles finds where the cluster's roles are
// over the Kafka protocol: Metadata asked of each node (leaders, ISRs)
// and DescribeQuorum (the active controller). ShortTimeouts scale
// Kafka's failure detection down for tests. Without root or nft a
// namespace test skips, unless CI is set: then it fails. RunInNetns is
// EnterNetns for a program (the soak experiment).
//
// # Running a test
//
// Build the binary (BuildVarve), start Procs, CreateTopic, record into a
// NewHistory through StartWorkload, Run a Schedule, Stop the workload,
// set History.Final from FullRead, then Check; Unavailability reports
// the windows in which appends waited with none acknowledged. The
// single-node test in this package is the example; it logs its seed,
// and -chaos.seed replays a schedule. The cluster tests (three nodes,
// replication factor 3, min.insync.replicas=2) are the CI tier; the
// long soak is experiments/faults. The tier also runs, once each, the
// compound faults on the same topic, and a second topic of replication
// factor 2 whose partitions are reassigned while their leader, then
// the active controller, is killed. -chaos.only narrows the tier to
// some kinds of fault. The unclean-election test runs five
// nodes (a replica set of three, and two more voters so the controller
// quorum outlives both followers) once with unclean.leader.election.enable
// off, where it asserts unavailability and no loss, and once on, where
// the checkers must report lost acknowledged records.
//
// # Concurrency
//
// History's record methods are safe for concurrent use by the workload's
// goroutines; its readers (Appends, Polls, Events) copy under its lock.
// Roles is safe for concurrent use (its clients are franz-go's).
// Checkers run on a finished History, single-threaded. A Workload owns
// one goroutine per producer and per consumer (each with its own
// franz-go client) until Stop returns; a group member's rebalances run
// only between its polls (BlockRebalanceOnPoll), so an assignment is
// recorded before the polls that read from it. A Runner applies a
// Schedule from the caller's goroutine; a Proc is driven by one
// goroutine at a time. A Net is safe for concurrent use (one mutex over
// its cuts; every change rewrites its rules in one nft transaction).
// EnterNetns, outside the namespace, owns one goroutine that copies the
// child test's output until the child exits.
package chaos
