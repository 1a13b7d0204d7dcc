package diskmodel

import (
	"context"
	crand "crypto/rand"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// meter holds what the measurements of one calibration share.
type meter struct {
	ctx  context.Context
	opts Options
	ws   string // private temp directory inside the calibrated dir
	// data is chunkSize bytes of random data to write: incompressible, so
	// a thin-provisioned or deduplicating device cannot skip it.
	data []byte
	// buf is a page-aligned chunkSize read buffer, valid for O_DIRECT.
	buf []byte
	// seqPath is the last sequential-write file, left for the read phases.
	seqPath string
	// direct says whether device reads use O_DIRECT; set by seqRead.
	direct bool
}

// Calibrate measures the device holding dir: sequential write and read
// bandwidth, page-cache bandwidth, fsync latency and random-read latency
// (see the package documentation for each method). It writes only inside a
// temp directory it creates in dir, and removes it before returning, also on
// error or cancellation. It does not read or write the cache; see
// LoadOrCalibrate.
func Calibrate(ctx context.Context, dir string, opts Options) (c Calibration, err error) {
	opts = opts.withDefaults()
	start := time.Now()
	c, err = describe(dir, opts, start)
	if err != nil {
		return Calibration{}, err
	}
	m, err := newMeter(ctx, dir, opts)
	if err != nil {
		return Calibration{}, err
	}
	defer func() {
		if cerr := m.close(); err == nil && cerr != nil {
			c, err = Calibration{}, cerr
		}
	}()
	for _, step := range []func(*Calibration) error{
		m.seqWrite, m.pageCacheRead, m.seqRead, m.coldBufferedRead, m.randRead,
		m.dropSeqFile, m.fsyncs,
	} {
		if err := step(&c); err != nil {
			return Calibration{}, err
		}
	}
	c.Elapsed = time.Since(start)
	return c, wrap("calibrate", dir, c.Validate())
}

// describe fills the identity of a calibration of dir: device, host, file
// system, load, options.
func describe(dir string, opts Options, start time.Time) (Calibration, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Calibration{}, wrap("calibrate", dir, err)
	}
	dev, err := deviceOf(abs)
	if err != nil {
		return Calibration{}, err
	}
	return Calibration{
		Version: cacheVersion, Dir: abs, Device: dev, Host: hostname(),
		FSType: fsType(abs), Taken: start.UTC(), Quick: opts.Quick,
		FileSize: opts.FileSize, LoadAvg1: loadAvg1(), CPUs: runtime.NumCPU(),
		Runs: map[string]Run{},
	}, nil
}

// newMeter creates the temp directory and the buffers.
func newMeter(ctx context.Context, dir string, opts Options) (*meter, error) {
	ws, err := os.MkdirTemp(dir, ".diskmodel-tmp-*")
	if err != nil {
		return nil, wrap("calibrate", dir, err)
	}
	m := &meter{ctx: ctx, opts: opts, ws: ws, data: make([]byte, chunkSize)}
	crand.Read(m.data) // never returns an error (Go 1.24+)
	if m.buf, err = alignedBuffer(int(chunkSize)); err != nil {
		os.RemoveAll(ws)
		return nil, wrap("calibrate", ws, err)
	}
	return m, nil
}

// close removes the temp directory and releases the buffers.
func (m *meter) close() error {
	err := wrap("cleanup", m.ws, os.RemoveAll(m.ws))
	if m.buf != nil {
		unix.Munmap(m.buf)
		m.buf = nil
	}
	return err
}

// dropSeqFile removes the sequential test file once the reads are done, so
// the fsync appends that follow write into space the file system has just
// freed, as each sequential-write repetition after the first does, and the
// calibration never holds more than one FileSize file at a time.
func (m *meter) dropSeqFile(*Calibration) error {
	return wrap("cleanup", m.seqPath, os.Remove(m.seqPath))
}

// path names a file in the temp directory.
func (m *meter) path(name string) string { return filepath.Join(m.ws, name) }

// record stores a run under name and returns its median.
func record(c *Calibration, name string, samples []float64) float64 {
	r := summarize(samples)
	c.Runs[name] = r
	return r.Median
}
