package diskmodel

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// seqWrite measures SeqWriteBps and PageCacheWriteBps. Each repetition
// writes FileSize bytes in 1 MiB write(2) calls to a new file and then
// fdatasyncs it; the time to the end of the writes gives the page-cache
// figure, the time to the end of the fdatasync the durable one. The
// previous repetition's file is removed before the next starts, outside the
// timing. The last file stays for the read phases.
func (m *meter) seqWrite(c *Calibration) error {
	var cached []float64
	rep := 0
	durable, err := repeat(m.ctx, m.opts.Duration, minSeqReps, maxSeqReps, func() (float64, error) {
		if m.seqPath != "" {
			if err := os.Remove(m.seqPath); err != nil {
				return 0, err
			}
		}
		rep++
		m.seqPath = m.path(fmt.Sprintf("seq-%d", rep))
		write, total, err := m.writeFile(m.seqPath)
		cached = append(cached, bps(m.opts.FileSize, write))
		return bps(m.opts.FileSize, total), err
	})
	if err != nil {
		return wrap(RunSeqWrite, m.seqPath, err)
	}
	c.SeqWriteBps = record(c, RunSeqWrite, durable)
	c.PageCacheWriteBps = record(c, RunPageCacheWrite, cached)
	return nil
}

// writeFile creates path and fills it with FileSize bytes, returning the
// time the writes took and the time including the final fdatasync.
func (m *meter) writeFile(path string) (write, total time.Duration, err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	start := time.Now()
	for off := int64(0); off < m.opts.FileSize; off += chunkSize {
		if err := m.ctx.Err(); err != nil {
			return 0, 0, err
		}
		if _, err := f.Write(m.data); err != nil {
			return 0, 0, err
		}
	}
	write = time.Since(start)
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return 0, 0, err
	}
	return write, time.Since(start), nil
}

// pageCacheRead measures PageCacheReadBps: one untimed pass brings the file
// into the page cache, then each repetition preads the whole file in 1 MiB
// chunks into a user buffer.
func (m *meter) pageCacheRead(c *Calibration) error {
	f, err := os.Open(m.seqPath)
	if err != nil {
		return wrap(RunPageCacheRead, m.seqPath, err)
	}
	defer f.Close()
	if _, err := m.readFile(f); err != nil {
		return wrap(RunPageCacheRead, m.seqPath, err)
	}
	samples, err := repeat(m.ctx, m.opts.Duration, minSeqReps, maxPageCacheReps, func() (float64, error) {
		d, err := m.readFile(f)
		return bps(m.opts.FileSize, d), err
	})
	if err != nil {
		return wrap(RunPageCacheRead, m.seqPath, err)
	}
	c.PageCacheReadBps = record(c, RunPageCacheRead, samples)
	return nil
}

// seqRead measures SeqReadBps from the device: with O_DIRECT where the file
// system accepts it, otherwise (or with DisableDirectIO) by evicting the
// file's pages before each buffered pass. It sets c.ReadMethod and m.direct.
func (m *meter) seqRead(c *Calibration) error {
	f, err := m.openDevice()
	if err != nil {
		return wrap(RunSeqRead, m.seqPath, err)
	}
	defer f.Close()
	c.ReadMethod = MethodFadvise
	if m.direct {
		c.ReadMethod = MethodDirect
	}
	samples, err := m.coldPasses(f)
	if err != nil {
		return wrap(RunSeqRead, m.seqPath, err)
	}
	c.SeqReadBps = record(c, RunSeqRead, samples)
	return nil
}

// coldBufferedRead measures ColdBufferedReadBps: evict, then buffered
// preads with the kernel's default readahead. After the first eviction it
// records how much of the file stayed resident (c.ColdResident).
func (m *meter) coldBufferedRead(c *Calibration) error {
	f, err := os.Open(m.seqPath)
	if err != nil {
		return wrap(RunColdBuffered, m.seqPath, err)
	}
	defer f.Close()
	evict(f, 0, 0)
	c.ColdResident = residentFraction(f, m.opts.FileSize)
	samples, err := m.coldPasses(f)
	if err != nil {
		return wrap(RunColdBuffered, m.seqPath, err)
	}
	c.ColdBufferedReadBps = record(c, RunColdBuffered, samples)
	return nil
}

// openDevice opens the test file for device reads: O_DIRECT unless refused
// or disabled, in which case m.direct is false and a plain file is returned.
func (m *meter) openDevice() (*os.File, error) {
	m.direct = false
	if !m.opts.DisableDirectIO {
		f, err := openDirect(m.seqPath, m.buf)
		if f != nil || err != nil {
			m.direct = f != nil
			return f, err
		}
	}
	return os.Open(m.seqPath)
}

// coldPasses times whole-file reads of f, evicting its pages before each.
func (m *meter) coldPasses(f *os.File) ([]float64, error) {
	return repeat(m.ctx, m.opts.Duration, minSeqReps, maxSeqReps, func() (float64, error) {
		evict(f, 0, 0)
		d, err := m.readFile(f)
		return bps(m.opts.FileSize, d), err
	})
}

// readFile preads FileSize bytes of f in 1 MiB chunks into the aligned
// buffer and returns the time taken.
func (m *meter) readFile(f *os.File) (time.Duration, error) {
	start := time.Now()
	for off := int64(0); off < m.opts.FileSize; off += chunkSize {
		if err := m.ctx.Err(); err != nil {
			return 0, err
		}
		if _, err := f.ReadAt(m.buf, off); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

// bps is bytes per second, or 0 for a zero duration.
func bps(bytes int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(bytes) / d.Seconds()
}
