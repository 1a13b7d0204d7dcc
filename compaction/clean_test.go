package compaction_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/varve/varve/compaction"
	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// Kafka: the cleaner keeps the last record of every key (C3), keeps
// offsets (C1) and order (C2), and drops superseded records.
func TestCleanKeepsLastValueOfEachKey(t *testing.T) {
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	appendKV(t, l, record.CompressionNone, t0, rec("a", "1"), rec("b", "1"))
	appendKV(t, l, record.CompressionNone, t0, rec("a", "2"), rec("c", "1"))
	roll(t, l)
	appendKV(t, l, record.CompressionNone, t0, rec("b", "2"))
	roll(t, l)
	st, err := compaction.Clean(l, compaction.DefaultConfig(), t0)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(st)
	got := readAll(t, l)
	var offs []int64
	for _, r := range got {
		offs = append(offs, r.Offset)
	}
	want := []int64{2, 3, 4} // a=2 at 2, c=1 at 3, b=2 at 4
	if len(offs) != len(want) {
		t.Fatalf("offsets %v, want %v", offs, want)
	}
	for i := range want {
		if offs[i] != want[i] {
			t.Fatalf("offsets %v, want %v", offs, want)
		}
	}
}

// Kafka: a rebuilt batch keeps its base and last offset (C1), its codec
// and producer fields, and every kept record its offset, timestamp and
// headers (MemoryRecords.filterTo with the original offsets).
func TestCleanPreservesOffsetsTimestampsAndCodec(t *testing.T) {
	for _, c := range []record.Compression{record.CompressionNone, record.CompressionGzip,
		record.CompressionSnappy, record.CompressionLZ4, record.CompressionZstd} {
		t.Run(c.String(), func(t *testing.T) {
			l := openLog(t, t.TempDir(), logConfig())
			defer l.Close()
			b := record.NewBatchBuilder(c)
			b.SetProducer(7, 1, 0)
			for i := range 6 {
				b.Append(record.Record{Key: []byte{byte('a' + i%3)}, Value: []byte{byte(i)}, Timestamp: t0.UnixMilli() + int64(i*10),
					Headers: []record.Header{{Key: "h", Value: []byte{byte(i)}}}})
			}
			batch := must[[]byte](t)(b.Build())
			must[segment.AppendInfo](t)(l.Append(batch))
			before := readAll(t, l)
			roll(t, l)
			must[compaction.Stats](t)(compaction.Clean(l, compaction.DefaultConfig(), t0))
			after := readAll(t, l)
			if len(after) != 3 {
				t.Fatalf("%d records kept, want 3 (last of a, b, c)", len(after))
			}
			for _, r := range after {
				orig := before[r.Offset]
				if orig.Timestamp != r.Timestamp || string(orig.Value) != string(r.Value) ||
					len(r.Headers) != 1 || string(r.Headers[0].Value) != string(orig.Headers[0].Value) {
					t.Fatalf("record at %d changed: %+v, was %+v", r.Offset, r.Record, orig.Record)
				}
				h := r.Batch
				if h.Compression() != c || h.BaseOffset != 0 || h.LastOffset() != 5 || h.ProducerID != 7 || h.RecordCount != 3 {
					t.Fatalf("rebuilt batch header %+v: want codec %v, offsets [0, 5], producer 7, 3 records", h, c)
				}
			}
		})
	}
}

