// Package replica holds a partition's replication state (Kafka's
// Partition) and the node's map of them (Kafka's ReplicaManager): the
// high watermark, the leader epoch stamped on appended batches, and the
// wake-up of fetches waiting for new data. The logs themselves belong to
// package logdir (Kafka's LogManager), which this package opens and
// follows: it supplies logdir's high-watermark checkpoint and takes
// partitions offline and back when a log directory fails and recovers.
//
// A Partition works over Log, the few operations it needs of a log;
// *segment.Log satisfies it, and tests use an in-memory one. The Manager
// stays in this package (rather than beside the log manager) because its
// map is of Partitions, the replication state; logdir knows nothing of
// it.
//
// A Partition never told its role is the single replica of its
// partition and leads it (a node without replication): an appended
// record is committed at once. MakeLeader and MakeFollower (the
// controller's decisions, applied by the broker from the metadata
// image) hand it to a Replication, which from then on decides every
// append, read, follower fetch and ISR change under the partition's
// lock (partition_repl.go), with time from an injectable clock; the
// high watermark, leader epoch and role it decides are mirrored into
// atomics, so that consumers' reads and the purgatory take no lock. A
// single node's image makes it leader of every partition with ISR
// {self}, which keeps the commit-at-once behaviour. Its leader-epoch
// cache is loaded from the partition directory's leader-epoch-checkpoint
// when the partition opens and written (segment.WriteFileAtomic)
// whenever it changes: when an epoch's first batch is appended, at an
// election, at a truncation. The file I/O is here rather than in logdir
// because the cache, its format and the moments it changes are
// replication's; logdir deletes the file with its directory.
//
// The Manager carries the replication of its partitions: the ISR
// expiration check every half of replica.lag.time.max.ms, the
// AlterPartition outbox sent through an AlterPartitionSender (the
// broker's, towards the active controller) with answers fed back, and
// the follower fetchers (fetcher.go, Kafka's ReplicaFetcherManager and
// AbstractFetcherThread): num.replica.fetchers loops per leader, each
// sending one fetch for every partition it follows from that leader
// through a LeaderEndpoint (the broker's speaks Fetch over TCP;
// ServeReplicaFetch answers one inside a process, for tests) and
// dropping answers to a fetch made under an older epoch or from another
// offset. A follower rebuilds producer state from what it replicates
// (segment.Log.AppendReplicated), so a new leader deduplicates a
// producer's retry, and follows the leader's log start offset.

