// Package retention bounds a partition log by deleting its oldest
// segments, as Kafka's cleanup.policy=delete does (UnifiedLog.
// deleteOldSegments, run by LogManager's kafka-log-retention task).
//
//	l, _ := segment.Open(dir, segment.DefaultConfig())
//	p := retention.DefaultPolicy() // delete, 7 days, no size limit
//	p.RetentionMs, p.RetentionBytes = 24*time.Hour, 1<<30
//	res, err := retention.Enforce(l, p, l.EndOffset(), time.Now())
//	// res.Deleted, res.ByRule[retention.RuleTime], res.StartOffset
//
// Example functions in example_test.go run this and the Scheduler.
//
// # Rules
//
// Enforce applies, in Kafka's order:
//
//  1. log start offset: a segment goes when the next segment starts at or
//     below the log start offset (raised by DeleteRecords /
//     Log.SetStartOffset). This is the only rule for cleanup.policy=compact.
//  2. retention.bytes (default -1, off): with diff = log size -
//     retention.bytes, a segment goes while diff - its size >= 0; 0
//     deletes every segment below the upper bound.
//  3. retention.ms (default 7 days, -1 off): a segment goes when now minus
//     its largest timestamp exceeds retention.ms; a segment with no
//     timestamps is judged by its file's modification time.
//
// Each rule walks the segments oldest first and stops at the first one it
// keeps, so only a prefix of the log is ever deleted. Whatever the rule, a
// segment goes only if every offset in it is below the upper bound the
// caller gives (Kafka's high watermark guard: highWatermark >= next
// segment's base, or the log end for the last segment), and an empty last
// segment never goes. A non-empty active segment that qualifies is rolled
// first, so the log always keeps one (empty) segment.
//
// Deleting a segment raises the log start offset to the next segment's
// base and checkpoints it (log-start-offset-checkpoint); the segment's
// files are renamed *.deleted and removed after file.delete.delay.ms, so
// reads in progress finish or get segment.ErrOffsetOutOfRange (package
// segment does this in Log.DeleteSegmentsBefore).
//
// # Cost
//
// Enforce reads no segment data: it lists the segments (one stat per
// segment that has no timestamps, for the mtime fallback), renames three
// files per deleted segment and writes one checkpoint per rule that
// deleted something. Its cost grows with the number of segments, not their
// size. Measured (go test ./retention -run '^$' -bench EnforceBySegmentSize
// -benchtime 20x, on a shared 2-core VM, noisy): per deleted segment,
// 0.24, 0.27 and 0.22 ms for 64 KiB, 1 MiB and 8 MiB segments on a quiet
// moment; 1.1-2.8, 0.9-1.3 and 0.9 ms under a load average of 5 (the
// fsyncs of the checkpoint and directory wait on other work).
//
// # Values
//
// A Policy is taken as given, zero included: retention.ms=0 and
// retention.bytes=0 mean 0, as in Kafka, and only Unlimited (-1) turns a
// rule off. DefaultPolicy is Kafka's defaults; the zero Policy has no
// cleanup.policy (segment.CleanupPolicy) and Enforce refuses it.
//
// # Scheduler
//
// A Scheduler runs Enforce over many logs every
// log.retention.check.interval.ms (default 300 s) after an initial delay
// (30 s), each with its own Policy and upper bound, from one goroutine
// started by Start and stopped by Stop (or the context). As in Kafka, logs
// whose cleanup.policy includes compact are skipped: the log cleaner
// applies their retention after cleaning them (a broker passes Enforce as
// each compaction.Target's Retain; this package and compaction do not
// import each other). Set SchedulerConfig.IncludeCompacted when no
// cleaner runs.
//
// # Concurrency
//
// Enforce may run concurrently with appends, reads and compaction of the
// same log: each rule takes a snapshot of the segments, decides, and
// deletes by offset through Log.DeleteSegmentsBefore under the log's
// writer lock, which never removes more than the snapshot allowed (a
// segment that grew or was replaced in between stays). Two Enforce calls
// on one log are safe but pointless. The Scheduler's goroutine is its
// only long-lived goroutine; OnResult is called from it.
package retention
