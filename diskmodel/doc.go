// Package diskmodel calibrates the disk under a directory at run time and
// predicts, from those figures, how long a storage workload should take.
// Every Varve benchmark reports its result as a ratio to one of these
// predictions: a ratio travels between machines, an absolute figure does not.
//
// # Use
//
//	c, err := diskmodel.LoadOrCalibrate(ctx, dir, diskmodel.DefaultMaxAge, diskmodel.Options{})
//	want := c.PredictWriteWithFsync(totalBytes, batchBytes, 1) // flush.messages=1, in batches
//	ratio := want.Seconds() / measured.Seconds()               // 1.0 = as fast as the disk allows
//
// From the command line: go run ./experiments/diskmodel/calibrate -dir DIR.
//
// It is a leaf, below everything that measures with it: `varve log bench`
// (through benchmarks/storage), the packages' testing.B benchmarks and the
// experiments. It imports nothing of Varve's.
//
// # Measurements
//
// Calibrate works in a private temp directory inside dir and removes it
// before it returns, also on error or cancellation. Every write is 1 MiB of
// random (incompressible) bytes, or a 4 KiB prefix of it. Each figure is
// the median of several repetitions: whole-file passes repeat at least 3 and
// at most 7 times (page-cache reads up to 25), latencies are sampled at least
// 8 times after untimed warm-ups; both stop once Options.Duration has passed
// and the minimum is reached. Runs keeps min, median, p99 (nearest
// rank) and max of each figure. In order:
//
//  1. SeqWriteBps, PageCacheWriteBps: create a file, write(2) FileSize bytes
//     in 1 MiB calls, fdatasync. SeqWriteBps is timed to the end of the
//     fdatasync, so the page cache cannot flatter it; PageCacheWriteBps is
//     the same pass timed to the end of the last write. A new file each
//     repetition (the old one is removed untimed), so blocks are allocated
//     as a log's appends allocate them.
//  2. PageCacheReadBps: one untimed pass makes the last file resident, then
//     each pass preads it in 1 MiB chunks into a user buffer.
//  3. SeqReadBps: whole-file passes of 1 MiB reads from the device. With
//     O_DIRECT (4 KiB-aligned mmap'd buffer) when the file system accepts it;
//     if it refuses (EINVAL/EOPNOTSUPP: tmpfs on old kernels, some overlays)
//     or Options.DisableDirectIO is set, the file is evicted with
//     fadvise(DONTNEED) before each buffered pass. ReadMethod records which.
//     O_DIRECT reads wait for each 1 MiB request (queue depth 1).
//  4. ColdBufferedReadBps: evict with fadvise(DONTNEED), then buffered 1 MiB
//     preads with the kernel's readahead: how a fetch of data that has left
//     the page cache reads. It may exceed SeqReadBps, since readahead keeps
//     several requests in flight. ColdResident is the share of the file's
//     pages mincore(2) still finds resident after the first eviction: near 1
//     (tmpfs) means no cold figure reached a device.
//  5. RandRead4K(P99): 4 KiB reads at uniformly random 4 KiB-aligned offsets
//     of the FileSize file, in a fixed-seed order, from the device (O_DIRECT;
//     or FADV_RANDOM and an untimed eviction of each 4 KiB range).
//  6. Fsync4K(P99), Fsync1M(P99): once the test file is deleted (its space
//     is reused, as between sequential-write repetitions), append 4 KiB
//     (1 MiB) to a new file with write(2), then fdatasync, timed together.
//     Appends grow the file, so each fdatasync also commits the size, as a
//     log append does. (Kafka's flush is FileChannel.force(true), an fsync;
//     for appends the two write the same metadata.) The sizes alternate in
//     4 rounds of blocks (a 4 KiB block, then a 1 MiB block, each a quarter
//     of Duration, each opened by one untimed append), so both points see
//     the same moments of a shared disk while no 4 KiB sample pays for the
//     1 MiB flush just before it.
//
// A calibration records what could bias it: LoadAvg1 (other work on the
// machine makes figures pessimistic), FSType, ReadMethod, ColdResident.
// Fsync latency is the most load-sensitive figure: other writers on the same
// device can multiply it several times from one second to the next, so look
// at LoadAvg1 and the spread in Runs before trusting a ratio built on it.
// Under a virtual machine the host may cache the "device", so cold reads
// and fsyncs can look faster than the physical disk; the models then
// describe that virtual disk, which is what the benchmarks run on.
//
// # Models
//
// Each model is arithmetic on the medians; a zero figure predicts zero.
//
//	PredictSequentialWrite(b)   = b / SeqWriteBps
//	PredictPageCacheWrite(b)    = b / PageCacheWriteBps
//	PredictSequentialRead(b)    = b / SeqReadBps
//	PredictColdBufferedRead(b)  = b / ColdBufferedReadBps
//	PredictPageCacheRead(b)     = b / PageCacheReadBps
//	PredictReadsWithSeeks(b, s) = s*RandRead4K + b/SeqReadBps
//	FsyncLatency(g)             = piecewise linear through (4 KiB, Fsync4K),
//	                              (1 MiB, Fsync1M), (FileSize, FileSize/SeqWriteBps);
//	                              Fsync4K below 4 KiB; slope 1/SeqWriteBps above FileSize
//	PredictWriteWithFsync(b, batch, k)
//	                            = floor(b/g)*FsyncLatency(g) + FsyncLatency(b mod g), g = batch*k
//	                              (b/SeqWriteBps when k <= 0)
//
// Assumptions: the device is the bottleneck (no CPU cost per byte beyond a
// copy); writes are sequential appends in large calls; one stream at a time
// (no model of parallel streams or queue depth above one); the page cache
// holds what the page-cache models read and absorbs what PredictPageCacheWrite
// writes (below the kernel's dirty limits). The third FsyncLatency point is
// the sequential-write pass, which is exactly one write-then-fdatasync group
// of FileSize bytes, so large groups interpolate between measurements
// instead of extrapolating a noisy 4 KiB-1 MiB slope. PredictWriteWithFsync
// does not add b/SeqWriteBps to the fsync time: each fsync latency already
// includes writing its group. Points are made non-decreasing so a prediction
// never shrinks when bytes grow.
//
// # Cache
//
// Save writes the Calibration as indented JSON to dir/.diskmodel.json (the
// field names are the json tags of Calibration; durations in nanoseconds,
// bandwidths in bytes/s), crash-safely: temp file, fsync, rename, fsync dir.
// Load accepts it only if its version is this package's, it validates, it
// was taken on the same device (st_dev of dir) and host, and it is younger
// than maxAge (default DefaultMaxAge, 24 h).
//
// # Concurrency
//
// A Calibration is a value: safe to copy and to use from many goroutines.
// Calibrate may be called from any goroutine but measures the whole device,
// so two calibrations at once (or any heavy I/O beside one) disturb each
// other. LoadOrCalibrate holds an exclusive flock on dir while it loads,
// measures and saves, so processes sharing a directory calibrate one at a
// time and the later ones reuse the first one's cache. The package starts
// no goroutines.
package diskmodel
