package diskmodel

import (
	"fmt"
	"math"
	"time"
)

// cacheVersion is written into every cache file; a file with another version
// is ignored (ok=false) so a change of method never reuses old figures.
const cacheVersion = 1

// Read methods recorded in Calibration.ReadMethod.
const (
	// MethodDirect: device reads used O_DIRECT with 4 KiB-aligned buffers.
	MethodDirect = "O_DIRECT"
	// MethodFadvise: O_DIRECT was refused (or disabled), so the file's pages
	// were dropped with fadvise(DONTNEED) before each buffered pread.
	MethodFadvise = "fadvise(DONTNEED)+pread"
)

// Names of the entries of Calibration.Runs, one per measured figure.
const (
	RunSeqWrite       = "seq-write"
	RunPageCacheWrite = "page-cache-write"
	RunSeqRead        = "seq-read"
	RunColdBuffered   = "cold-buffered-read"
	RunPageCacheRead  = "page-cache-read"
	RunFsync4K        = "fsync-4k"
	RunFsync1M        = "fsync-1m"
	RunRandRead4K     = "rand-read-4k"
)

// Calibration is what one run of Calibrate measured on one directory's
// device. Bandwidths are bytes per second; latencies are medians unless the
// name ends in P99. The zero value predicts zero for every model.
type Calibration struct {
	Version int       `json:"version"`
	Dir     string    `json:"dir"`
	Device  uint64    `json:"device"` // stat(2) st_dev of Dir: the cache key
	Host    string    `json:"host"`   // hostname, part of the cache key
	FSType  string    `json:"fs_type"`
	Taken   time.Time `json:"taken"`
	// Elapsed is how long the whole calibration took.
	Elapsed  time.Duration `json:"elapsed_ns"`
	Quick    bool          `json:"quick"`
	FileSize int64         `json:"file_size"`
	// LoadAvg1 is the 1-minute load average when the calibration started: a
	// high value means other work shared the machine and the figures are
	// pessimistic.
	LoadAvg1 float64 `json:"load_avg_1"`
	CPUs     int     `json:"cpus"` // runtime.NumCPU(), to read LoadAvg1 against
	// ReadMethod is MethodDirect or MethodFadvise: how SeqReadBps and
	// RandRead4K kept the page cache out of the measurement.
	ReadMethod string `json:"read_method"`
	// ColdResident is the fraction of the test file's pages still in the
	// page cache (mincore) right after fadvise(DONTNEED). Near 0 means the
	// cold-read figures reached the device; near 1 (tmpfs) means they did
	// not, whatever ReadMethod says.
	ColdResident float64 `json:"cold_resident"`

	// SeqWriteBps: buffered write(2) of FileSize bytes in 1 MiB chunks to a
	// new file, including the final fdatasync.
	SeqWriteBps float64 `json:"seq_write_bps"`
	// PageCacheWriteBps: the same writes timed without the fdatasync: what
	// an append that never flushes costs (Kafka's default flush policy).
	PageCacheWriteBps float64 `json:"page_cache_write_bps"`
	// SeqReadBps: sequential 1 MiB reads from the device (ReadMethod).
	SeqReadBps float64 `json:"seq_read_bps"`
	// ColdBufferedReadBps: sequential buffered 1 MiB preads after
	// fadvise(DONTNEED), with the kernel's readahead: Kafka's fetch of data
	// that has left the page cache.
	ColdBufferedReadBps float64 `json:"cold_buffered_read_bps"`
	// PageCacheReadBps: sequential 1 MiB preads of a file already resident.
	PageCacheReadBps float64 `json:"page_cache_read_bps"`

	// Fsync4K and Fsync1M: append 4 KiB (1 MiB) with write(2), then
	// fdatasync; the latency of both together.
	Fsync4K    time.Duration `json:"fsync_4k_ns"`
	Fsync4KP99 time.Duration `json:"fsync_4k_p99_ns"`
	Fsync1M    time.Duration `json:"fsync_1m_ns"`
	Fsync1MP99 time.Duration `json:"fsync_1m_p99_ns"`
	// RandRead4K: a 4 KiB read at a uniformly random aligned offset of the
	// FileSize test file, from the device (ReadMethod): the seek model.
	RandRead4K    time.Duration `json:"rand_read_4k_ns"`
	RandRead4KP99 time.Duration `json:"rand_read_4k_p99_ns"`

	// Runs holds the spread behind each figure, keyed by the Run* names.
	Runs map[string]Run `json:"runs"`
}

// Validate reports, as an error wrapping ErrInvalid, the first figure that
// is not positive and finite. A Calibration from Calibrate always validates.
func (c Calibration) Validate() error {
	bws := []struct {
		name string
		v    float64
	}{
		{"SeqWriteBps", c.SeqWriteBps}, {"PageCacheWriteBps", c.PageCacheWriteBps},
		{"SeqReadBps", c.SeqReadBps}, {"ColdBufferedReadBps", c.ColdBufferedReadBps},
		{"PageCacheReadBps", c.PageCacheReadBps},
	}
	for _, b := range bws {
		if !(b.v > 0) || math.IsInf(b.v, 0) {
			return fmt.Errorf("%w: %s = %v", ErrInvalid, b.name, b.v)
		}
	}
	lats := []struct {
		name string
		v    time.Duration
	}{
		{"Fsync4K", c.Fsync4K}, {"Fsync4KP99", c.Fsync4KP99},
		{"Fsync1M", c.Fsync1M}, {"Fsync1MP99", c.Fsync1MP99},
		{"RandRead4K", c.RandRead4K}, {"RandRead4KP99", c.RandRead4KP99},
	}
	for _, l := range lats {
		if l.v <= 0 {
			return fmt.Errorf("%w: %s = %v", ErrInvalid, l.name, l.v)
		}
	}
	if c.FileSize <= 0 {
		return fmt.Errorf("%w: FileSize = %d", ErrInvalid, c.FileSize)
	}
	return nil
}
