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
//
// The two sizes alternate in blocks: fsyncRounds rounds of a 4 KiB block
// then a 1 MiB block, each lasting Duration/fsyncRounds (twice Duration in
// all), each starting with one untimed append. On a shared machine the
// disk's load changes from second to second; measured one after the other,
// the two points FsyncLatency interpolates between could come from
// different regimes. Blocks, rather than alternating single appends, keep
// a 4 KiB sample from paying for the 1 MiB flush just before it.
func (m *meter) fsyncs(c *Calibration) error {
	small, err := m.newAppender(RunFsync4K, pageSize)
	if err != nil {
		return err
	}
	defer small.close()
	large, err := m.newAppender(RunFsync1M, chunkSize)
	if err != nil {
		return err
	}
	defer large.close()
	block := m.opts.Duration / fsyncRounds
	maxLarge := max(minLatencySamples, int(m.opts.FileSize/chunkSize))
	var smalls, larges []float64
	for round := 0; round < fsyncRounds || len(smalls) < minLatencySamples || len(larges) < minLatencySamples; round++ {
		if smalls, err = small.block(smalls, block, maxFsync4KSamples); err != nil {
			return err
		}
		if larges, err = large.block(larges, block, maxLarge); err != nil {
			return err
		}
		if len(smalls) >= maxFsync4KSamples && len(larges) >= maxLarge {
			break
		}
	}
	c.Fsync4K = time.Duration(record(c, RunFsync4K, smalls))
	c.Fsync4KP99 = time.Duration(c.Runs[RunFsync4K].P99)
	c.Fsync1M = time.Duration(record(c, RunFsync1M, larges))
	c.Fsync1MP99 = time.Duration(c.Runs[RunFsync1M].P99)
	return nil
}

// appender appends n bytes + fdatasync to a file of its own.
type appender struct {
	m    *meter
	name string
	f    *os.File
	n    int64
}

func (m *meter) newAppender(name string, n int64) (*appender, error) {
	path := m.path(name)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, wrap(name, path, err)
	}
	return &appender{m: m, name: name, f: f, n: n}, nil
}

// append writes n bytes at the end of the file and fdatasyncs, returning
// the time both took in nanoseconds.
func (a *appender) append() (float64, error) {
	start := time.Now()
	if _, err := a.f.Write(a.m.data[:a.n]); err != nil {
		return 0, wrap(a.name, a.f.Name(), err)
	}
	if err := unix.Fdatasync(int(a.f.Fd())); err != nil {
		return 0, wrap(a.name, a.f.Name(), err)
	}
	return float64(time.Since(start).Nanoseconds()), nil
}

// block runs one untimed append, then timed ones for dur (at least 2, at
// most a fsyncRounds-th of maxN, and never beyond maxN in all), and returns
// samples with the new ones added.
func (a *appender) block(samples []float64, dur time.Duration, maxN int) ([]float64, error) {
	room := min(maxN-len(samples), max(2, (maxN+fsyncRounds-1)/fsyncRounds))
	if room <= 0 {
		return samples, nil
	}
	if _, err := a.append(); err != nil {
		return nil, err
	}
	more, err := repeat(a.m.ctx, dur, min(2, room), room, a.append)
	if err != nil {
		return nil, wrap(a.name, a.f.Name(), err)
	}
	return append(samples, more...), nil
}

// close closes and removes the file (the temp directory's removal would
// catch it too; this frees the space early).
func (a *appender) close() {
	a.f.Close()
	os.Remove(a.f.Name())
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
