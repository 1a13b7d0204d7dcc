package logdir_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

// Kafka: OffsetCheckpointFile and every other durable file are written to
// a temp file, fsynced, renamed over the old one, and the directory
// fsynced. A crash at every step of that sequence (and mid-write) leaves
// the old content or the new one, never a torn file, and the next write
// succeeds over whatever the crash left.
func TestCheckpointWriteCrashAtEveryStep(t *testing.T) {
	oldCP := map[segment.TopicPartition]int64{tp("a", 0): 5, tp("b", 1): 7}
	newCP := map[segment.TopicPartition]int64{tp("a", 0): 50, tp("b", 1): 70, tp("c", 2): 9}
	var seen []string
	for crashAt := 0; ; crashAt++ {
		dir := t.TempDir()
		path := filepath.Join(dir, segment.RecoveryPointCheckpointFile)
		if err := segment.WriteCheckpoint(nil, path, oldCP); err != nil {
			t.Fatal(err)
		}
		fault := segmenttest.NewFaultFS()
		fs := newStepFS(fault, crashAt)
		err := segment.WriteFileAtomic(fs, path, segment.EncodeCheckpoint(newCP))
		if err == nil {
			seen = fs.steps
			if err := fault.Crash(); err != nil {
				t.Fatal(err)
			}
			checkCheckpoint(t, path, newCP)
			break
		}
		if !errors.Is(err, errCrash) {
			t.Fatalf("crash at step %d: %v", crashAt, err)
		}
		if err := fault.Crash(); err != nil {
			t.Fatal(err)
		}
		got, rerr := segment.ReadCheckpoint(nil, path)
		if rerr != nil {
			t.Fatalf("crash at step %d (%v): torn checkpoint: %v", crashAt, fs.steps, rerr)
		}
		if !equalCP(got, oldCP) && !equalCP(got, newCP) {
			t.Fatalf("crash at step %d: checkpoint %v is neither the old nor the new", crashAt, got)
		}
		// The next write after a restart replaces whatever was left.
		if err := segment.WriteFileAtomic(nil, path, segment.EncodeCheckpoint(newCP)); err != nil {
			t.Fatalf("write after a crash at step %d: %v", crashAt, err)
		}
		checkCheckpoint(t, path, newCP)
	}
	want := []string{"open", "write", "fsync", "rename", "fsync dir"}
	if len(seen) != len(want) {
		t.Fatalf("steps %q, want %q", seen, want)
	}
	for i, w := range want {
		if !strings.HasPrefix(seen[i], w) {
			t.Fatalf("step %d is %q, want %q", i, seen[i], w)
		}
	}
}

func checkCheckpoint(t *testing.T, path string, want map[segment.TopicPartition]int64) {
	t.Helper()
	got, err := segment.ReadCheckpoint(nil, path)
	if err != nil || !equalCP(got, want) {
		t.Fatalf("checkpoint %v (%v), want %v", got, err, want)
	}
}

