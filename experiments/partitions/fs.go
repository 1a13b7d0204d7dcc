package main

import (
	"sync/atomic"
	"time"

	"github.com/varve/varve/benchmarks/storage"
)

// countingFS is the operating system's file system seen through
// storage.SyncTimer (which counts and times the fdatasyncs of the logs'
// files) that also counts and times directory fsyncs: a new log's first
// flush fsyncs its directory, so a thousand new partitions cost a
// thousand of them. Safe for concurrent use.
type countingFS struct {
	*storage.SyncTimer
	dirSyncs atomic.Int64
	dirNanos atomic.Int64
}

// SyncDir implements segment.FS.
func (c *countingFS) SyncDir(dir string) error {
	start := time.Now()
	err := c.SyncTimer.SyncDir(dir)
	c.dirNanos.Add(int64(time.Since(start)))
	c.dirSyncs.Add(1)
	return err
}

// DirSyncs returns how many directory fsyncs ran and their total time.
func (c *countingFS) DirSyncs() (int64, time.Duration) {
	return c.dirSyncs.Load(), time.Duration(c.dirNanos.Load())
}
