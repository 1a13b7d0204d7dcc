package logdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/varve/varve/segment"
)

// probeFile is the file the probe of an offline directory writes, syncs
// and removes.
const probeFile = ".varve-dir-probe"

// logDir is one configured log directory.
//
// Its file system reports every failed write, fsync, truncation or file
// creation: the first one takes the directory offline (Kafka's
// LogDirFailureChannel). While it is offline, writes through it fail at
// once with ErrOffline; the probe loop closes its logs, probes the
// directory and, once a probe succeeds, reopens them (recovery runs).
type logDir struct {
	path    string
	m       *Manager
	inner   segment.FS // the manager's FS, used directly by the probe
	fs      *dirFS
	offline atomic.Bool
	// shutdownEpoch is the broker epoch the clean-shutdown marker held
	// at start, -1 when there was none or it did not read. Written once
	// while the directory loads, before Open returns.
	shutdownEpoch int64

	// offlineParts are the partitions whose logs were closed when the
	// directory went offline, with what reopening them needs.
	// REQUIRES m.mu.
	offlineParts map[segment.TopicPartition]offlinePart
}

type offlinePart struct {
	id            TopicID
	recoveryPoint int64
	startOffset   int64
}

func newLogDir(path string, m *Manager) *logDir {
	d := &logDir{path: path, m: m, inner: m.cfg.FS, shutdownEpoch: -1, offlineParts: map[segment.TopicPartition]offlinePart{}}
	d.fs = &dirFS{inner: m.cfg.FS, d: d}
	return d
}

func (d *logDir) isOffline() bool { return d.offline.Load() }

// offlineErr is what a write to an offline directory returns.
func (d *logDir) offlineErr() error { return fmt.Errorf("%s: %w", d.path, ErrOffline) }

// fail takes the directory offline after an I/O error: one ERROR line
// naming the directory and the cause, then the probe loop takes over.
// It returns err, so that callers can write `return d.fail(err)`.
func (d *logDir) fail(err error) error {
	if err == nil || errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrExist) || errors.Is(err, ErrOffline) {
		return err
	}
	if d.offline.CompareAndSwap(false, true) {
		d.m.cfg.Logger.Error("log directory offline after an I/O error; its partitions answer KAFKA_STORAGE_ERROR until a probe succeeds",
			"dir", d.path, "err", err)
		d.m.wakeProbe()
	}
	return err
}

// writeMarker writes the clean-shutdown marker with the broker's
// epoch (Kafka: LogManager.shutdown(brokerEpoch)).
func (d *logDir) writeMarker() error {
	epoch := int64(-1)
	if d.m.cfg.BrokerEpoch != nil {
		epoch = max(d.m.cfg.BrokerEpoch(), -1)
	}
	return segment.WriteCleanShutdownEpoch(d.fs, d.path, epoch)
}

// probe writes, fsyncs and removes a small file directly on the
// manager's FS: the directory is usable again when all three succeed.
func (d *logDir) probe() error {
	path := filepath.Join(d.path, probeFile)
	f, err := d.inner.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteAt([]byte("probe\n"), 0)
	if err == nil {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close(), d.inner.Remove(path))
	if err == nil {
		err = d.inner.SyncDir(d.path)
	}
	return err
}

// dirFS is a log directory's view of the manager's FS: failures of
// writes take the directory offline, and writes to an offline directory
// fail at once. Reads, renames and removals pass through.
type dirFS struct {
	inner segment.FS
	d     *logDir
}

const writeFlags = os.O_WRONLY | os.O_RDWR | os.O_CREATE | os.O_TRUNC | os.O_APPEND

// OpenFile implements segment.FS.
func (f *dirFS) OpenFile(name string, flag int, perm os.FileMode) (segment.File, error) {
	writing := flag&writeFlags != 0
	if writing && f.d.isOffline() {
		return nil, f.d.offlineErr()
	}
	file, err := f.inner.OpenFile(name, flag, perm)
	if err != nil {
		if writing {
			f.d.fail(err)
		}
		return nil, err
	}
	return &dirFile{File: file, d: f.d}, nil
}

// Rename implements segment.FS.
func (f *dirFS) Rename(oldpath, newpath string) error { return f.inner.Rename(oldpath, newpath) }

// Remove implements segment.FS.
func (f *dirFS) Remove(name string) error { return f.inner.Remove(name) }

// MkdirAll implements segment.FS.
func (f *dirFS) MkdirAll(dir string, perm os.FileMode) error {
	if f.d.isOffline() {
		return f.d.offlineErr()
	}
	return f.d.fail(f.inner.MkdirAll(dir, perm))
}

// ReadDir implements segment.FS.
func (f *dirFS) ReadDir(dir string) ([]os.DirEntry, error) { return f.inner.ReadDir(dir) }

// SyncDir implements segment.FS.
func (f *dirFS) SyncDir(dir string) error {
	if f.d.isOffline() {
		return f.d.offlineErr()
	}
	return f.d.fail(f.inner.SyncDir(dir))
}

// dirFile reports its write failures to its directory.
type dirFile struct {
	segment.File
	d *logDir
}

func (f *dirFile) WriteAt(p []byte, off int64) (int, error) {
	if f.d.isOffline() {
		return 0, f.d.offlineErr()
	}
	n, err := f.File.WriteAt(p, off)
	return n, f.d.fail(err)
}

func (f *dirFile) Sync() error {
	if f.d.isOffline() {
		return f.d.offlineErr()
	}
	return f.d.fail(f.File.Sync())
}

func (f *dirFile) Truncate(size int64) error {
	if f.d.isOffline() {
		return f.d.offlineErr()
	}
	return f.d.fail(f.File.Truncate(size))
}
