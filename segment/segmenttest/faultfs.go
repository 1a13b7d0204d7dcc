// Package segmenttest holds test helpers for code built on package
// segment: a file system that injects disk faults, and batch makers.
package segmenttest

import (
	"errors"
	"os"
	"path/filepath"
	"sync"

	"github.com/varve/varve/segment"
)

// ErrInjected is the error every injected fault returns.
var ErrInjected = errors.New("injected fault")

// FaultFS wraps the operating system's file system and, on request, cuts
// writes short, fails fsyncs or directory operations, and simulates a
// power loss by forgetting whatever was not fsynced. It is safe for
// concurrent use.
type FaultFS struct {
	mu sync.Mutex
	// WriteBudget, when >= 0, is how many more bytes writes may store;
	// the write that exceeds it stores only what fits and fails. -1 is
	// unlimited.
	writeBudget int64
	failSync    bool
	skipSync    bool
	// opBudget, when >= 0, is how many more Rename/Remove calls succeed;
	// the next fails without doing anything. -1 is unlimited.
	opBudget int64
	synced   map[string]int64 // path -> bytes known durable
	files    map[*faultFile]bool
	ops      []string
}

// NewFaultFS returns a FaultFS that injects nothing until told to.
func NewFaultFS() *FaultFS {
	return &FaultFS{writeBudget: -1, opBudget: -1, synced: map[string]int64{}, files: map[*faultFile]bool{}}
}

// CutWritesAfter lets n more bytes be written, then fails every write.
func (f *FaultFS) CutWritesAfter(n int64) { f.mu.Lock(); f.writeBudget = n; f.mu.Unlock() }

// FailSyncs makes every later Sync and SyncDir fail (or succeed again).
func (f *FaultFS) FailSyncs(fail bool) { f.mu.Lock(); f.failSync = fail; f.mu.Unlock() }

// SkipSyncs turns every Sync and SyncDir into a no-op that reports
// success (and still counts the data as synced): for tests that exercise
// recovery logic, not durability, and must not wait for the disk.
func (f *FaultFS) SkipSyncs(skip bool) { f.mu.Lock(); f.skipSync = skip; f.mu.Unlock() }

// FailOpsAfter lets n more Rename/Remove calls succeed, then fails them
// all: a crash between two steps of a multi-step file operation.
func (f *FaultFS) FailOpsAfter(n int64) { f.mu.Lock(); f.opBudget = n; f.mu.Unlock() }

// Ops lists the Rename and Remove calls made so far, as "rename a b" and
// "remove a" with base names, for tests that count steps.
func (f *FaultFS) Ops() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ops...)
}

// Crash simulates a power loss after the process died: every file
// written through f is cut back to the size it had at its last fsync.
// (A real disk may also keep part of the unsynced data; tests that cut
// files at every byte cover that.) Files never synced become empty.
func (f *FaultFS) Crash() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for path, n := range f.synced {
		fi, err := os.Stat(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if fi.Size() > n {
			if err := os.Truncate(path, n); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *FaultFS) op(desc string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.opBudget == 0 {
		return ErrInjected
	}
	if f.opBudget > 0 {
		f.opBudget--
	}
	f.ops = append(f.ops, desc)
	return nil
}

// OpenFile implements segment.FS.
func (f *FaultFS) OpenFile(name string, flag int, perm os.FileMode) (segment.File, error) {
	inner, err := segment.OSFS{}.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	if _, ok := f.synced[name]; !ok || flag&os.O_TRUNC != 0 {
		size, _ := inner.Size()
		f.synced[name] = size
	}
	ff := &faultFile{File: inner, fs: f, path: name}
	f.files[ff] = true
	f.mu.Unlock()
	return ff, nil
}

// Rename implements segment.FS.
func (f *FaultFS) Rename(oldpath, newpath string) error {
	if err := f.op("rename " + filepath.Base(oldpath) + " " + filepath.Base(newpath)); err != nil {
		return err
	}
	if err := os.Rename(oldpath, newpath); err != nil {
		return err
	}
	f.mu.Lock()
	if n, ok := f.synced[oldpath]; ok {
		f.synced[newpath] = n
		delete(f.synced, oldpath)
	}
	for ff := range f.files {
		if ff.path == oldpath {
			ff.path = newpath
		}
	}
	f.mu.Unlock()
	return nil
}

// Remove implements segment.FS.
func (f *FaultFS) Remove(name string) error {
	if err := f.op("remove " + filepath.Base(name)); err != nil {
		return err
	}
	return os.Remove(name)
}

// MkdirAll implements segment.FS.
func (f *FaultFS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }

// ReadDir implements segment.FS.
func (f *FaultFS) ReadDir(dir string) ([]os.DirEntry, error) { return os.ReadDir(dir) }

// SyncDir implements segment.FS.
func (f *FaultFS) SyncDir(dir string) error {
	f.mu.Lock()
	fail, skip := f.failSync, f.skipSync
	f.mu.Unlock()
	if fail {
		return ErrInjected
	}
	if skip {
		return nil
	}
	return segment.OSFS{}.SyncDir(dir)
}

type faultFile struct {
	segment.File
	fs   *FaultFS
	path string
}

func (ff *faultFile) WriteAt(p []byte, off int64) (int, error) {
	ff.fs.mu.Lock()
	budget := ff.fs.writeBudget
	if budget >= 0 {
		ff.fs.writeBudget = max(0, budget-int64(len(p)))
	}
	ff.fs.mu.Unlock()
	if budget >= 0 && int64(len(p)) > budget {
		n, _ := ff.File.WriteAt(p[:budget], off)
		return n, ErrInjected
	}
	return ff.File.WriteAt(p, off)
}

func (ff *faultFile) Sync() error {
	ff.fs.mu.Lock()
	fail, skip := ff.fs.failSync, ff.fs.skipSync
	ff.fs.mu.Unlock()
	if fail {
		return ErrInjected
	}
	if !skip {
		if err := ff.File.Sync(); err != nil {
			return err
		}
	}
	size, err := ff.File.Size()
	if err != nil {
		return err
	}
	ff.fs.mu.Lock()
	ff.fs.synced[ff.path] = size // ff.path follows renames
	ff.fs.mu.Unlock()
	return nil
}

func (ff *faultFile) Close() error {
	ff.fs.mu.Lock()
	delete(ff.fs.files, ff)
	ff.fs.mu.Unlock()
	return ff.File.Close()
}

func (ff *faultFile) Truncate(size int64) error {
	if err := ff.File.Truncate(size); err != nil {
		return err
	}
	ff.fs.mu.Lock()
	if n, ok := ff.fs.synced[ff.path]; ok && n > size {
		ff.fs.synced[ff.path] = size
	}
	ff.fs.mu.Unlock()
	return nil
}
