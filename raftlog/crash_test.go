package raftlog

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

// writer is the write side shared by Storage and raft.MemoryStorage.
type writer interface {
	Append([]*raftpb.Entry) error
	SetHardState(*raftpb.HardState) error
	CreateSnapshot(uint64, *raftpb.ConfState, []byte) (*raftpb.Snapshot, error)
	Compact(uint64) error
	ApplySnapshot(*raftpb.Snapshot) error
}

// stepFS is a FaultFS that also fails the n-th fsync (file or directory)
// and every one after it: a crash at that fsync.
type stepFS struct {
	*segmenttest.FaultFS
	mu     sync.Mutex
	syncs  int
	failAt int // 0: never
}

func (f *stepFS) tick() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.syncs++
	if f.failAt > 0 && f.syncs >= f.failAt {
		return segmenttest.ErrInjected
	}
	return nil
}

func (f *stepFS) OpenFile(name string, flag int, perm os.FileMode) (segment.File, error) {
	file, err := f.FaultFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return stepFile{file, f}, nil
}

func (f *stepFS) SyncDir(dir string) error {
	if err := f.tick(); err != nil {
		return err
	}
	return f.FaultFS.SyncDir(dir)
}

type stepFile struct {
	segment.File
	fs *stepFS
}

func (f stepFile) Sync() error {
	if err := f.fs.tick(); err != nil {
		return err
	}
	return f.File.Sync()
}

func ents(from, to, term uint64) []*raftpb.Entry {
	var out []*raftpb.Entry
	for i := from; i <= to; i++ {
		out = append(out, &raftpb.Entry{Index: new(i), Term: new(term), Data: fmt.Appendf(nil, "entry %d/%d", i, term)})
	}
	return out
}

// crashCase is a call that a crash may cut, the state before it, and the
// states a crash may leave: states[0] is the state after the call, the
// only one allowed once the call returned. Each state is built from
// scratch on a MemoryStorage.
type crashCase struct {
	name   string
	setup  func(writer) error
	op     func(writer) error
	states []func(writer) error
}

func must(errs ...error) error { return errors.Join(errs...) }

// prefixes returns, for k = n down to 0, the state before plus the first
// k of the entries [from, from+n) of term: what a torn Append may leave
// (segment recovery keeps the whole batches before a torn one).
func prefixes(before func(writer) error, from, n, term uint64) []func(writer) error {
	var out []func(writer) error
	for k := n; k+1 > 0; k-- {
		out = append(out, func(w writer) error {
			if k == 0 {
				return before(w)
			}
			return must(before(w), w.Append(ents(from, from+k-1, term)))
		})
	}
	return out
}

func crashCases() []crashCase {
	cs := &raftpb.ConfState{Voters: []uint64{1, 2, 3}}
	hs := func(w writer) error { return w.SetHardState(newHardState(1, 1, 4)) }
	base := func(w writer) error { return must(w.Append(ents(1, 12, 1)), hs(w)) }
	snapshot := func(w writer) error {
		_, err := w.CreateSnapshot(9, cs, []byte("state at 9"))
		return err
	}
	snapCompact := func(w writer) error { return must(snapshot(w), w.Compact(7)) }
	committed10 := func(w writer) error { return must(base(w), w.SetHardState(newHardState(1, 1, 10))) }
	then := func(fs ...func(writer) error) func(writer) error {
		return func(w writer) error {
			var errs []error
			for _, f := range fs {
				errs = append(errs, f(w))
			}
			return must(errs...)
		}
	}
	// The overwrite's conflict point is 8, above commit 4: a torn
	// overwrite leaves 1..7 and a prefix of the new entries (Kafka:
	// KIP-595, a follower truncates its diverging suffix first).
	truncated := func(w writer) error { return must(w.Append(ents(1, 7, 1)), hs(w)) }
	overwrite := append(prefixes(truncated, 8, 7, 2), base)
	return []crashCase{
		{"append", base,
			func(w writer) error { return w.Append(ents(13, 16, 1)) },
			prefixes(base, 13, 4, 1)},
		{"append_overwrite", base,
			func(w writer) error { return w.Append(ents(8, 14, 2)) },
			overwrite},
		{"set_hard_state", base,
			func(w writer) error { return w.SetHardState(newHardState(2, 3, 11)) },
			[]func(writer) error{then(base, func(w writer) error { return w.SetHardState(newHardState(2, 3, 11)) }), base}},
		// Kafka: KIP-630 a snapshot, then the log start offset raised.
		{"snapshot_compact", committed10, snapCompact,
			[]func(writer) error{then(committed10, snapCompact), committed10, then(committed10, snapshot)}},
		// Kafka: KIP-630 a follower loads the leader's snapshot.
		{"apply_snapshot", base,
			func(w writer) error { return w.ApplySnapshot(testSnap(30, 3, cs)) },
			[]func(writer) error{then(base, func(w writer) error { return w.ApplySnapshot(testSnap(30, 3, cs)) }), base}},
	}
}

