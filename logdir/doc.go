// Package logdir is the node's log manager (Kafka's LogManager): the
// log directories (log.dirs), the logs in them, and the files a log
// directory holds beside its partitions. It sits below replica, which
// owns what replication adds on top of a log (high watermark, leader
// epoch, waiting fetches), and imports only segment and its leaves.
//
// # Files, per log directory
//
//	<topic>-<partition>/                 one segment.Log each, plus partition.metadata (topic id)
//	recovery-point-offset-checkpoint     every log.flush.offset.checkpoint.interval.ms and at shutdown
//	log-start-offset-checkpoint          every log.flush.start.offset.checkpoint.interval.ms and at shutdown
//	replication-offset-checkpoint        high watermarks from Config.HighWatermark, every
//	                                     replica.high.watermark.checkpoint.interval.ms and at shutdown
//	.kafka_cleanshutdown                 written last at a clean shutdown with the broker epoch
//	                                     (Config.BrokerEpoch), deleted at start
//	<topic>-<partition>.<id>-delete/     a deleted partition, removed in the background
//
// All are Kafka's formats (see package segment for the checkpoint
// format), so a Kafka broker can read the directory and Varve can read
// Kafka's. Every one of these files is written through Config.FS with
// WriteFileAtomic (temp, fsync, rename, fsync directory): after a crash
// at any step a file holds its old or its new content.
//
// # Start and shutdown
//
// Open, for every directory at once:
//
//  1. read the clean-shutdown marker and delete it (durably) at once, so
//     that a crash while loading counts as unclean (KAFKA-10471); its
//     broker epoch is kept for PreviousBrokerEpoch (the broker's next
//     registration, KIP-966), its presence alone makes the load clean;
//  2. read the three checkpoints (an unreadable one only means a longer
//     recovery);
//  3. remove leftover *-delete directories;
//  4. open every partition on num.recovery.threads.per.data.dir
//     goroutines: a log recovers from its recovery point unless the
//     marker was there.
//
// Close flushes and closes every log, writes the three checkpoints, and
// only then the marker of each online directory, holding the broker's
// epoch.
//
// # Offline directories (Kafka's LogDirFailureChannel, and more)
//
// Each directory's files go through a view of Config.FS that watches
// writes, fsyncs, truncations and file creations: the first failure
// marks the directory offline with one ERROR line naming it and the
// cause, and every later write to it fails at once with ErrOffline
// (KAFKA_STORAGE_ERROR at the protocol edge). The probe loop then
// closes its logs (Config.OnOffline tells the layer above first). Kafka
// keeps such a directory offline until a restart; Varve probes it every
// Config.ProbeInterval (write, fsync and remove a small file; Varve's own
// setting, default 5 s) and, when a probe succeeds, reopens its logs
// from their recovery points (recovery runs) and hands them to
// Config.OnOnline. Other directories are not affected.
//
// # Concurrency
//
// A Manager is safe for concurrent use. The published logs are an
// immutable map replaced whole under the manager's mutex (copy on
// write), so Get and Logs take no lock. No file I/O runs under that
// mutex: Create registers the partition as being created, does the
// mkdir, partition.metadata and segment creation unlocked, then
// publishes; concurrent creators of one partition wait for the first and
// get ErrPartitionExists. Config.LogConfig is called with no lock held.
//
// Goroutines, all ended by Close: the checkpoint loop; the probe loop
// (closes and reopens the logs of offline directories); one remover per
// deleted partition directory. Open runs the recovery goroutines and
// waits for them.
package logdir
