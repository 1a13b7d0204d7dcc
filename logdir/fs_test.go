package logdir_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
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

// errCrash is what every operation returns once stepFS has crashed.
var errCrash = errors.New("crashed")

// stepFS numbers every mutating file operation (a create, a write, an
// fsync, a truncation, a rename, a removal, a directory fsync) and, from
// step crashAt on, fails them all, as a process that died there: the
// write at crashAt stores half its bytes first. With a FaultFS below,
// Crash then forgets whatever was not fsynced.
type stepFS struct {
	segment.FS
	mu      sync.Mutex
	crashAt int // -1: never
	n       int
	steps   []string
}

func newStepFS(inner segment.FS, crashAt int) *stepFS {
	return &stepFS{FS: inner, crashAt: crashAt}
}

func (s *stepFS) step(what string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	if s.crashAt >= 0 && s.n > s.crashAt {
		return errCrash
	}
	s.steps = append(s.steps, what)
	return nil
}

func (s *stepFS) OpenFile(name string, flag int, perm os.FileMode) (segment.File, error) {
	if flag&(os.O_CREATE|os.O_TRUNC|os.O_WRONLY|os.O_RDWR) != 0 {
		if err := s.step("open " + filepath.Base(name)); err != nil {
			return nil, err
		}
	}
	f, err := s.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &stepFile{File: f, s: s}, nil
}

func (s *stepFS) Rename(a, b string) error {
	if err := s.step("rename " + filepath.Base(a) + " " + filepath.Base(b)); err != nil {
		return err
	}
	return s.FS.Rename(a, b)
}

func (s *stepFS) Remove(name string) error {
	if err := s.step("remove " + filepath.Base(name)); err != nil {
		return err
	}
	return s.FS.Remove(name)
}

func (s *stepFS) SyncDir(dir string) error {
	if err := s.step("fsync dir " + filepath.Base(dir)); err != nil {
		return err
	}
	return s.FS.SyncDir(dir)
}

type stepFile struct {
	segment.File
	s *stepFS
}

func (f *stepFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.s.step("write " + filepath.Base(f.Name())); err != nil {
		n, _ := f.File.WriteAt(p[:len(p)/2], off) // torn
		return n, err
	}
	return f.File.WriteAt(p, off)
}

func (f *stepFile) Sync() error {
	if err := f.s.step("fsync " + filepath.Base(f.Name())); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *stepFile) Truncate(size int64) error {
	if err := f.s.step("truncate " + filepath.Base(f.Name())); err != nil {
		return err
	}
	return f.File.Truncate(size)
}

// syncBuffer is a log sink safe for the manager's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