// Kafka: nothing at or above the first uncleanable offset is touched (C4):
// the active segment, and segments at or past the upper bound (the high
// watermark) keep their duplicates.
func TestCleanStopsAtActiveSegmentAndUpperBound(t *testing.T) {
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	for range 3 { // three sealed segments, each a=..., then the active one
		appendKV(t, l, record.CompressionNone, t0, rec("a", "x"), rec("a", "y"))
		roll(t, l)
	}
	appendKV(t, l, record.CompressionNone, t0, rec("a", "z"), rec("a", "w"))
	cfg := compaction.DefaultConfig()
	cfg.UpperBound = func(*segment.Log) int64 { return 5 } // inside the third segment [4, 6)
	st := must[compaction.Stats](t)(compaction.Clean(l, cfg, t0))
	if st.FirstUncleanable != 4 || st.EndOffset != 4 {
		t.Fatalf("first uncleanable %d, end %d; want 4 (the segment holding the bound)", st.FirstUncleanable, st.EndOffset)
	}
	got := readAll(t, l)
	var offs []int64
	for _, r := range got {
		offs = append(offs, r.Offset)
	}
	if want := "[3 4 5 6 7]"; fmt.Sprint(offs) != want {
		t.Fatalf("offsets %v, want %s: a's last value below 4, everything from 4 untouched", offs, want)
	}
}

// Kafka: min.compaction.lag.ms keeps segments whose largest timestamp is
// newer than now - lag out of the cleaning.
func TestMinCompactionLagHoldsNewSegments(t *testing.T) {
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	appendKV(t, l, record.CompressionNone, t0, rec("a", "1"), rec("a", "2"))
	roll(t, l)
	appendKV(t, l, record.CompressionNone, t0.Add(time.Hour), rec("a", "3"), rec("a", "4"))
	roll(t, l)
	cfg := compaction.DefaultConfig()
	cfg.MinCompactionLag = 30 * time.Minute
	st := must[compaction.Stats](t)(compaction.Clean(l, cfg, t0.Add(time.Hour+10*time.Minute)))
	if st.FirstUncleanable != 2 {
		t.Fatalf("first uncleanable %d, want 2 (the second segment is only 10 minutes old)", st.FirstUncleanable)
	}
	if got := len(readAll(t, l)); got != 3 {
		t.Fatalf("%d records, want 3: one left of the old segment, both of the new", got)
	}
}

// Kafka: keyless records in a compacted log are invalid and dropped
// (stats.invalidMessage).
func TestKeylessRecordsAreDropped(t *testing.T) {
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	appendKV(t, l, record.CompressionNone, t0, kv{Value: []byte("no key")}, rec("a", "1"))
	roll(t, l)
	st := must[compaction.Stats](t)(compaction.Clean(l, compaction.DefaultConfig(), t0))
	if st.KeylessDropped != 1 || len(readAll(t, l)) != 1 {
		t.Fatalf("keyless dropped %d, records left %d; want 1 and 1", st.KeylessDropped, len(readAll(t, l)))
	}
}

// Kafka (C8, RETAIN_EMPTY): a batch emptied by cleaning stays as a bare
// header when it is its producer's last data batch, so the producer's
// sequence state survives; an earlier emptied batch of the same producer
// goes.
func TestEmptiedBatchOfProducerIsKept(t *testing.T) {
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	produce := func(seq int32, recs ...kv) {
		b := record.NewBatchBuilder(record.CompressionNone)
		b.SetProducer(42, 3, seq)
		for _, r := range recs {
			b.Append(record.Record{Key: r.Key, Value: r.Value, Timestamp: t0.UnixMilli()})
		}
		must[segment.AppendInfo](t)(l.Append(must[[]byte](t)(b.Build())))
	}
	produce(0, rec("a", "1"))                                                // offset 0: emptied, not the last: goes
	produce(1, rec("b", "1"))                                                // offset 1: emptied, producer 42's last: stays empty
	appendKV(t, l, record.CompressionNone, t0, rec("a", "2"), rec("b", "2")) // 2, 3, no producer
	appendKV(t, l, record.CompressionNone, t0, rec("c", "1"))                // 4
	roll(t, l)
	st := must[compaction.Stats](t)(compaction.Clean(l, compaction.DefaultConfig(), t0))
	buf := must[[]byte](t)(l.ReadBytes(0, 1<<20))
	var hs []record.BatchHeader
	for p := 0; p < len(buf); {
		h, n, err := record.NextBatch(buf[p:], 0)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
		p += n
	}
	if len(hs) != 3 || hs[0].BaseOffset != 1 || hs[0].RecordCount != 0 || hs[0].ProducerID != 42 || hs[0].BaseSequence != 1 {
		t.Fatalf("batches %+v: want producer 42's empty batch at 1, then [2, 3] and [4]", hs)
	}
	if st.EmptyBatchesKept != 1 {
		t.Fatalf("EmptyBatchesKept %d, want 1", st.EmptyBatchesKept)
	}
}