func equalCP(a, b map[segment.TopicPartition]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Kafka: LogManager.shutdown writes the checkpoints, then the
// clean-shutdown marker. A crash at every step of the shutdown (log
// flushes and closes, each checkpoint's temp, fsync, rename and dir
// fsync, then the marker's) leaves a directory that reopens with every
// acknowledged record; the marker is only ever present with complete
// checkpoints beside it, and without it recovery runs.
func TestShutdownCrashAtEveryStep(t *testing.T) {
	const parts, batches = 3, 4
	steps := 0
	for crashAt := 0; ; crashAt++ {
		dir := t.TempDir()
		fault := segmenttest.NewFaultFS()
		fault.SkipSyncs(true) // still counted as synced: Crash keeps what an fsync would have
		fs := newStepFS(fault, -1)
		m := openManager(t, []string{dir}, func(c *logdir.Config) {
			c.FS = fs
			c.Logger = slog.New(slog.DiscardHandler)
			c.LogConfig = func(string) segment.Config {
				c := segment.DefaultConfig()
				c.SegmentBytes, c.FlushMessages = 2048, 1
				return c
			}
		})
		for p := int32(0); p < parts; p++ {
			pl, err := m.Create(tp("s", p), logdir.TopicID{byte(p + 1)})
			if err != nil {
				t.Fatal(err)
			}
			appendN(t, pl.Log, batches) // acknowledged: flush.messages=1
		}
		fs.mu.Lock()
		fs.crashAt, fs.n, fs.steps = crashAt, 0, nil
		fs.mu.Unlock()
		err := m.Close()
		if err != nil && !errors.Is(err, errCrash) && !errors.Is(err, logdir.ErrOffline) {
			t.Fatalf("crash at step %d: close: %v", crashAt, err)
		}
		if err := fault.Crash(); err != nil {
			t.Fatal(err)
		}
		checkAfterShutdownCrash(t, dir, crashAt, err == nil, parts, batches)
		if err == nil {
			steps = crashAt
			break
		}
	}
	t.Logf("shutdown crashed at each of its %d steps", steps)
	if steps < 10 {
		t.Fatalf("the shutdown took %d steps: the test did not reach the checkpoints", steps)
	}
}

// checkAfterShutdownCrash reopens dir after a crash during Close.
func checkAfterShutdownCrash(t *testing.T, dir string, crashAt int, closed bool, parts, batches int) {
	t.Helper()
	_, markerErr := os.Stat(filepath.Join(dir, segment.CleanShutdownFile))
	marker := markerErr == nil
	if closed && !marker {
		t.Fatalf("a completed shutdown left no marker")
	}
	if marker {
		for _, name := range []string{segment.RecoveryPointCheckpointFile, segment.LogStartOffsetCheckpointFile} {
			cp, err := segment.ReadCheckpoint(nil, filepath.Join(dir, name))
			if err != nil || len(cp) != parts {
				t.Fatalf("crash at step %d: marker present but %s is %v (%v)", crashAt, name, cp, err)
			}
		}
	}
	m := openManager(t, []string{dir}, func(c *logdir.Config) { c.Logger = slog.New(slog.DiscardHandler) })
	defer m.Close()
	logs := m.Logs()
	if len(logs) != parts {
		t.Fatalf("crash at step %d: %d partitions reopened, want %d", crashAt, len(logs), parts)
	}
	for _, pl := range logs {
		if pl.Log.Recovery().CleanShutdown != marker {
			t.Fatalf("crash at step %d: marker %v but the log reopened clean=%v", crashAt, marker, pl.Log.Recovery().CleanShutdown)
		}
		if end := pl.Log.EndOffset(); end != int64(2*batches) {
			t.Fatalf("crash at step %d: %s ends at %d, want %d acknowledged", crashAt, pl.TP, end, 2*batches)
		}
		if n := countBatches(t, pl.Log); n != batches {
			t.Fatalf("crash at step %d: %s reads %d batches, want %d", crashAt, pl.TP, n, batches)
		}
		if pl.TopicID != (logdir.TopicID{byte(pl.TP.Partition + 1)}) {
			t.Fatalf("crash at step %d: %s topic id %v", crashAt, pl.TP, pl.TopicID)
		}
	}
}

// A crash at every step of creating a partition (mkdir, partition.metadata
// through its temp file, the segment's files) leaves either no partition
// or one whose partition.metadata reads back whole.
func TestCreateCrashAtEveryStep(t *testing.T) {
	id := logdir.TopicID{0xaa, 0xbb}
	for crashAt := 0; ; crashAt++ {
		dir := t.TempDir()
		fault := segmenttest.NewFaultFS()
		fs := newStepFS(fault, crashAt)
		m := openManager(t, []string{dir}, func(c *logdir.Config) {
			c.FS = fs
			c.Logger = slog.New(slog.DiscardHandler)
		})
		fs.mu.Lock()
		fs.n = 0
		fs.mu.Unlock()
		_, err := m.Create(tp("c", 0), id)
		m.Close()
		if err := fault.Crash(); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(dir, segment.CleanShutdownFile))
		data, rerr := os.ReadFile(filepath.Join(dir, "c-0", logdir.PartitionMetadataFile))
		if rerr == nil && !bytes.Equal(data, []byte("version: 0\ntopic_id: "+id.String())) {
			t.Fatalf("crash at step %d: torn partition.metadata %q", crashAt, data)
		}
		r := openManager(t, []string{dir}, func(c *logdir.Config) { c.Logger = slog.New(slog.DiscardHandler) })
		pl, ok := r.Get(tp("c", 0))
		if ok && rerr == nil && pl.TopicID != id {
			t.Fatalf("crash at step %d: topic id %v", crashAt, pl.TopicID)
		}
		r.Close()
		if err == nil {
			if !ok {
				t.Fatal("created partition not reopened")
			}
			break
		}
	}
}

// countBatches reads a log from its start to its end.
func countBatches(t *testing.T, l *segment.Log) int {
	t.Helper()
	n := 0
	for off := l.StartOffset(); off < l.EndOffset(); {
		buf, err := l.ReadBytes(off, 1<<20)
		if err != nil {
			t.Fatalf("read %s at %d: %v", l.Dir(), off, err)
		}
		bs := segmenttest.Batches(t, buf)
		if len(bs) == 0 {
			t.Fatalf("read %s at %d: no batch", l.Dir(), off)
		}
		n += len(bs)
		h, _ := record.ParseHeader(bs[len(bs)-1])
		off = h.NextOffset()
	}
	return n
}
