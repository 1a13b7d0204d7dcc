package compaction

import (
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// fourSegments makes a log of four sealed one-batch segments (offsets 0-3)
// and an empty active one.
func fourSegments(t *testing.T) *segment.Log {
	t.Helper()
	cfg := segment.DefaultConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	l, err := segment.Open(filepath.Join(t.TempDir(), "d-0"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	for i := range 4 {
		b := record.NewBatchBuilder(record.CompressionNone)
		b.Append(record.Record{Key: []byte{byte(i)}, Value: []byte("v"), Timestamp: t0.Add(time.Duration(i) * time.Hour).UnixMilli()})
		batch, _ := b.Build()
		if _, err := l.Append(batch); err != nil {
			t.Fatal(err)
		}
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// Kafka (LogCleanerManager.cleanableOffsets): the first dirty offset is
// the checkpoint, reset to the log start offset when it is below it or
// past the log end; the dirty ratio is cleanable / (clean + cleanable)
// bytes.
func TestExamineFirstDirtyAndRatio(t *testing.T) {
	l := fourSegments(t)
	size := l.Segments()[0].Size
	for _, tc := range []struct {
		checkpoint int64 // -1: none
		firstDirty int64
		ratio      float64
	}{{-1, 0, 1}, {2, 2, 0.5}, {4, 4, 0}, {9, 0, 1}} {
		if tc.checkpoint >= 0 {
			if err := writeFirstDirty(l, tc.checkpoint); err != nil {
				t.Fatal(err)
			}
		}
		c := examine(l, DefaultTopicConfig(), l.EndOffset(), t0)
		if c.firstDirty != tc.firstDirty || c.firstUncleanable != 4 || c.ratio() != tc.ratio {
			t.Errorf("checkpoint %d: first dirty %d, first uncleanable %d, ratio %v; want %d, 4, %v",
				tc.checkpoint, c.firstDirty, c.firstUncleanable, c.ratio(), tc.firstDirty, tc.ratio)
		}
		if got := c.cleanBytes + c.cleanableBytes; got != 4*size {
			t.Errorf("checkpoint %d: clean + cleanable = %d bytes, want %d", tc.checkpoint, got, 4*size)
		}
	}
}

// Kafka: min.compaction.lag.ms makes the first dirty segment whose largest
// timestamp is newer than now - lag the first uncleanable one, and the
// upper bound (high watermark) stops cleaning at the segment holding it.
func TestExamineFirstUncleanable(t *testing.T) {
	l := fourSegments(t) // segment i has timestamp t0 + i hours
	lag := DefaultTopicConfig()
	lag.MinCompactionLag = 90 * time.Minute
	if c := examine(l, lag, l.EndOffset(), t0.Add(3*time.Hour)); c.firstUncleanable != 2 {
		t.Errorf("with a 90 min lag at t0+3h: first uncleanable %d, want 2 (segments 2 and 3 are too new)", c.firstUncleanable)
	}
	if c := examine(l, DefaultTopicConfig(), 1, t0); c.firstUncleanable != 1 {
		t.Errorf("with upper bound 1: first uncleanable %d, want 1", c.firstUncleanable)
	}
	maxLag := DefaultTopicConfig()
	maxLag.MaxCompactionLag = time.Hour
	if c := examine(l, maxLag, l.EndOffset(), t0.Add(2*time.Hour)); !c.needNow {
		t.Error("the first dirty segment is 2 h old with a 1 h max.compaction.lag.ms: cleaning must be forced")
	}
}