// Kafka (Cleaner.cleanInto, DELETE_EMPTY): an emptied batch that holds
// no producer's last sequence and does not end the cleaning round goes,
// even the last batch of the segments cleaned together, which leaves a
// gap before the next segment. The cleaner writes that batch only to
// mark the group's end while the swap is in flight and removes it once
// the cleaned segment is live, so a reader (librdkafka 2.0 gives up after
// ten fetches that yield nothing) is not served a segment holding nothing
// but an empty batch. The removed batch held the segment's largest
// timestamp: the time index ends at the largest that stays. The log
// reopens with the gap and the same end offset.
func TestEmptiedGroupEndGoesAfterTheSwap(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	cfg := logConfig()
	cfg.SegmentBytes = 160 // one segment per group: each is about 150 bytes
	l := openLog(t, dir, cfg)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	appendKV(t, l, record.CompressionNone, at(1), rec("a", "1")) // 0: stays
	appendKV(t, l, record.CompressionNone, at(2), rec("b", "1")) // 1: superseded, the group's last batch
	roll(t, l)
	appendKV(t, l, record.CompressionNone, at(3), rec("b", "2")) // 2: stays, the round's last batch
	roll(t, l)
	appendKV(t, l, record.CompressionNone, at(4), rec("c", "1")) // 3: active
	st := must[compaction.Stats](t)(compaction.Clean(l, compaction.DefaultConfig(), t0))
	if st.SegmentsWritten != 2 {
		t.Fatalf("wrote %d segments; want two, one per sealed segment", st.SegmentsWritten)
	}
	check := func(l *segment.Log) {
		t.Helper()
		var got []string
		for _, s := range l.Segments() {
			got = append(got, fmt.Sprintf("[%d,%d)", s.BaseOffset, s.NextOffset))
		}
		if fmt.Sprint(got) != "[[0,1) [2,3) [3,4)]" || l.EndOffset() != 4 {
			t.Fatalf("segments %v, end %d; want [[0,1) [2,3) [3,4)] (the empty batch at 1 gone) and 4", got, l.EndOffset())
		}
		recs := readAll(t, l)
		if len(recs) != 3 || recs[0].Offset != 0 || recs[1].Offset != 2 || recs[2].Offset != 3 {
			t.Fatalf("read %+v; want a=1, b=2, c=1 at 0, 2, 3", recs)
		}
		buf := must[[]byte](t)(l.ReadBytes(1, 1<<20))
		if h, _, err := record.NextBatch(buf, 0); err != nil || h.BaseOffset != 2 {
			t.Fatalf("a read at 1 starts with the batch at %d (%v); want the one at 2", h.BaseOffset, err)
		}
		// Entries are 12 bytes: timestamp int64, relative offset uint32.
		tidx := must[[]byte](t)(os.ReadFile(filepath.Join(dir, segment.FilenamePrefix(0)+segment.TimeIndexSuffix)))
		var ts int64
		rel := uint32(1 << 31)
		for p := 0; p+12 <= len(tidx) && binary.BigEndian.Uint64(tidx[p:]) != 0; p += 12 {
			ts, rel = int64(binary.BigEndian.Uint64(tidx[p:])), binary.BigEndian.Uint32(tidx[p+8:])
		}
		if ts != at(1).UnixMilli() || rel != 0 {
			t.Fatalf("segment 0's last time-index entry (%d, %d); want a=1's timestamp %d at offset 0", ts, rel, at(1).UnixMilli())
		}
	}
	check(l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, cfg)
	defer l.Close()
	check(l)
}

