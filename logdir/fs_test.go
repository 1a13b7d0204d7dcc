package logdir_test

import (
	"sync/atomic"

	"github.com/varve/varve/segment"
)

// blockingFS holds SyncDir calls while block is set, until release is
// closed, signalling entered once.
type blockingFS struct {
	segment.FS
	block   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (f *blockingFS) SyncDir(dir string) error {
	if f.block.Load() {
		select {
		case f.entered <- struct{}{}:
		default:
		}
		<-f.release
	}
	return f.FS.SyncDir(dir)
}
