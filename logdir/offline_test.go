package logdir_test

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

// diskFullFS fails every write and fsync under one directory while full
// is set, as a full disk does.
type diskFullFS struct {
	segment.FS
	dir  string
	full atomic.Bool
}

func (f *diskFullFS) hit(name string) bool {
	return f.full.Load() && strings.HasPrefix(name, f.dir+string(filepath.Separator))
}

func (f *diskFullFS) OpenFile(name string, flag int, perm os.FileMode) (segment.File, error) {
	if flag&os.O_CREATE != 0 && f.hit(name) {
		return nil, segmenttest.ErrInjected
	}
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &diskFullFile{File: file, fs: f, name: name}, nil
}

type diskFullFile struct {
	segment.File
	fs   *diskFullFS
	name string
}

func (f *diskFullFile) WriteAt(p []byte, off int64) (int, error) {
	if f.fs.hit(f.name) {
		return 0, segmenttest.ErrInjected
	}
	return f.File.WriteAt(p, off)
}

func (f *diskFullFile) Sync() error {
	if f.fs.hit(f.name) {
		return segmenttest.ErrInjected
	}
	return f.File.Sync()
}

// events records what the manager tells the layer above.
type events struct {
	mu      sync.Mutex
	offline []segment.TopicPartition
	online  []logdir.PartitionLog
}

func (e *events) snapshot() ([]segment.TopicPartition, []logdir.PartitionLog) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]segment.TopicPartition(nil), e.offline...), append([]logdir.PartitionLog(nil), e.online...)
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Kafka: LogDirFailureChannel: the first I/O error in a log directory
// takes it offline, with one ERROR line naming it and the cause; its
// partitions answer KAFKA_STORAGE_ERROR and those of other directories
// keep working. Beyond Kafka: a probe brings the directory back when
// writes succeed again, reopening its logs (recovery runs) without a
// restart.
func TestDiskFullTakesDirOfflineAndProbeBringsItBack(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	fs := &diskFullFS{FS: segment.OSFS{}, dir: d1}
	var logs syncBuffer
	var ev events
	m := openManager(t, []string{d1, d2}, func(c *logdir.Config) {
		c.FS = fs
		c.ProbeInterval = 20 * time.Millisecond
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		c.LogConfig = func(string) segment.Config { c := segment.DefaultConfig(); c.FlushMessages = 1; return c }
		c.OnOffline = func(tps []segment.TopicPartition) {
			ev.mu.Lock()
			ev.offline = append(ev.offline, tps...)
			ev.mu.Unlock()
		}
		c.OnOnline = func(pls []logdir.PartitionLog) { ev.mu.Lock(); ev.online = append(ev.online, pls...); ev.mu.Unlock() }
	})
	defer m.Close()
	a, _ := m.Create(tp("full", 0), logdir.TopicID{1}) // least loaded: d1
	b, _ := m.Create(tp("full", 1), logdir.TopicID{1}) // d2
	if filepath.Dir(a.Log.Dir()) != d1 || filepath.Dir(b.Log.Dir()) != d2 {
		t.Fatalf("placement: %s %s", a.Log.Dir(), b.Log.Dir())
	}
	appendN(t, a.Log, 3)

	fs.full.Store(true)
	_, err := a.Log.Append(segmenttest.Batch(t, 1, 100, 9, 0))
	var ioe *segment.IOError
	if !errors.As(err, &ioe) {
		t.Fatalf("append to a full disk: %v, want an I/O error", err)
	}
	eventually(t, "the dir to go offline", func() bool {
		off, _ := ev.snapshot()
		return len(off) == 1 && off[0] == a.TP
	})
	if got := m.OfflineDirs(); len(got) != 1 || got[0] != d1 {
		t.Fatalf("offline dirs %v", got)
	}
	if _, ok := m.Get(a.TP); ok {
		t.Fatal("a log of the offline dir is still served")
	}
	if _, err := m.Create(a.TP, a.TopicID); !errors.Is(err, logdir.ErrPartitionExists) {
		t.Fatalf("creating a partition of the offline dir again: %v, want ErrPartitionExists", err)
	}
	if _, err := m.Create(tp("full", 2), logdir.TopicID{1}); err != nil {
		t.Fatalf("create with one dir online: %v", err)
	}
	if pl, _ := m.Get(tp("full", 2)); filepath.Dir(pl.Log.Dir()) != d2 {
		t.Fatalf("created in %s, an offline dir", pl.Log.Dir())
	}
	appendN(t, b.Log, 2)               // the other directory keeps working
	time.Sleep(100 * time.Millisecond) // several failed probes
	if n := strings.Count(logs.String(), "level=ERROR"); n != 1 || !strings.Contains(logs.String(), d1) || !strings.Contains(logs.String(), segmenttest.ErrInjected.Error()) {
		t.Fatalf("want one ERROR line naming %s and the cause, got %d in:\n%s", d1, n, logs.String())
	}

	fs.full.Store(false)
	eventually(t, "the dir to come back", func() bool {
		_, on := ev.snapshot()
		return len(on) == 1
	})
	if len(m.OfflineDirs()) != 0 {
		t.Fatalf("offline dirs %v after the probe succeeded", m.OfflineDirs())
	}
	back, ok := m.Get(a.TP)
	if !ok || back.Log == a.Log || back.TopicID != a.TopicID {
		t.Fatalf("reopened log: ok %v same %v id %v", ok, back.Log == a.Log, back.TopicID)
	}
	if back.Log.EndOffset() != 6 || back.Log.Recovery().CleanShutdown {
		t.Fatalf("reopened log ends at %d (want the 6 acknowledged), recovery %+v", back.Log.EndOffset(), back.Log.Recovery())
	}
	if _, err := back.Log.Append(segmenttest.Batch(t, 1, 100, 10, 0)); err != nil {
		t.Fatalf("append after the dir came back: %v", err)
	}
}
