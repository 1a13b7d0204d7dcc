package compaction_test

import (
	"testing"
	"time"

	"github.com/varve/varve/compaction"
	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// Kafka (KIP-534): the first cleaning that keeps a tombstone sets the
// batch's delete horizon (attribute bit 6, BaseTimestamp = now +
// delete.retention.ms); later cleanings keep the tombstone while now <
// horizon and drop it once now >= horizon. The record's own timestamp
// does not change. The clock is injected: each pass gets its time.
func TestTombstoneHorizon(t *testing.T) {
	const retention = time.Hour
	cfg := compaction.DefaultConfig()
	cfg.DeleteRetention = retention
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	appendKV(t, l, record.CompressionNone, t0, rec("k", "v"))
	appendKV(t, l, record.CompressionZstd, t0.Add(time.Second), tomb("k"), rec("other", "1"))
	roll(t, l)

	// First cleaning at t1: the value goes, the tombstone stays and its
	// batch gets the horizon t1 + delete.retention.ms.
	t1 := t0.Add(time.Minute)
	st := must[compaction.Stats](t)(compaction.Clean(l, cfg, t1))
	ts := tombstoneOf(t, l, "k")
	if ts == nil || st.HorizonsSet != 1 {
		t.Fatalf("tombstone kept: %v, horizons set %d; want kept and 1", ts != nil, st.HorizonsSet)
	}
	horizon, ok := ts.Batch.DeleteHorizon()
	if !ok || horizon != t1.Add(retention).UnixMilli() {
		t.Fatalf("delete horizon %d (set %v), want %d", horizon, ok, t1.Add(retention).UnixMilli())
	}
	if ts.Timestamp != t0.Add(time.Second).UnixMilli() || ts.Batch.Compression() != record.CompressionZstd {
		t.Fatalf("tombstone timestamp %d codec %v, want %d and zstd unchanged", ts.Timestamp, ts.Batch.Compression(), t0.Add(time.Second).UnixMilli())
	}

	// Just before the horizon: still there (a consumer that started at
	// the log start within delete.retention.ms sees the delete, C5).
	dirty(t, l)
	must[compaction.Stats](t)(compaction.Clean(l, cfg, t1.Add(retention-time.Millisecond)))
	if ts2 := tombstoneOf(t, l, "k"); ts2 == nil {
		t.Fatal("tombstone dropped before its horizon")
	} else if h2, _ := ts2.Batch.DeleteHorizon(); h2 != horizon {
		t.Fatalf("horizon moved from %d to %d on a later cleaning", horizon, h2)
	}

	// At the horizon: gone; the other record of its batch stays.
	dirty(t, l)
	st = must[compaction.Stats](t)(compaction.Clean(l, cfg, t1.Add(retention)))
	if tombstoneOf(t, l, "k") != nil || st.TombstonesDropped != 1 {
		t.Fatalf("tombstone still there at its horizon (dropped %d)", st.TombstonesDropped)
	}
	if _, ok := latest(readAll(t, l))["other"]; !ok {
		t.Fatal("the tombstone's batch-mate was dropped")
	}
}

// dirty appends a record of a new key and rolls, so the next pass has a
// dirty section (Kafka cleans nothing without one).
func dirty(t *testing.T, l *segment.Log) {
	t.Helper()
	appendKV(t, l, record.CompressionNone, t0, rec(time.Now().String(), "x"))
	roll(t, l)
}

func tombstoneOf(t *testing.T, l *segment.Log, key string) *stored {
	t.Helper()
	for _, r := range readAll(t, l) {
		if string(r.Key) == key && r.Value == nil {
			return &r
		}
	}
	return nil
}
