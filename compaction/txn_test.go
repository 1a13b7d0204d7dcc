package compaction_test

import (
	"testing"
	"time"

	"github.com/varve/varve/compaction"
	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// appendTxn appends one transactional batch of producer pid.
func appendTxn(t *testing.T, l *segment.Log, pid int64, seq int32, recs ...kv) int64 {
	t.Helper()
	b := record.NewBatchBuilder(record.CompressionNone)
	b.SetProducer(pid, 0, seq)
	b.SetTransactional(true)
	for _, r := range recs {
		b.Append(record.Record{Key: r.Key, Value: r.Value, Timestamp: t0.UnixMilli()})
	}
	batch, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	info, err := l.Append(batch)
	if err != nil {
		t.Fatal(err)
	}
	return info.FirstOffset
}

func endTxn(t *testing.T, l *segment.Log, pid int64, commit bool) int64 {
	t.Helper()
	info, err := l.AppendTxnMarker(segment.TxnMarker{ProducerID: pid, CoordinatorEpoch: 1, Commit: commit, Timestamp: t0.UnixMilli()}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return info.FirstOffset
}

// markers lists the control batches of the log: base offset -> header.
func markers(t *testing.T, l *segment.Log) map[int64]record.BatchHeader {
	t.Helper()
	out := map[int64]record.BatchHeader{}
	for off := l.StartOffset(); off < l.EndOffset(); {
		buf, err := l.ReadBytes(off, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		for p := 0; p < len(buf); {
			h, _ := record.ParseHeader(buf[p:])
			if h.IsControl() {
				out[h.BaseOffset] = h
			}
			off = h.NextOffset()
			p += int(h.Size())
		}
	}
	return out
}

// Kafka: LogCleaner (CleanedTransactionMetadata). The records of an
// aborted transaction are removed whatever their keys and never
// supersede committed ones; the ABORT stays, with its transaction index
// entry, while the pass still finds data of its transaction; once none
// is left it gets a delete horizon and goes at the first cleaning past
// delete.retention.ms.
func TestAbortedDataRemovedThenMarkerAfterDeleteRetention(t *testing.T) {
	const retention = time.Hour
	cfg := compaction.DefaultConfig()
	cfg.DeleteRetention = retention
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	appendKV(t, l, record.CompressionNone, t0, rec("k", "committed"))
	appendTxn(t, l, 7, 0, rec("k", "aborted"), rec("x", "aborted"))
	abortAt := endTxn(t, l, 7, false)
	appendKV(t, l, record.CompressionNone, t0, rec("y", "1"))
	// The producer's next transaction: the aborted batch is not its last
	// data batch, which Kafka keeps emptied for the producer's state
	// (and which would keep the ABORT with it).
	appendTxn(t, l, 7, 2, rec("z", "1"))
	endTxn(t, l, 7, true)
	roll(t, l)

	t1 := t0.Add(time.Minute)
	st := must[compaction.Stats](t)(compaction.Clean(l, cfg, t1))
	got := latest(readAll(t, l))
	if string(got["k"].Value) != "committed" || got["x"].Key != nil || st.AbortedBatchesDropped != 1 {
		t.Fatalf("after cleaning: k=%q x present=%v, aborted batches dropped %d", got["k"].Value, got["x"].Key != nil, st.AbortedBatchesDropped)
	}
	m, ok := markers(t, l)[abortAt]
	if !ok || m.HasDeleteHorizon() {
		t.Fatalf("ABORT after the pass that removed its data: present %v, horizon %v; want kept without a horizon", ok, m.HasDeleteHorizon())
	}
	if a := l.AbortedTransactions(0, l.EndOffset()); len(a) != 1 || a[0].LastOffset != abortAt {
		t.Fatalf("transaction index after the first pass: %+v", a)
	}

	// No data left: the marker gets its horizon, and its entry goes.
	dirty(t, l)
	st = must[compaction.Stats](t)(compaction.Clean(l, cfg, t1))
	m, ok = markers(t, l)[abortAt]
	horizon, hasHorizon := m.DeleteHorizon()
	if !ok || !hasHorizon || horizon != t1.Add(retention).UnixMilli() || st.HorizonsSet != 1 {
		t.Fatalf("ABORT with no data left: present %v, horizon %d (%v), want %d", ok, horizon, hasHorizon, t1.Add(retention).UnixMilli())
	}
	if a := l.AbortedTransactions(0, l.EndOffset()); len(a) != 0 {
		t.Fatalf("index entry of a transaction with no data left: %+v", a)
	}

	dirty(t, l)
	must[compaction.Stats](t)(compaction.Clean(l, cfg, t1.Add(retention-time.Millisecond)))
	if _, ok := markers(t, l)[abortAt]; !ok {
		t.Fatal("ABORT removed before delete.retention.ms")
	}
	dirty(t, l)
	st = must[compaction.Stats](t)(compaction.Clean(l, cfg, t1.Add(retention)))
	if _, ok := markers(t, l)[abortAt]; ok || st.MarkersDropped != 1 {
		t.Fatalf("ABORT still there at its horizon (dropped %d)", st.MarkersDropped)
	}
	if string(latest(readAll(t, l))["k"].Value) != "committed" {
		t.Fatal("the committed value was lost")
	}
}

// Kafka: a COMMIT stays while the cleaned group holds data of its
// transaction, and the committed records are compacted as any others.
func TestCommitMarkerKeptWithItsData(t *testing.T) {
	cfg := compaction.DefaultConfig()
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	appendTxn(t, l, 9, 0, rec("a", "1"), rec("b", "1"))
	commitAt := endTxn(t, l, 9, true)
	appendKV(t, l, record.CompressionNone, t0, rec("a", "2"))
	roll(t, l)
	must[compaction.Stats](t)(compaction.Clean(l, cfg, t0.Add(time.Minute)))
	got := latest(readAll(t, l))
	if string(got["a"].Value) != "2" || string(got["b"].Value) != "1" {
		t.Fatalf("a=%q b=%q, want 2 and 1", got["a"].Value, got["b"].Value)
	}
	if m, ok := markers(t, l)[commitAt]; !ok || m.HasDeleteHorizon() {
		t.Fatalf("COMMIT with its data still in the log: present %v horizon %v", ok, m.HasDeleteHorizon())
	}
}

// Kafka: LogCleanerManager.cleanableOffsets never cleans past the last
// stable offset: an open transaction's data, and everything after it,
// stays dirty.
func TestCleaningStopsAtTheLastStableOffset(t *testing.T) {
	cfg := compaction.DefaultConfig()
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	appendKV(t, l, record.CompressionNone, t0, rec("k", "1"))
	roll(t, l)
	open := appendTxn(t, l, 3, 0, rec("k", "open"))
	roll(t, l)
	appendKV(t, l, record.CompressionNone, t0, rec("k", "3"))
	roll(t, l)
	st := must[compaction.Stats](t)(compaction.Clean(l, cfg, t0.Add(time.Minute)))
	if st.FirstUncleanable != open {
		t.Fatalf("first uncleanable offset %d, want %d (the open transaction's segment)", st.FirstUncleanable, open)
	}
	var values []string
	for _, r := range readAll(t, l) {
		values = append(values, string(r.Value))
	}
	if len(values) != 3 {
		t.Fatalf("records %v: nothing past the last stable offset may be cleaned, and k=1 is the last value below it", values)
	}
	endTxn(t, l, 3, false)
	roll(t, l)
	must[compaction.Stats](t)(compaction.Clean(l, cfg, t0.Add(time.Minute)))
	if got := latest(readAll(t, l)); string(got["k"].Value) != "3" {
		t.Fatalf("after the abort: k=%q, want 3", got["k"].Value)
	}
	for _, r := range readAll(t, l) {
		if string(r.Value) == "open" || string(r.Value) == "1" {
			t.Fatalf("record %q survived the cleaning after the abort", r.Value)
		}
	}
}
