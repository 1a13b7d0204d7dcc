package segment_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/varve/varve/segment"
)

// A Config is taken as given: the zero Config is not Kafka's defaults
// but an invalid configuration (segment.bytes=0 and more), so a caller
// who forgot DefaultConfig hears of it instead of getting zeros that
// mean something else.
func TestZeroConfigIsRefused(t *testing.T) {
	if _, err := segment.Open(t.TempDir(), segment.Config{}); !errors.Is(err, segment.ErrInvalidConfig) {
		t.Fatalf("Open with the zero Config: err %v, want ErrInvalidConfig", err)
	}
	l := open(t, t.TempDir(), segment.DefaultConfig())
	defer l.Close()
	if err := l.UpdateConfig(segment.Config{}); !errors.Is(err, segment.ErrInvalidConfig) {
		t.Fatalf("UpdateConfig with the zero Config: err %v, want ErrInvalidConfig", err)
	}
}

// Kafka: flush.ms=0 lets no message wait for a flush; every append is
// durable when it returns, whatever flush.messages says.
func TestFlushMsZeroMakesEveryAppendDurable(t *testing.T) {
	cfg := segment.DefaultConfig()
	cfg.FlushMs = 0
	l := open(t, t.TempDir(), cfg)
	defer l.Close()
	for i := range 5 {
		appendN(t, l, 1, 2, 10, int64(i))
		if rp, end := l.RecoveryPoint(), l.EndOffset(); rp != end {
			t.Fatalf("after append %d: recovery point %d, log end %d; want equal", i, rp, end)
		}
	}
}

// Kafka: an index entry is added when bytesSinceLastIndexEntry >
// index.interval.bytes, so index.interval.bytes=0 indexes every batch
// but a segment's first.
func TestIndexIntervalZeroIndexesEveryBatch(t *testing.T) {
	for _, tc := range []struct {
		interval int
		entries  int64
	}{{0, 9}, {segment.DefaultIndexIntervalBytes, 0}} {
		dir := t.TempDir()
		cfg := segment.DefaultConfig()
		cfg.IndexIntervalBytes = tc.interval
		l := open(t, dir, cfg)
		appendN(t, l, 10, 1, 10, 1) // ten batches of about 90 bytes
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(filepath.Join(dir, segment.FilenamePrefix(0)+".index"))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Size() / 8; got != tc.entries { // the index is trimmed on close
			t.Errorf("index.interval.bytes=%d: %d index entries, want %d", tc.interval, got, tc.entries)
		}
	}
}

// Kafka: file.delete.delay.ms=0 deletes a removed segment's files at
// once instead of after a delay.
func TestFileDeleteDelayZeroDeletesAtOnce(t *testing.T) {
	dir := t.TempDir()
	cfg := segment.DefaultConfig()
	cfg.SegmentBytes, cfg.FileDeleteDelay = 1024, 0
	l := open(t, dir, cfg)
	defer l.Close()
	appendN(t, l, 20, 1, 200, 1)
	if _, err := l.DeleteSegmentsBefore(l.Segments()[2].BaseOffset); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		matches, _ := filepath.Glob(filepath.Join(dir, "*.deleted"))
		if len(matches) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d *.deleted files five seconds after deletion with file.delete.delay.ms=0", len(matches))
		}
		time.Sleep(time.Millisecond)
	}
}
