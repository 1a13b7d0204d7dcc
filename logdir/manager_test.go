package logdir_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

type testConfig func(*logdir.Config)

func openManager(t *testing.T, dirs []string, opts ...testConfig) *logdir.Manager {
	t.Helper()
	cfg := logdir.Config{
		LogDirs: dirs, RecoveryThreadsPerDataDir: 2,
		LogConfig: func(string) segment.Config { c := segment.DefaultConfig(); c.SegmentBytes = 4096; return c },
		// The log's end is its high watermark here: replica supplies the
		// real one.
		HighWatermark: func(segment.TopicPartition) (int64, bool) { return 0, false },
	}
	for _, o := range opts {
		o(&cfg)
	}
	m, err := logdir.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func tp(topic string, p int32) segment.TopicPartition {
	return segment.TopicPartition{Topic: topic, Partition: p}
}

func appendN(t *testing.T, l *segment.Log, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := l.Append(segmenttest.Batch(t, 2, 300, int64(i), 0)); err != nil {
			t.Fatal(err)
		}
	}
}

// Kafka: LogManager.shutdown flushes every log, writes the three
// checkpoints, and only then the clean-shutdown marker; the next start
// reads them back, and the partitions go to the least loaded dir.
func TestCleanShutdownWritesCheckpointsThenMarker(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	hws := map[segment.TopicPartition]int64{}
	withHW := func(c *logdir.Config) {
		c.HighWatermark = func(tp segment.TopicPartition) (int64, bool) { v, ok := hws[tp]; return v, ok }
	}
	m := openManager(t, []string{d1, d2}, withHW)
	id := logdir.TopicID{7}
	for p := int32(0); p < 4; p++ {
		pl, err := m.Create(tp("orders", p), id)
		if err != nil {
			t.Fatal(err)
		}
		appendN(t, pl.Log, 10+int(p))
		hws[pl.TP] = int64(p) // distinct from the end: checks the value comes from HighWatermark
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{d1, d2} {
		dirs, _ := filepath.Glob(filepath.Join(d, "orders-*"))
		if len(dirs) != 2 {
			t.Fatalf("%s holds %d partitions, want 2", d, len(dirs))
		}
		if _, err := os.Stat(filepath.Join(d, segment.CleanShutdownFile)); err != nil {
			t.Fatalf("no clean-shutdown marker in %s", d)
		}
		for _, name := range []string{segment.RecoveryPointCheckpointFile, segment.LogStartOffsetCheckpointFile, segment.ReplicationCheckpointFile} {
			cp, err := segment.ReadCheckpoint(nil, filepath.Join(d, name))
			if err != nil || len(cp) != 2 {
				t.Fatalf("%s in %s: %v %v", name, d, cp, err)
			}
		}
	}
	m = openManager(t, []string{d1, d2})
	defer m.Close()
	for p := int32(0); p < 4; p++ {
		pl, ok := m.Get(tp("orders", p))
		if !ok {
			t.Fatalf("partition %d lost", p)
		}
		want := int64(2 * (10 + p))
		if pl.Log.EndOffset() != want || pl.TopicID != id || pl.CheckpointedHW != int64(p) {
			t.Fatalf("partition %d: end %d id %v hw %d", p, pl.Log.EndOffset(), pl.TopicID, pl.CheckpointedHW)
		}
		if !pl.Log.Recovery().CleanShutdown {
			t.Fatalf("partition %d reopened as unclean after a clean shutdown", p)
		}
	}
	for _, d := range []string{d1, d2} {
		if _, err := os.Stat(filepath.Join(d, segment.CleanShutdownFile)); err == nil {
			t.Fatal("the marker must be deleted at start (KAFKA-10471)")
		}
	}
}

// Kafka: without the marker, every partition is validated from its
// recovery point.
func TestMissingMarkerMeansRecovery(t *testing.T) {
	d := t.TempDir()
	m := openManager(t, []string{d})
	pl, _ := m.Create(tp("t", 0), logdir.TopicID{1})
	appendN(t, pl.Log, 10)
	m.Close()
	os.Remove(filepath.Join(d, segment.CleanShutdownFile))
	m = openManager(t, []string{d})
	defer m.Close()
	pl, _ = m.Get(tp("t", 0))
	if pl.Log.Recovery().CleanShutdown || pl.Log.EndOffset() != 20 {
		t.Fatalf("recovery %+v, end %d", pl.Log.Recovery(), pl.Log.EndOffset())
	}
}

// Kafka: a deleted partition's directory is renamed *-delete and removed
// in the background; one left by a crash is removed at the next start.
func TestDeletePartition(t *testing.T) {
	d := t.TempDir()
	m := openManager(t, []string{d})
	pl, _ := m.Create(tp("gone", 0), logdir.TopicID{2})
	appendN(t, pl.Log, 1)
	if err := m.Delete(tp("gone", 0)); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Get(tp("gone", 0)); ok {
		t.Fatal("partition still served after delete")
	}
	// A leftover from a crash during deletion.
	os.MkdirAll(filepath.Join(d, "gone-1.abc-delete"), 0o755)
	m.Close()
	m = openManager(t, []string{d})
	defer m.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		entries, _ := os.ReadDir(d)
		left := false
		for _, e := range entries {
			left = left || strings.HasPrefix(e.Name(), "gone")
		}
		if !left {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("deleted partition directories were not removed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Kafka: partition.metadata carries the topic id in Kafka's format,
// byte for byte (PartitionMetadata.encode: no newline after the id), and
// is written before the log's first file.
func TestPartitionMetadataFile(t *testing.T) {
	d := t.TempDir()
	m := openManager(t, []string{d})
	defer m.Close()
	id := logdir.TopicID{0xfb, 1, 2}
	if _, err := m.Create(tp("meta", 3), id); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(d, "meta-3", logdir.PartitionMetadataFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := "version: 0\ntopic_id: " + id.String(); string(data) != want { // Kafka: no newline at the end
		t.Fatalf("partition.metadata %q, want %q", data, want)
	}
	if back, err := logdir.ParseTopicID(id.String()); err != nil || back != id {
		t.Fatalf("topic id round trip: %v %v", back, err)
	}
}

// Kafka: num.recovery.threads.per.data.dir: every partition of every dir
// is loaded, whatever the thread count.
func TestParallelRecoveryLoadsEveryPartition(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	m := openManager(t, []string{d1, d2})
	for p := int32(0); p < 12; p++ {
		pl, err := m.Create(tp("many", p), logdir.TopicID{9})
		if err != nil {
			t.Fatal(err)
		}
		appendN(t, pl.Log, int(p)+1)
	}
	m.Close()
	for _, threads := range []int{1, 3, 16} {
		os.Remove(filepath.Join(d1, segment.CleanShutdownFile)) // recover every log
		m = openManager(t, []string{d1, d2}, func(c *logdir.Config) { c.RecoveryThreadsPerDataDir = threads })
		logs := m.Logs()
		if len(logs) != 12 {
			t.Fatalf("%d threads: %d logs loaded, want 12", threads, len(logs))
		}
		for _, pl := range logs {
			if pl.Log.EndOffset() != 2*int64(pl.TP.Partition+1) {
				t.Fatalf("%d threads: %s ends at %d", threads, pl.TP, pl.Log.EndOffset())
			}
		}
		m.Close()
	}
}

// Creating a partition holds no lock that lookups take: Get of another
// partition answers while a creation is stuck in its fsync. Concurrent
// creators of one partition get one log.
func TestCreateOutsideTheLock(t *testing.T) {
	fs := &blockingFS{FS: segment.OSFS{}, release: make(chan struct{}), entered: make(chan struct{}, 1)}
	m := openManager(t, []string{t.TempDir()}, func(c *logdir.Config) { c.FS = fs })
	defer m.Close()
	if _, err := m.Create(tp("old", 0), logdir.TopicID{1}); err != nil {
		t.Fatal(err)
	}
	fs.block.Store(true)
	var wg sync.WaitGroup
	results := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := m.Create(tp("new", 0), logdir.TopicID{2})
			results <- err
		}()
	}
	<-fs.entered // one creation is inside a directory fsync
	done := make(chan bool)
	go func() { _, ok := m.Get(tp("old", 0)); done <- ok }()
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("existing partition not found")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a lookup waited for a creation's file work")
	}
	fs.block.Store(false)
	close(fs.release)
	wg.Wait()
	close(results)
	created := 0
	for err := range results {
		switch {
		case err == nil:
			created++
		case !errors.Is(err, logdir.ErrPartitionExists):
			t.Fatalf("concurrent create: %v", err)
		}
	}
	if created != 1 {
		t.Fatalf("%d creators succeeded, want exactly 1", created)
	}
	if _, ok := m.Get(tp("new", 0)); !ok {
		t.Fatal("created partition not published")
	}
}