// # Replication quotas
//
// The Manager holds the node's two replication quotas (quota.go,
// Kafka's ReplicationQuotaManager, KIP-73): LeaderQuota and
// FollowerQuota, each a bound in bytes a second (unbounded by default)
// and the set of this node's throttled replicas, which the broker sets
// from the dynamic rates and the topics' throttled replica lists. The
// bytes of every throttled replica are recorded, in sync or not, in one
// SimpleRate (internal/rate) over replication.quota.window.num samples
// of replication.quota.window.size.seconds, started at the first
// record. While a quota is exceeded, only replicas that are not in sync
// are held back, so that throttling never shrinks an ISR: a leader
// answers a follower outside the ISR with no records (LeaderThrottles;
// its fetch state still advances, and the records do not count towards
// a delayed fetch's min.bytes), and a fetcher leaves out of its next
// fetch a partition whose last answer with records left it behind the
// leader's high watermark (fetcher_quota.go, Kafka's
// PartitionFetchState.isReplicaInSync; unknown counts as behind). The
// fetch session then forgets the partition until it is asked again.
// Neither side answers with a throttle time. Both quotas are safe for
// concurrent use; the bound and the throttled set are atomics, the
// sensor sits under a mutex. What a fetch pays per partition, in one
// run on 2 shared CPUs:
//
//	go test -run XXX -bench ReplicationQuota -benchtime 2000000x ./replica
//	unthrottled partition (a map lookup)              19 ns
//	throttled partition (lookup, check and record)   878 ns
//
// A follower catching up 135 MB on three processes, with and without a
// 20 MB/s follower throttle, in one run (2026-12-02, 2 shared CPUs):
//
//	go run ./experiments/replication -quick -throttle 20000000
//	catch-up, unthrottled       56.5 MB/s
//	catch-up, throttled         17.7 MB/s   0.88 of the throttle
//
// # Transactions
//
// A log that implements TxnLog (segment.Log does) takes transaction
// markers from the coordinator: AppendTxnMarkersToLeader writes them
// through the same replication path as produced batches (acks=all), so
// followers replicate them and rebuild the same transaction state.
// LastStableOffset (the log's, capped by the high watermark),
// ReadCommitted and AbortedTransactions serve read_committed fetches.
//
// # Purgatory
//
// A Purgatory (Kafka's DelayedOperationPurgatory) holds Operations until
// an event satisfies them or they expire. Operations are watched by key:
// each Partition has a WatchList, and every event on it (an append, a
// high-watermark advance, a deletion by the log manager, a leadership
// change) calls CheckAndComplete, which tries the operations watching it
// on the event's goroutine. An operation completes exactly once: its
// completion is guarded by a compare-and-swap, and TryComplete and
// OnComplete of one operation run under its own lock, never together.
// Watch lists keep completed operations until tried again or purged:
// once more than PurgeInterval (Kafka's 1000) operations were watched
// beyond those still waiting, every list is purged, so a list on a
// quiet partition holds at most about that many stale entries, each a
// pointer to a struct that has dropped its operation.
//
// DelayedFetch completes when min.bytes are below the high watermark of
// its partitions (counted as the response would read them: partition and
// response max_bytes, KIP-74's first batch), when a partition can no
// longer be read as asked (deleted, leadership lost, the fetch offset
// past the high watermark or below the log start), or at max.wait.ms.
// DelayedProduce (acks=all) completes when the high watermark of every
// partition passes its last appended offset, with NOT_LEADER_OR_FOLLOWER
// or UNKNOWN_TOPIC_OR_PARTITION for a partition lost meanwhile, and
// REQUEST_TIMED_OUT for those still waiting at the request's timeout.
//
// One timer holds every deadline: Kafka's hierarchical timing wheel
// (timing_wheel.go: 1 ms ticks, 20 buckets a level, levels added as
// deadlines need them, buckets ordered in a heap). A B-tree of deadlines
// (timer_btree.go, github.com/google/btree) implements the same
// interface; both pass the same model test, and the wheel is used
// because it is faster at what the purgatory does most. At 10,000
// operations with deadlines spread over 30 s, per operation, in one run
// (load average about 5 on 2 shared cores):
//
//	go test -run XXX -bench Timer -benchtime 200x ./replica
//	                     add    cancel   expire (walking to each next deadline)
//	timing wheel       28.8 ns   6.2 ns   219 ns
//	B-tree            260   ns 277   ns    86 ns
//
// Most delayed operations are completed by an event (add + cancel: the
// wheel is 15x cheaper, O(1) against O(log n) twice); the rest expire
// (add + expire: 248 ns against 346 ns, the wheel's cascades between
// levels costing it less than the B-tree's ordered inserts).
//
// With the purgatory as the broker uses it, 10,000 fetches parked over
// 1,000 partitions (ten a partition), and one append waking the ten of
// its partition (each completion reads its partition, as a fetch
// response is built):
//
//	go test -run XXX -bench 'ParkFetches' -benchtime 30x ./replica
//	park one fetch: 616 ns (wheel), 638 ns (B-tree); memory held while
//	parked 196 bytes (wheel), 219 bytes (B-tree): the DelayedFetch,
//	its purgatory entry and its watch-list slot
//
//	go test -run XXX -bench 'AppendWakes' -benchtime 5000x ./replica
//	append alone                       4.4 us
//	append waking ten, bare            5.5 us (the purgatory: ~0.1 us a fetch)
//	append waking ten, each reading   59 to 77 us (the log reads of the responses)
//
// The wake-up's own cost is small beside the reads each completed fetch
// makes to build its response, which a fetch made before the purgatory
// too.
//
// # The replication state machine
//
// Replication is one partition's replication state on one broker as
// Kafka's Partition keeps it (replication.go): role and leader epoch,
// the leader-epoch cache (EpochCache, Kafka's LeaderEpochFileCache, with
// the leader-epoch-checkpoint format), the ISR with one AlterPartition in
// flight (KIP-497), the high watermark (the smallest log end over the
// leader, the maximal ISR and replicas about to join; never backwards;
// held while the ISR is below min.insync.replicas), the followers'
// caught-up state (Replica.updateFetchStateOrThrow), acks=all checks
// before and after the append, KIP-320 fencing, KIP-595 divergence
// answers and the follower's KIP-279 truncation. It is deterministic:
// no goroutines, no clock (time in milliseconds is an input of every
// event), its effects are calls on a ReplicaLog and the AlterPartition
// requests it hands out. Its scenarios are scripts under
// testdata/replication (KIP-101's data loss under the old rule and not
// under ours, KIP-279's back-to-back elections, ISR changes, acks=all,
// fencing), run with github.com/cockroachdb/datadriven, and a property
// test drives random appends, fetches, crashes that lose unflushed
// tails, restarts and elections against a simulated controller.
// three_replicas_test.go runs three Managers in one process through
// acks=all, an ISR shrink and expansion, a failover and the old leader's
// truncation of its divergent tail.
//
// # Concurrency
//
// A Manager is safe for concurrent use. Its partitions are an immutable
// map replaced whole under its mutex (copy on write): Partition, the
// lookup of every Produce and Fetch, takes no lock, and no file I/O runs
// under the mutex (CreatePartition does its file work in logdir
// unlocked, then publishes). Until Start the Manager runs no goroutine
// of its own (logdir's are listed there); Start runs the ISR expiration
// loop, the AlterPartition sender (woken when a partition has one ready,
// retrying after replica.fetch.backoff.ms when no answer came) and one
// goroutine per fetcher, all ended by Close. Each Partition is safe for
// concurrent use: appends serialise in its log (and, once told its role,
// under its lock with every other replication event: the state machine
// is not safe for concurrent use), reads run in parallel, its log is
// swapped atomically (nil while its directory is offline, when every
// operation returns logdir.ErrOffline; during the swap of a move between
// log dirs appends and reads wait for the new log, at most 5 s, holding
// no lock, and a read the swap closed the log under runs again on the
// new one), and the events on it complete
// the delayed operations it satisfies on the goroutine of the event. A
// Purgatory is safe for concurrent use and has one goroutine, its reaper
// (Kafka's ExpiredOperationReaper), which sleeps until the timer's next
// deadline and expires what is due; it ends at Close, which answers
// every operation still waiting. No goroutine waits per operation or per
// partition. With PurgatoryConfig.Manual there is no reaper: the caller
// drives expiry with Advance (tests do). A Replication (the state
// machine below) is not safe for concurrent use: its owner serialises
// the events it is given.
//
// # Measured: replication on three processes (experiments/replication)
//
// One run of `go run ./experiments/replication` (2026-12-01; 2 shared
// CPUs at a load average of 17 to 26; papers/replication.md explains each
// ratio), every figure beside its model calibrated in the same run:
//
//	                          measured     model                            ratio
//	throughput, 1 KiB, acks=all, 4 producers, one partition
//	  RF1                     114.7 MB/s
//	  RF3                      58.6 MB/s   min(RF1, loopback/2, append)      0.51 (RF3/RF1 0.51)
//	                                       CPU share: 0.0048/0.0132 s/MB    0.36 of RF1 predicted
//	acks=all, one 100 B record, p50
//	  no flush                0.358 ms     acks=1 + ping-pong + append      2.36 (0.152 ms)
//	  flush.messages=1        1.024 ms     same + diskmodel fsync           1.56 (0.656 ms)
//	follower catch-up, 1.01 GiB behind
//	  to the ISR              491 MB/s     sendfile to a socket, 1526 MB/s  0.32
//	                                       follower's serial copy limit     1.02 (483 MB/s)
//	CPU per MB, RF3           leader 0.0053 s, each follower 0.0030 s (RF1 leader: 0.0029 s)
//
// Throughput is bound by CPU, not by network or disk: RF3 spends 2.75
// times the CPU of RF1 per MB (three sockets in, three page-cache writes),
// and a run on a busy machine gets a fixed share of it. The acks=all
// round trip is a Kafka request's round trip each way, not a raw echo
// (against acks=1 + acks=1 + append the ratio is 1.29). A follower
// catching up reads each fetch answer and then appends it, in one loop:
// it reaches the sum of those two copies, not the leader's sendfile rate.
// A caught-up follower's fetch is woken by the leader's append (the p50
// above would otherwise be near replica.fetch.wait.max.ms, 500 ms).
package replica
