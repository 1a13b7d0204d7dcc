// Package storage holds the storage benchmarks of issue 2 as workloads
// that two harnesses share: `varve log bench` (Run: every workload, a
// table of figures against the disk model) and segment's testing.B
// benchmarks (segment/bench_test.go, which call the same primitives in
// b.N loops). Writing each workload once keeps the two in agreement.
//
// # Workloads and figures
//
// Run measures, in a private directory it removes when it returns:
//
//	validate/<size>          record.ValidateBatch on one goroutine (CPU only)    >= 3 GB/s
//	allocs/append <n> rec.   heap allocations per Log.Append, 1 vs 1000 records   equal
//	append/<size>            Log.Append of LogBytes in 64 KiB..1 MiB batches,
//	                         no fsync per batch, timed to the end of a Flush     >= 0.90x SeqWriteBps
//	append-fsync/<size>      the same with flush.messages=1 (an fsync per batch) >= 0.90x PredictWriteWithFsync
//	append/16KiB             builds the read log (16 KiB batches: Kafka's
//	                         producer batch.size default)                          (context only)
//	read-seq/page-cache      whole read log, 1 MiB Log.Read + pread, resident     >= 0.50x PageCacheReadBps
//	read-batch/<path> p99    one batch at a random offset: Log.Read + pread into
//	                         a reused buffer, and Log.ReadBytes                  p99 < 50 µs
//	recovery/page-cache      unclean reopen, pages cached (process crash)         (context only)
//	recovery/device          unclean reopen after evicting the log (restart)      >= 0.50x SeqReadBps
//
// Every figure carries the model's prediction for the same work and their
// ratio as speeds (1 = as fast as the model; see diskmodel.Ratio).
// Latency percentiles are computed by the harness from each operation's
// time (Summarize: nearest rank), never derived from a mean. An unclean
// reopen is made by removing the clean-shutdown marker and the
// recovery-point checkpoint (MakeUnclean), so recovery validates every
// batch and rebuilds every index, and Recover checks that it did.
//
// # Figures are noisy: peers
//
// Absolute figures depend on the machine and on whatever else runs on it;
// the ratios travel better, but only if the calibration was taken under
// the same conditions, and on a shared machine the disk's speed drifts by
// several times within minutes. So the disk figures also carry a peer
// (peers.go): the same I/O without the log (pwrite with one fdatasync at
// the end or one per batch; pread of the same files, warm or evicted),
// run just before the log's workload, and Figure.VsPeer = log / peer.
// The target is against the model, as issue 2 states it; VsPeer is what
// tells the log's own cost from the machine's. Report the load average
// with the figures.
//
// # Concurrency
//
// Run and the primitives are called from one goroutine and start none of
// their own (segment.Log runs its flusher). Progress and Task are called
// from that goroutine. AllocsPerAppend counts the whole process's
// allocations, so other goroutines that allocate meanwhile inflate it.
package storage
