// Package replica owns a node's partitions: their logs in the log
// directories (Kafka's LogManager) and what the broker needs on top of a
// log (Kafka's Partition and ReplicaManager): the high watermark, waiting
// for new data, and the log-directory checkpoints.
//
// A node today holds one replica of each partition, so a partition's high
// watermark is its log end offset once an append returns; the ISR and
// follower fetching come with replication.
//
// # Files, per log directory
//
//	<topic>-<partition>/                 one segment.Log each, plus partition.metadata (topic id)
//	recovery-point-offset-checkpoint     written every log.flush.offset.checkpoint.interval.ms and at shutdown
//	log-start-offset-checkpoint          every log.flush.start.offset.checkpoint.interval.ms and at shutdown
//	replication-offset-checkpoint        high watermarks, every replica.high.watermark.checkpoint.interval.ms
//	.kafka_cleanshutdown                 written last at a clean shutdown, deleted at start
//	<topic>-<partition>.<id>-delete/     a deleted partition, removed in the background
//
// All are Kafka's formats (see package segment), so a Kafka broker can
// read the directory and Varve can read Kafka's.
//
// # Concurrency
//
// A Manager is safe for concurrent use. Its goroutines: the checkpoint
// loop (recovery points, start offsets, high watermarks) and the
// deleter of removed partition directories; both end at Close. Each
// Partition is safe for concurrent use: appends serialise in its log,
// reads run in parallel, and Wait lets a delayed fetch sleep until the
// next append.
package replica
