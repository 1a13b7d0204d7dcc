package storage

import (
	"os"
	"sync/atomic"
	"time"

	"github.com/varve/varve/segment"
)

// SyncTimer is a segment.FS over the operating system's file system that
// counts the fsyncs (fdatasync) of the log's files and the time they
// take, so an fsync-per-batch workload can tell the .log file's own
// fdatasync apart from everything else an append does (the indexes are
// memory-mapped and flushed with msync, outside this seam). It is safe for
// concurrent use: the log's flusher goroutine syncs sealed segments.
type SyncTimer struct {
	segment.OSFS
	syncs atomic.Int64
	nanos atomic.Int64
}

// OpenFile implements segment.FS.
func (t *SyncTimer) OpenFile(name string, flag int, perm os.FileMode) (segment.File, error) {
	f, err := t.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return timedFile{File: f, t: t}, nil
}

// Syncs returns how many file syncs ran and their total time.
func (t *SyncTimer) Syncs() (int64, time.Duration) {
	return t.syncs.Load(), time.Duration(t.nanos.Load())
}

type timedFile struct {
	segment.File
	t *SyncTimer
}

func (f timedFile) Sync() error {
	start := time.Now()
	err := f.File.Sync()
	f.t.nanos.Add(int64(time.Since(start)))
	f.t.syncs.Add(1)
	return err
}
