// Package logdir is the node's log manager (Kafka's LogManager): the
// log directories (log.dirs), the logs in them, and the files a log
// directory holds beside its partitions. It sits below replica, which
// owns what replication adds on top of a log (high watermark, leader
// epoch, waiting fetches), and imports only segment and its leaves, and
// compaction for the cleaner-offset-checkpoint a move carries.
//
// # Files, per log directory
//
//	<topic>-<partition>/                 one segment.Log each, plus partition.metadata (topic id)
//	recovery-point-offset-checkpoint     every log.flush.offset.checkpoint.interval.ms and at shutdown
//	log-start-offset-checkpoint          every log.flush.start.offset.checkpoint.interval.ms and at shutdown
//	replication-offset-checkpoint        high watermarks from Config.HighWatermark, every
//	                                     replica.high.watermark.checkpoint.interval.ms and at shutdown
//	cleaner-offset-checkpoint            the log cleaner's (package compaction); a move carries
//	                                     its partition's entry to the destination
//	.kafka_cleanshutdown                 written last at a clean shutdown with the broker epoch
//	                                     (Config.BrokerEpoch), deleted at start
//	<topic>-<partition>.<id>-delete/     a deleted partition, or the old copy of a moved one,
//	                                     removed in the background
//	<topic>-<partition>.<id>-future/     the copy of a partition moving into this dir (AlterLogDir)
//
// All are Kafka's formats (see package segment for the checkpoint
// format), so a Kafka broker can read the directory and Varve can read
// Kafka's. Every one of these files is written through Config.FS with
// WriteFileAtomic (temp, fsync, rename, fsync directory): after a crash
// at any step a file holds its old or its new content.
//
// # Start and shutdown
//
// Open first settles what a move cut by a crash left, looking at every
// directory together (settleMoves, below; a partition in two directories
// stops Open), then, for every directory at once:
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
// # Moving a partition between log dirs (Kafka's future replica)
//
// AlterLogDir(tp, dir) (AlterReplicaLogDirs, KIP-113) moves a partition
// to another of the node's log dirs while it keeps serving. One
// goroutine per move:
//
//  1. makes <topic>-<partition>.<id>-future in the destination, with the
//     partition's partition.metadata, and an empty log in it;
//  2. copies the current log into it with AppendReplicated (batches
//     verbatim: offsets, epochs, timestamps, producer state, aborted
//     transactions), following retention, DeleteRecords and a follower's
//     truncation of the current log, until a pass copies little; the
//     copies of all moves share one throttle (below);
//  3. swaps (swap in move_swap.go): OnMoving tells the layer above,
//     whose appends and reads wait; the current log is closed, reopened and its
//     last records copied; the future takes its start offset and
//     leader-epoch-checkpoint and is closed; the destination's
//     checkpoints are written naming it, and its cleaner-offset-checkpoint
//     gets the partition's first dirty offset from the source's (Kafka's
//     alterCheckpointDir; no entry there removes any here); <tp> is renamed
//     <tp>.<id>-delete in the source and <tp>.<id>-future renamed <tp>
//     in the destination, each rename fsynced; the moved log is opened,
//     published and handed to OnMoved; the source's checkpoints, and its
//     cleaner-offset-checkpoint, forget the partition; the -delete dir is
//     removed in the background.
//
// Moving(tp) is true from the move's start to its end: the layer above
// keeps such a partition from the log cleaner, as Kafka pauses its
// cleaning, so that the first dirty offset carried matches the batches
// copied. A crash between the two writes of the cleaner checkpoint
// leaves the entry in both dirs; only the dir holding the partition is
// read for it, and a later move into the other dir rewrites it there.
//
// The layer above makes reads of the partition wait from OnMoving to
// OnMoved, as it makes appends wait, and serves them from the moved log.
//
// The throttle (move_quota.go) is Kafka's ALTER_LOG_DIRS replication
// quota: Config.MoveRate bytes per second
// (replica.alter.log.dirs.io.max.bytes.per.second, unlimited by default),
// measured as Kafka's SimpleRate (internal/rate) over MoveQuotaWindows
// samples of MoveQuotaWindowSize. Before each read (of moveChunk, or of
// one second of the rate when less, 16 KiB at least) a copy waits while
// the measured rate is above the bound; as in Kafka, the first bytes are
// measured over one whole window, so a copy starts with that allowance. SetMoveRate changes the
// bound live and wakes the waiting copies. The swap's last catch-up is
// not throttled (the partition is offline meanwhile) but counts.
//
// While a move runs, Futures reports it (DescribeLogDirs' IsFuture), and
// the checkpoint files of the destination include the future under the
// partition's name, as Kafka's do. A move to another dir, Delete and
// Close cancel it before its swap; a swap, once begun, finishes first.
//
// Kafka renames the future first and the source second; Varve renames
// the source first, so that no instant has two directories named <tp>,
// and the next start settles a swap cut between the renames by names
// alone: the future is complete before the first rename, and its -delete
// partner carries the same <id>. At Open (settleMoves):
//
//   - <tp>.<id>-future while <tp> is in another dir: the swap had not
//     begun; the move resumes from the future's end when the layer above
//     calls ResumeMoves, as Kafka resumes its future replicas;
//   - <tp>.<id>-future with no <tp> and a <tp>.<id>-delete: renamed <tp>;
//   - <tp>.<id>-future alone (the partition was deleted while moving):
//     removed;
//   - *-delete: removed;
//   - <tp> in two dirs, which no move leaves: Open fails naming both,
//     as Kafka's loadLog does.
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
// deleted partition directory; one per move (its copy and swap). Open runs the recovery goroutines and
// waits for them.
package logdir
