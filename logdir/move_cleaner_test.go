package logdir_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/varve/varve/compaction"
	"github.com/varve/varve/logdir"
	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

// appendKeyed appends n batches that write the same 10 keys over and
// over: a log compaction shrinks.
func appendKeyed(t *testing.T, l *segment.Log, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := l.Append(segmenttest.Batch(t, 2, 200, int64(i%5), int64(1_700_000_000_000+i))); err != nil {
			t.Fatal(err)
		}
	}
}

func cleanerCheckpoint(t *testing.T, dir string) map[segment.TopicPartition]int64 {
	t.Helper()
	m, err := segment.ReadCheckpoint(segment.OSFS{}, filepath.Join(dir, segment.CleanerOffsetCheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Kafka: LogManager.replaceCurrentWithFutureLog calls
// LogCleanerManager.alterCheckpointDir: the partition's first dirty
// offset moves from the source dir's cleaner-offset-checkpoint to the
// destination's, so that the moved log's next cleaning starts there
// instead of at its start; the other partitions' entries stay. A
// partition the source holds no entry of leaves none in the
// destination, a stale one there included.
func TestMoveCarriesCleanerCheckpoint(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	var h holder
	m := openManager(t, []string{d1, d2}, smallSegments, h.watch)
	defer m.Close()
	cc := compaction.DefaultConfig()
	pl, err := m.Create(tp("cc", 0), logdir.TopicID{1})
	if err != nil {
		t.Fatal(err)
	}
	appendKeyed(t, pl.Log, 60)
	st, err := compaction.Clean(pl.Log, cc, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	carried := st.EndOffset
	if carried <= pl.Log.StartOffset() {
		t.Fatalf("the first pass cleaned nothing: %+v", st)
	}
	appendKeyed(t, pl.Log, 30)
	other, bare := tp("other", 0), tp("bare", 0)
	if err := compaction.SetFirstDirtyIn(segment.OSFS{}, d1, other, 42, true); err != nil {
		t.Fatal(err)
	}
	if err := compaction.SetFirstDirtyIn(segment.OSFS{}, d2, bare, 99, true); err != nil { // stale
		t.Fatal(err)
	}
	m.AlterLogDir(bare, abs(t, d1)) // unknown yet: created there
	if pb, err := m.Create(bare, logdir.TopicID{2}); err != nil || filepath.Dir(pb.Log.Dir()) != d1 {
		t.Fatalf("bare-0 created in %v: %v", pb.Log, err)
	}
	for _, p := range []segment.TopicPartition{tp("cc", 0), bare} {
		if err := m.AlterLogDir(p, abs(t, d2)); err != nil {
			t.Fatal(err)
		}
		waitMoved(t, m)
	}
	src, dst := cleanerCheckpoint(t, d1), cleanerCheckpoint(t, d2)
	if _, ok := src[tp("cc", 0)]; ok || src[other] != 42 {
		t.Fatalf("source checkpoint after the move: %v, want only other-0 at 42", src)
	}
	if off, ok := dst[tp("cc", 0)]; !ok || off != carried {
		t.Fatalf("destination checkpoint after the move: %v, want cc-0 at %d", dst, carried)
	}
	if _, ok := dst[bare]; ok {
		t.Fatalf("destination checkpoint after the move: %v, want no entry for bare-0 (none in the source)", dst)
	}
	moved, _ := m.Get(tp("cc", 0))
	st2, err := compaction.Clean(moved.Log, cc, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if st2.FirstDirty != carried {
		t.Fatalf("the moved log's next pass began at %d, want the carried %d", st2.FirstDirty, carried)
	}
}