// Kafka 4.x (Cleaner.cleanInto): the last batch of the cleaning round,
// whose next offset is the first uncleanable offset, stays even emptied
// (RETAIN_EMPTY, "so that last offset information is not lost after
// cleaning"), though it holds no producer's sequence.
func TestEmptiedLastBatchOfTheRoundStays(t *testing.T) {
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	appendKV(t, l, record.CompressionNone, t0, rec("a", "1"))                // 0: stays
	appendKV(t, l, record.CompressionNone, t0, kv{Value: []byte("keyless")}) // 1: emptied, the round's last batch
	roll(t, l)
	appendKV(t, l, record.CompressionNone, t0, rec("c", "1")) // 2: active, uncleanable
	must[compaction.Stats](t)(compaction.Clean(l, compaction.DefaultConfig(), t0))
	buf := must[[]byte](t)(l.ReadBytes(0, 1<<20))
	var got []string
	for p := 0; p < len(buf); {
		h, n, err := record.NextBatch(buf[p:], 0)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d:%d", h.BaseOffset, h.RecordCount))
		p += n
	}
	if fmt.Sprint(got) != "[0:1 1:0]" {
		t.Fatalf("sealed batches (offset:records) %v; want [0:1 1:0], the round's last batch kept empty", got)
	}
}

// Kafka (UnifiedLog.replaceSegments, deleteProducerSnapshots): the
// producer state snapshots at the base offsets of the segments a
// cleaning replaces go with them, except where a cleaned segment starts;
// the others, the one at the log end among them, stay.
func TestCleaningDeletesTheReplacedSegmentsSnapshots(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	l := openLog(t, dir, logConfig())
	for i := range 4 { // segments at 0, 1, 2, 3 (snapshots at 1, 2, 3, 4 on roll), active at 4
		b := record.NewBatchBuilder(record.CompressionNone)
		b.SetProducer(7, 0, int32(i))
		// Now, so that the producer has not expired when the log reopens.
		b.Append(record.Record{Key: []byte("k"), Value: []byte(fmt.Sprint(i)), Timestamp: time.Now().UnixMilli()})
		must[segment.AppendInfo](t)(l.Append(must[[]byte](t)(b.Build())))
		roll(t, l)
	}
	appendKV(t, l, record.CompressionNone, t0, rec("other", "x"))
	snapshots := func() []string {
		names, _ := filepath.Glob(filepath.Join(dir, "*.snapshot"))
		for i, n := range names {
			names[i] = strings.TrimLeft(strings.TrimSuffix(filepath.Base(n), ".snapshot"), "0")
		}
		return names
	}
	for deadline := time.Now().Add(10 * time.Second); fmt.Sprint(snapshots()) != "[1 2 3 4]"; { // the flusher renames them in
		if time.Now().After(deadline) {
			t.Fatalf("snapshots before cleaning %v; want [1 2 3 4], one per roll", snapshots())
		}
		time.Sleep(5 * time.Millisecond)
	}
	st := must[compaction.Stats](t)(compaction.Clean(l, compaction.DefaultConfig(), t0))
	if st.SegmentsWritten != 1 {
		t.Fatalf("wrote %d segments; want one for segments 0-3", st.SegmentsWritten)
	}
	// Segments 1, 2 and 3 were replaced by the cleaned segment at 0: their
	// snapshots go; the one at 4, where the active segment starts, stays.
	if got := fmt.Sprint(snapshots()); got != "[4]" {
		t.Fatalf("snapshots after cleaning %s; want [4]", got)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, logConfig())
	defer l.Close()
	if ps := l.Producers(); len(ps) != 1 || ps[0].ProducerID != 7 || ps[0].LastOffset != 3 {
		t.Fatalf("producer state after reopening %+v; want producer 7 with its last batch at 3", ps)
	}
}