func testSnap(index, term uint64, cs *raftpb.ConfState) *raftpb.Snapshot {
	return &raftpb.Snapshot{Data: []byte("leader state"), Metadata: &raftpb.SnapshotMetadata{Index: new(index), Term: new(term), ConfState: cs}}
}

// quiet drops the logs' recovery reports, which every crash produces.
var quiet = slog.New(slog.DiscardHandler)

// TestCrash cuts every call at every byte it writes, at every rename or
// remove, and at every fsync; after a power loss and a reopen the storage
// holds the state before the call or after it, and always the state after
// a call that returned. A torn Append may also keep a prefix of its new
// entries, and a torn overwriting Append may have removed the
// uncommitted conflicting suffix: the states raft tolerates for an
// append that it was not told had finished.
func TestCrash(t *testing.T) {
	for _, c := range crashCases() {
		t.Run(c.name, func(t *testing.T) {
			var runs int
			for _, kind := range []string{"write", "op", "sync"} {
				step := 1
				if testing.Short() && kind == "write" {
					step = 13 // a sample of the byte positions
				}
				for n := 0; ; n += step {
					runs++
					if acked := crashOnce(t, c, kind, n); acked {
						break
					}
					if n > 100000 {
						t.Fatalf("%s %d: the call never succeeds", kind, n)
					}
				}
			}
			t.Logf("%d crash points", runs)
		})
	}
}

// crashOnce runs c's call with a fault of kind at step n, crashes, reopens
// and checks the state. It reports whether the call returned success.
func crashOnce(t *testing.T, c crashCase, kind string, n int) bool {
	t.Helper()
	dir := t.TempDir()
	fs := &stepFS{FaultFS: segmenttest.NewFaultFS()}
	fs.SkipSyncs(true) // Crash still forgets what no Sync covered
	st, err := Open(dir, Options{FS: fs, SegmentBytes: 300, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.setup(st); err != nil {
		t.Fatalf("setup: %v", err)
	}
	switch kind {
	case "write":
		fs.CutWritesAfter(int64(n))
	case "op":
		fs.FailOpsAfter(int64(n))
	case "sync":
		fs.mu.Lock()
		fs.syncs, fs.failAt = 0, n+1
		fs.mu.Unlock()
	}
	acked := c.op(st) == nil
	// The process dies: nothing more reaches the disk.
	fs.CutWritesAfter(0)
	fs.FailOpsAfter(0)
	fs.FailSyncs(true)
	st.Close()
	if err := fs.Crash(); err != nil {
		t.Fatal(err)
	}
	re, err := Open(dir, Options{FS: segmenttest.NewFaultFS(), SegmentBytes: 300, Logger: quiet})
	if err != nil {
		t.Fatalf("%s %d: reopen: %v", kind, n, err)
	}
	defer re.Close()
	states := c.states
	if acked {
		states = states[:1]
	}
	var diffs []error
	for _, state := range states {
		ms := raft.NewMemoryStorage()
		if err := state(ms); err != nil {
			t.Fatal(err)
		}
		err := compareStorages(ms, re, 64)
		if err == nil {
			return acked
		}
		diffs = append(diffs, err)
	}
	t.Fatalf("%s fault at step %d (acked %v): no allowed state: %v", kind, n, acked, diffs)
	return acked
}
