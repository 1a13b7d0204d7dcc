// Command flushpolicy measures the trade-off at the centre of a log's
// durability: when to fsync. It is the first experiment of issue 6.
//
// Kafka offers two knobs per topic, flush.messages (fsync once that many
// messages were appended since the last fsync) and flush.ms (a background
// task fsyncs a log once that long has passed since its last flush), and by
// default sets neither: it fsyncs only when a segment rolls and on a clean
// shutdown, and leaves durability to replication. This experiment appends
// to one segment.Log under each setting and measures what a producer gets
// (append throughput and latency) against what an OS crash or power loss
// could take (the data at risk), each beside diskmodel's
// prediction for this machine.
//
// # Running
//
// From the repository root:
//
//	go run ./experiments/flushpolicy -quick   # smoke run, well under a minute
//	go run ./experiments/flushpolicy          # full run, a few minutes
//
// It shows a progress bar and writes, under
// experiments/flushpolicy/results/<YYYY-MM-DD>/ (results/quick/ for -quick):
//
//	flushpolicy.csv         one row per run (columns: csvHeader in output.go)
//	risk_timeseries.csv     every data-at-risk sample of the first repetition
//	calibration.json        the disk model used
//	summary.md              machine, load average, disk model, tables, plots
//	throughput_vs_risk      throughput against mean data at risk, one curve
//	                        per policy through the batch sizes
//	tradeoff_<batch>        the same per batch size, one curve per family
//	                        (flush.messages=N, flush.ms=T), model dashed
//	throughput              throughput per policy, model beside it
//	latency_<batch>         p50, p99, p99.9 of one Append, model beside it
//	risk_over_time_<batch>  bytes at risk over a run, one line per policy
//	group_commit            flush.messages=1 with 1..16 appenders on one log
//
// (plots as .png and .svg). Logs are written under -dir (default the system
// temp directory, where the disk model is also calibrated) and removed
// after each run. -help lists every flag.
//
// # Method
//
// Policies: flush.messages in {1, 10, 100, 1000}, flush.ms in {1, 10, 100,
// 1000} ms, and never (neither set). Batch sizes: 1, 16 and 256 KiB of
// records of about 1 KiB (flag -record-bytes), so a batch holds 1, 16 or
// 256 messages. flush.messages counts messages, as Kafka's does, so a
// policy fsyncs every g = ceil(N/m) batches of m messages: at 256 KiB,
// messages=1, 10 and 100 all fsync every batch.
//
// Each run opens a new log (segment.bytes 1 GiB, Kafka's default), then one
// goroutine appends one pre-built, uncompressed RecordBatch v2 again and
// again (Log.Append validates header and CRC and assigns offsets in place,
// as for a producer's batch) until -duration has passed or -max-bytes were
// appended. A sampler goroutine reads, every -sample-every, the highest
// acknowledged offset (an Append that has returned) and Log.RecoveryPoint:
// their difference is the data at risk. Then Log.Flush is timed ("drain":
// how long what was at risk takes to become durable) and the log is closed
// and removed. fsyncs of the log's files are counted and timed at the
// segment.FS seam (benchmarks/storage.SyncTimer). Runs are repeated
// (-reps), repetitions outermost, and the summary shows medians.
//
// Raw peers (peer.go, -peers, on by default): just before each log run,
// the same policy's I/O without the log: pwrite(2) of the same batch at
// the end of a file, fdatasync after every g-th write, or from a goroutine
// with the log flusher's rule, or never. On a shared machine whose disk
// speed drifts by several times within minutes, the log's figure over its
// peer's tells the log's own cost from the machine's; the model tells how
// both compare with the calibrated disk. Each run also reports the rate at
// which its fsyncs made bytes durable (fsync MB/s: bytes below the
// recovery point when the appends end, over the time spent in fsyncs).
//
// Group commit: flush.messages=1 with 1, 2, 4, 8 and 16 goroutines
// appending 1 KiB batches (each its own copy) to one log. segment.Log runs
// fsyncs outside its writer lock and an fsync covers every batch appended
// before it began, so concurrent appenders share fsyncs; the CSV's
// batches_per_fsync shows how many.
//
// # Models
//
// With c the calibration (diskmodel), B the batch bytes, m messages per
// batch, g = ceil(N/m), tw = c.PredictPageCacheWrite(B) and
// F = c.FsyncLatency(g*B):
//
//	throughput, flush.messages=N   PredictWriteWithFsync(bytes, B, g)
//	throughput, flush.ms or never  PredictPageCacheWrite(bytes): an append never waits for an fsync
//	latency quantile q             F if q > 1-1/g (one append in g pays the group's fsync), else tw;
//	                               with n appenders sharing fsyncs, FsyncLatency(n*B) for every append
//	risk, flush.messages=N         max (g-1)*m messages; time-weighted mean
//	                               m * (tw*(g-2)(g-1)/2 + (g-1)*F) / ((g-1)*tw + F)
//	                               (after the k-th append of a group k batches are at risk for the
//	                               next append's time: tw, or F for the g-th)
//	risk, flush.ms=T               a replay of the flusher at the measured rate r: it wakes every T and
//	                               fsyncs once T has passed since the last flush ended, so flushes start
//	                               P = T*ceil((T+F)/T) apart (2T for 0 < F <= T) and the mean risk is
//	                               r*(P/2 + F) in a steady state; a run shorter than T never flushes
//	risk, never                    everything since the last roll: mean half, max all of the run's
//	                               messages while the run stays inside one segment
//	group commit                   ideal sharing: PredictWriteWithFsync(bytes, B, n), one fsync per n batches
//
// The models assume the device is the bottleneck: they know nothing of the
// CPU an append costs (validation, CRC, a write system call, the lock),
// which bounds small batches; the x never column of the summary, measured
// against measured, shows that cost apart from the fsyncs.
//
// # Concurrency
//
// The experiment runs one measured run at a time. During a run: the
// appender goroutines (one, or n for group commit) own their batch copies
// and latency slices and share atomic counters; the sampler goroutine owns
// its samples and hands them over when stopped; segment.Log runs its
// flusher goroutine (flush.ms, rolled segments), and a raw peer under
// flush.ms its own flusher goroutine, which owns the fdatasyncs. The progress bar has its
// own goroutines (mpb). All of them end before the next run starts.
package main