// Kafka: when the offset map fills, the pass cleans only up to the last
// mapped offset (endOffset = map.latestOffset + 1), checkpoints it, and
// the next pass continues from there.
func TestFullMapCleansWhatItCoversAndContinues(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	l := openLog(t, dir, logConfig())
	defer l.Close()
	for i := range 40 { // 40 distinct keys, each written twice in a row
		k := fmt.Sprint("k", i)
		appendKV(t, l, record.CompressionNone, t0, rec(k, "1"), rec(k, "2"))
		if i%10 == 9 {
			roll(t, l)
		}
	}
	cfg := compaction.DefaultConfig()
	cfg.DedupeBufferSize = 16 * 16
	cfg.IOBufferLoadFactor = 0.9 // 16 slots: 14 keys
	first := int64(0)
	for pass := 0; ; pass++ {
		st := must[compaction.Stats](t)(compaction.Clean(l, cfg, t0))
		if st.FirstDirty != first {
			t.Fatalf("pass %d started at %d, want the previous end %d", pass, st.FirstDirty, first)
		}
		cp := must[map[segment.TopicPartition]int64](t)(segment.ReadCheckpoint(nil, filepath.Join(dir, segment.CleanerOffsetCheckpointFile)))
		if cp[segment.TopicPartition{Topic: "t", Partition: 0}] != st.EndOffset {
			t.Fatalf("cleaner-offset-checkpoint %v, want t 0 %d", cp, st.EndOffset)
		}
		if !st.MapFull {
			break
		}
		if st.MapKeys != 14 || st.EndOffset <= first {
			t.Fatalf("pass %d: %d keys, end %d; want 14 keys and progress past %d", pass, st.MapKeys, st.EndOffset, first)
		}
		first = st.EndOffset
		if pass > 10 {
			t.Fatal("no end to the passes")
		}
	}
	if got := len(readAll(t, l)); got != 40 {
		t.Fatalf("%d records after the passes, want 40 (one per key)", got)
	}
}

// Kafka: segments are merged into groups up to segment.bytes, so cleaned
// segments do not shrink forever (groupSegmentsBySize).
func TestGroupsMergeSegmentsUpToSegmentBytes(t *testing.T) {
	for _, tc := range []struct {
		segmentBytes int64
		wantSegs     int
	}{{1 << 20, 1}, {400, 4}} { // a segment here is one ~160-byte batch
		cfg := logConfig()
		cfg.SegmentBytes = tc.segmentBytes
		l := openLog(t, t.TempDir(), cfg)
		for i := range 8 {
			appendKV(t, l, record.CompressionNone, t0, rec(fmt.Sprint(i), "0123456789012345678901234567890123456789"),
				rec(fmt.Sprint(i), "0123456789012345678901234567890123456789"))
			roll(t, l)
		}
		st := must[compaction.Stats](t)(compaction.Clean(l, compaction.DefaultConfig(), t0))
		if st.SegmentsRead != 8 || st.SegmentsWritten != tc.wantSegs || len(l.Segments()) != tc.wantSegs+1 {
			t.Errorf("segment.bytes=%d: read %d, wrote %d, log has %d; want 8, %d and %d + active",
				tc.segmentBytes, st.SegmentsRead, st.SegmentsWritten, len(l.Segments()), tc.wantSegs, tc.wantSegs)
		}
		l.Close()
	}
}

// A second pass on a log being cleaned is refused.
func TestCleanOnALogBeingCleanedIsRefused(t *testing.T) {
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	appendKV(t, l, record.CompressionNone, t0, rec("a", "1"))
	roll(t, l)
	if !compaction.Acquire(l) {
		t.Fatal("acquire of an idle log failed")
	}
	_, err := compaction.Clean(l, compaction.DefaultConfig(), t0)
	compaction.Release(l)
	if !errors.Is(err, compaction.ErrCleaningInProgress) {
		t.Fatalf("Clean during another pass: %v, want ErrCleaningInProgress", err)
	}
	if _, err := compaction.Clean(l, compaction.DefaultConfig(), t0); err != nil {
		t.Fatalf("Clean after the other pass: %v", err)
	}
}
