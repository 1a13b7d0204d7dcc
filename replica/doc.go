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
// A node today holds one replica of each partition, so a partition's high
// watermark is its log end offset once an append returns; the ISR and
// follower fetching come with replication.
//
// # Concurrency
//
// A Manager is safe for concurrent use. Its partitions are an immutable
// map replaced whole under its mutex (copy on write): Partition, the
// lookup of every Produce and Fetch, takes no lock, and no file I/O runs
// under the mutex (CreatePartition does its file work in logdir
// unlocked, then publishes). The Manager starts no goroutine of its own
// (logdir's are listed there). Each Partition is safe for concurrent use:
// appends serialise in its log, reads run in parallel, its log is
// swapped atomically (nil while its directory is offline, when every
// operation returns logdir.ErrOffline), and Wait lets a delayed fetch
// sleep until the next append, truncation, deletion or change of log.
package replica
