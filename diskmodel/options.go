package diskmodel

import "time"

// Defaults. A full calibration takes a few seconds on an SSD and about 30 s
// on a disk that streams 100 MB/s (three 256 MiB passes each for writes,
// device reads and cold buffered reads); a Quick one takes a few seconds.
const (
	DefaultFileSize    int64 = 256 << 20
	QuickFileSize      int64 = 32 << 20
	DefaultDuration          = 1500 * time.Millisecond
	QuickDuration            = 250 * time.Millisecond
	DefaultMaxAge            = 24 * time.Hour
	CacheFileName            = ".diskmodel.json"
	chunkSize          int64 = 1 << 20 // unit of every sequential read and write
	pageSize           int64 = 4096    // alignment for O_DIRECT and the small I/O size
	minSeqReps               = 3       // repetitions of a whole-file pass, at least
	maxSeqReps               = 7       // ... and at most
	maxPageCacheReps         = 25      // page-cache passes are cheap; take more of them
	minLatencySamples        = 8       // fsync and random-read samples, at least
	fsyncRounds              = 4       // alternating 4 KiB and 1 MiB fsync blocks, each
	maxFsync4KSamples        = 2000    // cap on 4 KiB fsync samples
	maxRandReadSamples       = 20000
	latencyWarmup            = 2 // samples run and discarded before timing
)

// Options tune a calibration. The zero value is a full calibration.
type Options struct {
	// FileSize is the size of the sequential test file, rounded up to a
	// whole MiB. Default 256 MiB (Quick: 32 MiB). It is also the span over
	// which random reads land and the cap on the 1 MiB fsync file.
	FileSize int64
	// Duration is the time budget of each measurement. A measurement stops
	// at the budget once it has its minimum repetitions (3 whole-file
	// passes, or 8 latency samples), so a slow disk can exceed it.
	// Default 1.5 s (Quick: 250 ms).
	Duration time.Duration
	// Quick selects the small defaults above: a rough calibration for tests.
	Quick bool
	// DisableDirectIO makes device reads use fadvise(DONTNEED) + pread even
	// where O_DIRECT works, to compare the two methods or to test the
	// fallback.
	DisableDirectIO bool
}

// withDefaults fills unset fields and rounds FileSize up to a whole chunk.
func (o Options) withDefaults() Options {
	if o.FileSize <= 0 {
		o.FileSize = DefaultFileSize
		if o.Quick {
			o.FileSize = QuickFileSize
		}
	}
	o.FileSize = (o.FileSize + chunkSize - 1) / chunkSize * chunkSize
	if o.Duration <= 0 {
		o.Duration = DefaultDuration
		if o.Quick {
			o.Duration = QuickDuration
		}
	}
	return o
}
