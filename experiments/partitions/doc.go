// Command partitions measures what spreading one stream of appends over
// more partitions costs: the second experiment of issue 6.
//
// A log is fast because it writes sequentially. A broker with P partitions
// keeps P logs, each sequential on its own, but the device sees P streams,
// and every fsync of a partition's log is one more flush of a small piece
// of one file. This experiment appends the same total bytes, in the same
// batches, round-robin into 1, 4, 16, 64, 256 and 1,024 partitions (one
// segment.Log each) under a per-partition fsync policy, and reports the
// throughput beside a model of the device built from diskmodel.
//
// # Running
//
// From the repository root:
//
//	go run ./experiments/partitions -quick   # smoke run, well under a minute
//	go run ./experiments/partitions          # full run, a few minutes
//
// It shows a progress bar and writes, under
// experiments/partitions/results/<date>[-quick]/: partitions.csv (one row
// per run; columns: csvHeader in output.go), calibration.json (the disk
// model used), summary.md (machine, load average, tables, where each curve
// bends) and the plots throughput, ack_throughput and data_at_risk (PNG and
// SVG). Logs go under -dir (default the system temp directory, where the
// disk model is also calibrated) and are removed after each run.
//
// # Method
//
// For each policy (-policies: never, and flush.messages=N, which Kafka
// applies per partition) and partition count P: open P logs named like
// Kafka's partition directories (untimed), append -total-bytes (default
// 256 MiB) as batches of -batch-bytes (16 KiB, the Java producer's
// batch.size) of ~1 KiB records, batch i to partition i mod P, from one
// goroutine, then Log.Flush every log in turn. Two throughputs: "append"
// (what a producer waiting for acknowledgements sees) and "durable" (the
// appends and the final flush). A sampler sums the messages acknowledged
// but not fsynced over all partitions every -sample-every. fdatasyncs and
// directory fsyncs are counted at the segment.FS seam.
//
// Descriptors and mappings: a segment holds its .log open and maps its
// two indexes. Kafka's segment.index.bytes default (10 MiB) would reserve
// 20 MiB of address space per partition, 20 GiB at 1,024; so the
// experiment sizes segment.index.bytes to what one partition receives in a
// run (one 12-byte entry per batch or per index.interval.bytes, plus a
// page: indexBytesFor), from a few hundred KiB at 1 partition down to 8 KiB
// at 1,024, never small enough to roll a segment. The logs run under a log
// manager's view (Config.Managed), as Kafka's do: no checkpoint files per
// partition. The CSV records the open descriptors and mappings of each
// run; Go raises the soft RLIMIT_NOFILE to the hard limit at start-up.
//
// # Model
//
// Device cost only, from the calibration c:
//
//	durable time = sum over fsyncs of c.FsyncLatency(bytes the fsync makes durable)
//	             + seeks * c.RandRead4K + P * c.Fsync4K
//
// FsyncLatency(x) is the measured cost of write(2) then fdatasync of x
// bytes appended to a file, so it already includes copying them into the
// page cache. The policy fixes the fsyncs: per partition with n batches,
// floor(n/g) during the run, g = ceil(flush.messages / records per batch),
// and one at the final flush for what is left (never: just that one).
// seeks: with P > 1 every fsync goes to another file than the previous one
// and is charged one random access (RandRead4K, the calibration's seek:
// diskmodel's PredictReadsWithSeeks charges the same per seek for reads);
// with P = 1 none. P * Fsync4K is the directory fsync of each new log's
// first flush. Append time is the same without the final flush and with
// the unflushed batches at c.PredictPageCacheWrite. The model knows no CPU
// cost (per append, per partition) and no interaction between fsyncs.
//
// What it predicts: with a fixed total, P partitions under never flush P
// files of total/P bytes each, so the fixed cost of an fsync (Fsync4K and
// a seek) is paid P times while the bytes stay the same; the curve bends
// where P * (Fsync4K + RandRead4K) becomes comparable with
// total/SeqWriteBps. Under flush.messages=N the number of fsyncs hardly
// depends on P until a partition receives fewer than N messages in a run;
// then the threshold stops firing and the final flush does the work, while
// the data at risk grows to N messages per partition.
//
// # Concurrency
//
// One run at a time. During a run one goroutine appends; the sampler
// goroutine reads the logs' recovery points and per-partition atomics;
// each segment.Log runs its flusher goroutine (P of them); mpb runs the
// progress bar. All end before the next run.
package main
