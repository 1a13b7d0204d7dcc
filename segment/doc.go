// Package segment is Varve's storage core: an append-only partition log
// in Kafka's on-disk format, usable as a library without any broker.
// Batches are built, validated and decoded by package record.
//
//	cfg := segment.DefaultConfig() // Kafka's topic-level defaults
//	cfg.SegmentBytes, cfg.FlushMessages = 64<<20, 1
//	log, err := segment.Open(dir, cfg)
//	b := record.NewBatchBuilder(record.CompressionZstd)
//	b.Append(record.Record{Key: k, Value: v})
//	batch, err := b.Build()
//	info, err := log.Append(batch)            // info.FirstOffset .. info.LastOffset
//	region, err := log.Read(info.FirstOffset, 1<<20) // hand region to a socket (sendfile)
//	buf, err := log.ReadBytes(info.FirstOffset, 1<<20)
//	for rec, err := range record.Records(buf) { ... }
//
// # Files
//
// A log is a directory (Kafka names it <topic>-<partition>) of segments.
// A segment is three files named by its base offset in 20 digits:
//
//	00000000000000000000.log        RecordBatch v2 batches, verbatim (package record has the layout)
//	00000000000000000000.index      8-byte entries: relative offset u32, position u32 (package index)
//	00000000000000000000.timeindex  12-byte entries: timestamp i64, relative offset u32
//	00000000000000000512.snapshot   idempotent producers' state at that offset (producer_snapshot.go)
//	00000000000000000000.txnindex   aborted transactions whose ABORT marker the segment holds (txnindex.go)
//
// A batch's offset index entry holds its last offset and its position;
// an entry is added once index.interval.bytes were appended since the
// previous one, so a segment's first batch is never indexed. Indexes are
// preallocated to segment.index.bytes and trimmed when their segment is
// sealed. Beside the segments, a log opened standalone keeps Kafka's
// recovery-point-offset-checkpoint and log-start-offset-checkpoint files
// (version line, count line, "topic partition offset" lines) and the
// clean-shutdown marker .kafka_cleanshutdown (Kafka 3.5+'s
// {"version":0,"brokerEpoch":N}; a standalone log writes -1, no broker);
// under a log manager
// (Config.Managed) those live in the log dir and the manager owns them.
// Every such file is written to a temporary name, fsynced, renamed over
// the old one, and its directory fsynced.
//
// # Appending, rolling and flushing
//
// Append validates each producer batch by its header and CRC-32C without
// decoding records, writes its base offset in place (the CRC does not
// cover it) and writes the bytes as they are. Before an append the
// active segment rolls, as in Kafka, when the append would take it past
// segment.bytes, when the batch's timestamp is segment.ms (less a
// per-segment jitter) past the segment's first batch, when an index is
// full, or when the relative offset would not fit in 32 bits.
//
// flush.messages=N fsyncs once N offsets were appended since the
// recovery point; N=1 makes every append durable before Append returns.
// fsyncs run outside the writer lock, so appends that arrive while one
// runs are covered by the next (group commit). flush.ms is applied by
// the log's flusher goroutine. An inline flush fdatasyncs the active
// segment's .log only: its indexes are rebuilt by recovery anyway, so one
// fdatasync makes an append durable. A rolled segment (log and indexes)
// and the producer snapshot taken at the roll are fsynced by the flusher,
// off the append path, and only then does the recovery point move past
// it.
//
// Batches from idempotent producers (producer id >= 0) are checked
// against the producer's epoch and last five batches, as Kafka's
// ProducerStateManager does: a retry of one of them is answered with its
// original offsets and not written again (AppendInfo.Duplicate), a
// sequence gap or a fenced epoch is refused. After a failed write or fsync the log refuses appends
// (ErrLogFailed) until it is reopened.
//
// Transactions (txn.go): a producer's transactional batches stay
// unstable until its coordinator's COMMIT or ABORT marker, which only
// AppendTxnMarker (AppendAsCoordinator) writes. LastStableOffset(hw) is
// the first offset of the earliest open transaction (or ended one whose
// marker is not below hw), capped by hw; an ABORT adds an entry to its
// segment's .txnindex, and AbortedTransactions(from, upTo) returns the
// entries a read_committed fetch of [from, upTo) needs.
//
// # Recovery
//
// Open runs these steps in order:
//
//  1. Read the clean-shutdown marker and delete it at once (a crash while
//     loading must count as unclean); read the recovery point and log
//     start offset checkpoints.
//  2. Delete leftovers: *.deleted, *.cleaned and *.tmp files, and index
//     files that have no .log.
//  3. Complete or discard an interrupted compaction swap (*.swap files):
//     see Log.ReplaceSegments.
//  4. After an unclean shutdown, validate every batch of the segment that
//     holds the recovery point and of every later segment: length, magic,
//     CRC-32C and increasing offsets, rebuilding both indexes from the
//     log as it goes (never the reverse). Segments below the recovery
//     point, and all segments after a clean shutdown, only have their
//     indexes checked (size, order, no entry past the log); an index that
//     fails is rebuilt from its log the same way.
//  5. At the first byte that is not part of a valid batch, truncate that
//     segment there and delete every later segment.
//  6. Apply the log start offset; create an empty segment if none is left.
//  7. Set the recovery point (the log end after a clean shutdown, else
//     the smaller of the checkpoint and the log end), and report what was
//     dropped: Log.Recovery returns the figures and a warning is logged.
//     A log that now ends below the recovery point checkpoint lost
//     records that were fsynced (a segment file deleted under the
//     broker): the range is reported in RecoveryReport.LostFrom/LostTo
//     and logged as an error naming the directory.
//  8. Rebuild the idempotent producers' state: load the latest readable
//     snapshot at or below the log end, then apply the producer fields of
//     every batch header after it. The transaction index of a segment
//     step 4 validated, if the segment holds a marker, or of a segment
//     whose .txnindex is corrupt, is emptied in step 4 and rebuilt here:
//     the replay then starts at or below that segment's base (later
//     snapshots are deleted) and re-adds an entry for every ABORT.
//
// # Concurrency
//
// A Log has one writer at a time (Append, AppendReplicated, Roll,
// TruncateTo, DeleteSegmentsBefore, ReplaceSegments serialise on a
// mutex) and any number of concurrent readers (Read, ReadBytes,
// StartOffset, EndOffset). A segment's size and next offset are
// published after its bytes are written, so a reader never sees a
// partial batch. A removed segment's files are renamed *.deleted and
// closed only after file.delete.delay.ms; a read that outlives that gets
// ErrOffsetOutOfRange, never garbage; ReadBytes retries a read whose
// segment was replaced by compaction under it. The log runs one
// goroutine, the flusher, which owns the fsync of rolled segments, the
// completion of the producer snapshots a roll queues, and flush.ms. Lock
// order: the writer lock, then flushMu, then the snapshot queue's locks.
//
// # Open files
//
// A segment's files (its .log descriptor and both index mappings) are
// open only while it is pinned, that is the active segment, a rolled
// segment until the flusher has fsynced it, cleaner output until it is
// swapped in, and a segment being loaded or truncated, or while it is
// warm in a FileCache (files.go). A sealed segment is cold until a read
// needs it (Kafka's lazy indexes); the cache, process-wide unless
// Config.Files names another, keeps at most DefaultMaxOpenSegments
// sealed segments open and closes the least recently used (CLOCK).
// Descriptors therefore grow with the number of logs, not of segments.
// Open loads segments one at a time and leaves the sealed ones to the
// cache. A reader takes a reference on the files it uses, so a segment
// closed as cold under it finishes its read; a Region returned by Read
// keeps its descriptor open for file.delete.delay.ms. CheckFileLimit
// and CheckCanCreate (rlimit.go) compare RLIMIT_NOFILE with what the
// logs need. Lock order: the writer lock, flushMu, a segment's openMu,
// the cache's lock.
//
// Errors carry the directory, the file and the offset involved and wrap
// the sentinel errors of errors.go, so errors.Is works on them.
package segment
