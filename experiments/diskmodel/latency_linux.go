package diskmodel

import (
	"math/rand/v2"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// randRead measures RandRead4K: 4 KiB reads at uniformly random 4 KiB-
// aligned offsets of the FileSize test file, from the device. With O_DIRECT
// each read bypasses the page cache; without it the file is opened with
// FADV_RANDOM (no readahead) and each 4 KiB range is evicted just before it
// is read, outside the timing. The offsets come from a fixed seed, so every
// calibration reads the same sequence.
func (m *meter) randRead(c *Calibration) error {
	f, err := m.openRandom()
	if err != nil {
		return wrap(RunRandRead4K, m.seqPath, err)
	}
	defer f.Close()
	rng := rand.New(rand.NewPCG(0x5eed, 0x4b1d))
	pages := m.opts.FileSize / pageSize
	var off int64
	samples, err := m.latencies(maxRandReadSamples, func() error {
		_, err := f.ReadAt(m.buf[:pageSize], off)
		return err
	}, func() {
		off = rng.Int64N(pages) * pageSize
		if !m.direct {
			evict(f, off, pageSize)
		}
	})
	if err != nil {
		return wrap(RunRandRead4K, m.seqPath, err)
	}
	c.RandRead4K = time.Duration(record(c, RunRandRead4K, samples))
	c.RandRead4KP99 = time.Duration(c.Runs[RunRandRead4K].P99)
	return nil
}

// openRandom opens the test file as seqRead decided (O_DIRECT or not) and,
// without O_DIRECT, turns readahead off and evicts the file.
func (m *meter) openRandom() (*os.File, error) {
	if m.direct {
		return os.OpenFile(m.seqPath, os.O_RDONLY|unix.O_DIRECT, 0)
	}
	f, err := os.Open(m.seqPath)
	if err != nil {
		return nil, err
	}
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_RANDOM) // advice only, like evict
	evict(f, 0, 0)
	return f, nil
}

// fsyncs measures Fsync4K and Fsync1M: append n bytes to a new file with
// write(2), then fdatasync, timing both together. Appending grows the file,
// so each fdatasync also commits the new size, as a log append does.
func (m *meter) fsyncs(c *Calibration) error {
	var err error
	c.Fsync4K, c.Fsync4KP99, err = m.fsyncRun(c, RunFsync4K, pageSize, maxFsync4KSamples)
	if err != nil {
		return err
	}
	maxN := max(minLatencySamples, int(m.opts.FileSize/chunkSize))
	c.Fsync1M, c.Fsync1MP99, err = m.fsyncRun(c, RunFsync1M, chunkSize, maxN)
	return err
}

// fsyncRun times appends of n bytes + fdatasync to a new file named name,
// records them as run name and returns the median and p99.
func (m *meter) fsyncRun(c *Calibration, name string, n int64, maxN int) (med, p99 time.Duration, err error) {
	path := m.path(name)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, 0, wrap(name, path, err)
	}
	defer os.Remove(path)
	defer f.Close()
	samples, err := m.latencies(maxN, func() error {
		if _, err := f.Write(m.data[:n]); err != nil {
			return err
		}
		return unix.Fdatasync(int(f.Fd()))
	}, nil)
	if err != nil {
		return 0, 0, wrap(name, path, err)
	}
	med = time.Duration(record(c, name, samples))
	return med, time.Duration(c.Runs[name].P99), nil
}

// latencies runs op latencyWarmup times untimed, then times it (in ns)
// within the budget, at least minLatencySamples and at most maxN times.
// prepare, if not nil, runs before each op outside the timing.
func (m *meter) latencies(maxN int, op func() error, prepare func()) ([]float64, error) {
	timed := func() (float64, error) {
		if prepare != nil {
			prepare()
		}
		start := time.Now()
		err := op()
		return float64(time.Since(start).Nanoseconds()), err
	}
	for range latencyWarmup {
		if _, err := timed(); err != nil {
			return nil, err
		}
	}
	return repeat(m.ctx, m.opts.Duration, minLatencySamples, maxN, timed)
}
