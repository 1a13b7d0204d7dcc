// Package compaction is Kafka's log cleaner (cleanup.policy=compact) over
// a segment.Log: it keeps the last record of every key, removes
// tombstones once their delete horizon has passed, and merges small
// segments, rewriting sealed segments and swapping them in crash-safely.
//
//	l, _ := segment.Open(dir, segment.DefaultConfig())
//	st, err := compaction.Clean(l, compaction.DefaultConfig(), time.Now()) // one pass
//	fmt.Print(st)                                                          // what it did
//
//	cfg := compaction.DefaultConfig() // Kafka's log.cleaner.* and topic defaults
//	cfg.Threads = 2
//	c, _ := compaction.NewCleaner(cfg, func() []compaction.Target {
//		return []compaction.Target{{Log: l, Retain: retainFn}} // the compacted logs
//	})
//	c.Start(ctx) // log.cleaner.threads workers over many logs
//	defer c.Stop()
//
// Example functions in example_test.go run both; `varve log compact DIR`
// runs one pass from the command line.
//
// # A pass (Kafka's Cleaner.doClean)
//
//  1. Examine the log (LogCleanerManager.cleanableOffsets): the first
//     dirty offset is the log's entry in cleaner-offset-checkpoint, or
//     the log start offset when there is none or it is out of range. The
//     first uncleanable offset is the smallest of the active segment's
//     base, the base of the segment holding the upper bound (the log's
//     last stable offset below the high watermark a broker passes,
//     rounded down to a segment boundary, so that neither a segment a
//     follower's truncation could change nor an ongoing transaction is
//     ever rewritten), and the base of the first dirty segment whose largest
//     timestamp is newer than now - min.compaction.lag.ms.
//  2. Build the offset map: read the dirty section [first dirty, first
//     uncleanable) in offset order and record, for every key, its last
//     offset. If the map cannot take a new key, the pass covers only up
//     to the last offset mapped; the next pass continues from there.
//  3. Group the sealed segments that hold offsets below the map's end
//     (except those wholly below the log start offset, which retention
//     deletes) into runs whose sizes add up to at most segment.bytes and
//     whose offsets span at most 2^31-1.
//  4. Rewrite each group into <base>.log.cleaned (package segment's
//     CleanedSegment), batch by batch, keeping a record iff it lies past
//     the map's range, or it has a key, no later offset in the map, and
//     is not a tombstone past its batch's delete horizon. Keyless records
//     go. A batch whose records all stay is copied byte for byte; one
//     that loses some is rebuilt with its base and last offset, producer
//     fields, codec, and each kept record's offset and timestamp. A kept
//     tombstone in a batch without a delete horizon gives the batch one:
//     attribute bit 6 and BaseTimestamp = now + delete.retention.ms. A
//     batch left without records stays as a bare 61-byte header when it
//     is its producer's last data batch (producer state, C8) or the
//     last batch below the first uncleanable offset (Kafka 4.x keeps it
//     "so that last offset information is not lost"); otherwise it
//     goes, as Kafka's does, and a cleaned segment may end before the
//     next one starts, or hold nothing. The group's last batch, emptied,
//     is written all the same (segment.CleanedSegment.AppendRangeEnd) so
//     that an interrupted swap knows the offsets it replaces, and removed
//     once the swap is done. Transactions follow Kafka's rules (txn.go):
//     the batches of aborted transactions go whole (and stay out of the
//     offset map); a marker stays while the group holds data of its
//     transaction, then gets a delete horizon and goes once it passed.
//  5. Swap each group in with Log.ReplaceSegments (.cleaned -> .swap,
//     old -> .deleted, .swap -> live, directory fsyncs; segment.Open
//     completes or discards an interrupted swap), so a crash at any step
//     leaves the old segments or the new ones, never a mix, never a loss.
//  6. Write the map's end as the log's first dirty offset in
//     cleaner-offset-checkpoint.
//
// A pass that fails leaves the log as it was, apart from groups already
// swapped, which hold the same last values as before: a crash between
// groups is as safe as a crash within one. A pass that finds a segment it
// planned to rewrite gone or replaced (retention, truncation) stops with
// ErrSegmentsChanged and the next pass starts over.
//
// # Configuration
//
// A Config is taken as given, zero included, as Kafka takes its settings:
// min.cleanable.dirty.ratio=0 cleans a log with any dirty byte,
// delete.retention.ms=0 lets the next cleaning drop a tombstone,
// log.cleaner.io.buffer.size=0 reads in the smallest chunk. DefaultConfig
// (and DefaultTopicConfig) are Kafka's defaults; start from them. A zero
// where Kafka allows none (log.cleaner.threads, the dedupe buffer, the
// load factor, max.compaction.lag.ms, the I/O rate, whose "unlimited" is
// Unthrottled) fails NewCleaner and Clean with ErrInvalidConfig. A
// Target's Topic, when set, replaces the Config's topic-level settings
// whole.
//
// # Files
//
// cleaner-offset-checkpoint is Kafka's offset checkpoint text format:
//
//	0                                  version
//	<n>                                number of entries
//	<topic> <partition> <offset>       one line each: the first dirty offset
//
// written to a temporary file, fsynced, renamed, directory fsynced. A
// standalone log (segment.Config.Managed nil) keeps it in its own
// directory; a managed one shares its log dir's file, as in Kafka.
// FirstDirtyIn and SetFirstDirtyIn read and set one partition's entry
// of a log dir's file, under the lock passes take: a log manager moving
// a partition between log dirs carries its entry with them.
//
// # The offset map and memory
//
// OffsetMap is an open-addressing table with linear probing whose slots
// are 16 bytes: the key's 64-bit xxhash (github.com/cespare/xxhash/v2)
// in one word; 24 bits of the key's CRC-32C and the offset relative to
// the pass's first dirty offset (40 bits) in the other (offsetmap.go has
// the layout). A map of log.cleaner.dedupe.buffer.size / log.cleaner.threads
// bytes therefore has a fixed number of slots, filled to
// log.cleaner.io.buffer.load.factor, whatever the number of distinct keys
// (128 MiB: 8.4 M slots, 7.5 M keys; Kafka's 24-byte MD5 slots give 5.6 M
// slots). A pass sizes its table down to what the dirty section can hold
// (twice the records per byte of its first chunk), so a small section
// does not pay for a large, cache-hostile table. Besides the map, a pass
// holds one read buffer (log.cleaner.io.buffer.size / threads / 2, at
// least 64 KiB, grown for a larger batch), one decoded batch and one
// rebuilt batch; TestPassMemoryIsBoundedByDedupeBuffer measures a pass
// over ten times more keys than its 1 MiB map holds: the heap grew by
// 1.8 MiB at peak (0.8 MiB beyond the map). A pass also copies the
// log's producer state (one entry per active producer id) when it first
// meets an emptied batch of a producer.
//
// Hash collisions. The map identifies a key by 88 bits (64 of xxhash,
// 24 of CRC-32C). Two distinct keys of one pass that agree on all 88 bits
// would share a slot, and the older of their last records would be
// dropped as superseded: a silent loss of that key's last value. For n
// keys in a pass the chance is about n^2 / 2^89: 9e-14 for a full 128 MiB
// map (7.5 M keys), far below the rate of undetected disk errors. Kafka
// has the same failure mode with MD5 (n^2 / 2^129). A producer choosing
// keys could build such a pair (neither hash resists an adversary), but
// it needs the victim's key, with which it could simply write a
// tombstone: no new power.
//
// # Cleaner
//
// A Cleaner runs log.cleaner.threads goroutines (its only long-lived
// goroutines, from Start to Stop). Each loops like Kafka's CleanerThread:
// among the Targets whose cleanup.policy includes compact, not being
// cleaned and not uncleanable, it examines each log and cleans the one
// with the highest dirty ratio (cleanable bytes / (clean + cleanable
// bytes)) that exceeds min.cleanable.dirty.ratio, or whose oldest dirty
// segment's first batch is older than max.compaction.lag.ms; then it
// calls each Target's Retain, so the caller can apply retention to the
// compacted logs as Kafka's cleaner threads do (the log-start-offset rule
// for compact, all rules for compact,delete); with nothing to clean it
// sleeps log.cleaner.backoff.ms. This package does not import retention,
// nor retention this one: they are siblings over segment, and package
// cluster composes "clean, then delete" by passing retention.Enforce as
// Retain. The Targets are the compacted logs: the caller filters on
// cleanup.policy (segment.CleanupPolicy). The reads and writes of all workers share one
// log.cleaner.io.max.bytes.per.second throttle (Kafka's Throttler: the
// rate is checked every 300 ms and the caller sleeps off any excess).
// A pass that fails marks its log uncleanable for UncleanableRetry
// (Kafka: until restart).
//
// # Concurrency
//
// At most one pass or retention run works on a log at a time (a
// process-wide registry; a second Clean gets ErrCleaningInProgress). A
// pass runs beside appends, reads and, through Enforce calls that bypass
// the Cleaner, retention: it reads sealed segments through its own file
// handles, never past the size the log published, and swaps under the
// log's writer lock, checking the segments it replaces are still there.
// Readers never wait for it and see the old or the new segments of a
// group (TestReaderSeesConsistentLogDuringRetentionAndCompaction).
//
// # Performance
//
// BenchmarkCleanThroughput cleans a 64 MiB log in which every key was
// written twice (half the records go) and compares the pass with the disk
// model's time to read the dirty section once and write the output once
// (diskmodel PredictSequentialRead + PredictSequentialWrite; this VM:
// 1.12 GB/s reads, 1.53 GB/s writes). The pass in fact reads the dirty
// section twice (map, then rewrite), from the page cache, and fsyncs its
// output. Measured on a shared 2-core VM with a load average of 4 to 7
// from other work, so noisy (go test ./compaction -run '^$' -bench
// CleanThroughput -benchtime 5x -count 3); ratio = predicted / measured,
// mean over the iterations (best iteration in brackets):
//
//	1 KiB values, 1 GiB segments (one group)   0.73-0.78 (0.80-0.85)  about 500 MB/s
//	1 KiB values, 16 MiB segments (4 groups)   0.46-0.53 (0.55-0.66)  each swap fsyncs and renames
//	1 KiB values, LZ4 (2:1)                    0.28-0.55 (0.40-0.62)  decompress and recompress
//	100 B values                               0.28-0.34 (0.38-0.42)  below the 0.5 target
//
// Small records are CPU-bound: each record is walked, hashed (xxhash and
// CRC-32C) and looked up twice, once per phase. Two things brought the
// 100 B case from 0.18: sizing the table to the dirty section instead of
// the whole dedupe buffer (a 128 MiB table for 270 K keys cost a TLB and
// cache miss per lookup, about 500 ns on this VM), and loading a batch's
// slots before its lookups so that their misses overlap. Copying whole
// batches and walking only offsets, keys and value lengths of batches
// that are not rebuilt (scan.go) saves most of the decoding.
//
// # Not done
//
// Transactions: aborted transactions' records are not removed and
// transaction markers are kept as they are (the log has no transaction
// index). Legacy (magic 0 and 1) batches are up-converted by package
// segment before they are stored, so the cleaner sees only v2 batches
// and never needs Kafka's legacy delete horizon.
package compaction
