package segment_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

func open(t *testing.T, dir string, cfg segment.Config) *segment.Log {
	t.Helper()
	l, err := segment.Open(dir, cfg)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return l
}

// appendN appends n batches of recs records each and returns what each
// batch looks like in the log (base offset set).
func appendN(t *testing.T, l *segment.Log, n, recs, valueSize int, seed int64) [][]byte {
	t.Helper()
	var out [][]byte
	for i := 0; i < n; i++ {
		b := segmenttest.Batch(t, recs, valueSize, seed+int64(i), 0)
		info, err := l.Append(b)
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		out = append(out, segmenttest.WithBase(b, info.FirstOffset))
	}
	return out
}

// readAll reads every batch from the log start.
func readAll(t *testing.T, l *segment.Log) [][]byte {
	t.Helper()
	var out [][]byte
	for off := l.StartOffset(); off < l.EndOffset(); {
		buf, err := l.ReadBytes(off, 1<<20)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		bs := segmenttest.Batches(t, buf)
		if len(bs) == 0 {
			t.Fatalf("read at %d (end %d): no batch", off, l.EndOffset())
		}
		for _, b := range bs {
			h, _ := record.ParseHeader(b)
			out = append(out, append([]byte(nil), b...))
			off = h.NextOffset()
		}
	}
	return out
}

func equalBatches(t *testing.T, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d batches, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			gh, _ := record.ParseHeader(got[i])
			wh, _ := record.ParseHeader(want[i])
			t.Fatalf("batch %d differs: got base %d (%d bytes), want base %d (%d bytes)", i, gh.BaseOffset, len(got[i]), wh.BaseOffset, len(want[i]))
		}
	}
}

func TestAppendAssignsDenseOffsetsAndReadsBack(t *testing.T) {
	l := open(t, t.TempDir(), segment.DefaultConfig())
	defer l.Close()
	want := appendN(t, l, 50, 7, 100, 1)
	if got := l.EndOffset(); got != 350 {
		t.Fatalf("end offset %d, want 350", got)
	}
	equalBatches(t, readAll(t, l), want)
	// Reading at any offset inside a batch returns that batch first.
	for off := int64(0); off < 350; off += 13 {
		buf, err := l.ReadBytes(off, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf, want[off/7]) {
			t.Fatalf("read at %d: not batch %d", off, off/7)
		}
	}
}

func TestReadAtEndIsEmptyAndPastEndIsOutOfRange(t *testing.T) {
	l := open(t, t.TempDir(), segment.DefaultConfig())
	defer l.Close()
	appendN(t, l, 1, 3, 10, 1)
	r, err := l.Read(3, 1<<20)
	if err != nil || r.Len != 0 {
		t.Fatalf("read at end: %+v, %v", r, err)
	}
	if _, err := l.Read(4, 1<<20); !errors.Is(err, segment.ErrOffsetOutOfRange) {
		t.Fatalf("read past end: %v, want ErrOffsetOutOfRange", err)
	}
	if _, err := l.Read(-1, 1<<20); !errors.Is(err, segment.ErrOffsetOutOfRange) {
		t.Fatalf("read below start: %v, want ErrOffsetOutOfRange", err)
	}
}

// Kafka: KIP-74, a first batch larger than the fetch size is still returned.
func TestReadReturnsAtLeastOneBatch(t *testing.T) {
	l := open(t, t.TempDir(), segment.DefaultConfig())
	defer l.Close()
	want := appendN(t, l, 2, 10, 1000, 1)
	buf, err := l.ReadBytes(0, 10)
	if err != nil || !bytes.Equal(buf, want[0]) {
		t.Fatalf("got %d bytes, %v; want first batch (%d bytes)", len(buf), err, len(want[0]))
	}
	r, err := l.ReadBounded(0, 10, l.EndOffset(), false)
	if err != nil || r.Len != 10 {
		t.Fatalf("without minOneBatch: region %d bytes, %v; want the 10 bytes asked", r.Len, err)
	}
}

func TestReadBoundedStopsBeforeUpTo(t *testing.T) {
	l := open(t, t.TempDir(), segment.DefaultConfig())
	defer l.Close()
	want := appendN(t, l, 5, 2, 50, 1) // offsets 0..9, batches at 0,2,4,6,8
	buf, err := l.ReadBounded(0, 1<<20, 6, true)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := buf.Bytes()
	if !bytes.Equal(b, bytes.Join(want[:3], nil)) {
		t.Fatalf("bounded read returned %d bytes, want the first three batches", len(b))
	}
}

// Kafka: LogSegment.shouldRoll on segment.bytes; files named by base offset.
func TestRollOnSegmentBytes(t *testing.T) {
	dir := t.TempDir()
	cfg := segment.DefaultConfig()
	cfg.SegmentBytes = 4096
	l := open(t, dir, cfg)
	want := appendN(t, l, 40, 5, 200, 1)
	segs := l.Segments()
	if len(segs) < 10 {
		t.Fatalf("%d segments, want at least 10", len(segs))
	}
	for i, s := range segs {
		if s.Size > 4096 {
			t.Fatalf("segment %d is %d bytes, over segment.bytes", i, s.Size)
		}
		if filepath.Base(s.Path) != segment.FilenamePrefix(s.BaseOffset)+".log" {
			t.Fatalf("segment file %s", s.Path)
		}
		if i > 0 && s.BaseOffset != segs[i-1].NextOffset {
			t.Fatalf("segment %d base %d, previous ends at %d", i, s.BaseOffset, segs[i-1].NextOffset)
		}
	}
	equalBatches(t, readAll(t, l), want)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	cfg = segment.DefaultConfig()
	cfg.SegmentBytes = 4096
	l = open(t, dir, cfg)
	defer l.Close()
	if !l.Recovery().CleanShutdown || l.Recovery().SegmentsRecovered != 0 {
		t.Fatalf("clean reopen recovered: %+v", l.Recovery())
	}
	equalBatches(t, readAll(t, l), want)
	more := appendN(t, l, 1, 1, 10, 99)
	if h, _ := record.ParseHeader(more[0]); h.BaseOffset != 200 {
		t.Fatalf("append after reopen got offset %d, want 200", h.BaseOffset)
	}
}

func TestRollOnSegmentMs(t *testing.T) {
	cfg := segment.DefaultConfig()
	cfg.SegmentMs = time.Hour
	l := open(t, t.TempDir(), cfg)
	defer l.Close()
	t0 := time.Now().UnixMilli()
	for i, ts := range []int64{t0, t0 + 1000, t0 + 3600_000 + 1, t0 + 3600_000 + 2} {
		if _, err := l.Append(segmenttest.Batch(t, 1, 10, int64(i), ts)); err != nil {
			t.Fatal(err)
		}
	}
	segs := l.Segments()
	if len(segs) != 2 || segs[1].BaseOffset != 2 {
		t.Fatalf("segments %+v, want a roll at offset 2 (an hour after the first batch)", segs)
	}
}

func TestRollOnFullIndex(t *testing.T) {
	// 48 bytes: 6 offset entries, 4 time entries of which one is reserved.
	cfg := segment.DefaultConfig()
	cfg.SegmentIndexBytes = 48
	cfg.IndexIntervalBytes = 1
	l := open(t, t.TempDir(), cfg)
	defer l.Close()
	ts := time.Now().UnixMilli()
	for i := 0; i < 20; i++ {
		if _, err := l.Append(segmenttest.Batch(t, 1, 10, int64(i), ts+int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(l.Segments()); n < 4 {
		t.Fatalf("%d segments, want rolls on a full time index", n)
	}
}

func TestRejectsInvalidBatchesAndStoresNothing(t *testing.T) {
	cfg := segment.DefaultConfig()
	cfg.MaxMessageBytes = 2000
	l := open(t, t.TempDir(), cfg)
	defer l.Close()
	good := segmenttest.Batch(t, 3, 10, 1, 0)
	bad := append([]byte(nil), good...)
	bad[len(bad)-1] ^= 1
	big := segmenttest.Batch(t, 1, 3000, 1, 0)
	for name, b := range map[string][]byte{
		"bad crc":        bad,
		"too large":      big,
		"empty":          nil,
		"truncated":      good[:len(good)-1],
		"good then torn": append(append([]byte(nil), good...), good[:30]...),
	} {
		if _, err := l.Append(b); err == nil {
			t.Errorf("%s: append accepted", name)
		}
	}
	if l.EndOffset() != 0 || l.Size() != 0 {
		t.Fatalf("log changed: end %d, size %d", l.EndOffset(), l.Size())
	}
}

func TestFlushMessagesOneMakesEveryAppendDurable(t *testing.T) {
	cfg := segment.DefaultConfig()
	cfg.FlushMessages = 1
	cfg.SegmentBytes = 2048
	l := open(t, t.TempDir(), cfg)
	defer l.Close()
	for i := 0; i < 30; i++ {
		info, err := l.Append(segmenttest.Batch(t, 2, 100, int64(i), 0))
		if err != nil {
			t.Fatal(err)
		}
		if rp := l.RecoveryPoint(); rp < info.LastOffset+1 {
			t.Fatalf("after append ending at %d the recovery point is %d", info.LastOffset, rp)
		}
	}
}

func TestNoFlushPolicyLeavesRecoveryPointBehind(t *testing.T) {
	l := open(t, t.TempDir(), segment.DefaultConfig())
	defer l.Close()
	appendN(t, l, 10, 2, 10, 1)
	if rp := l.RecoveryPoint(); rp != 0 {
		t.Fatalf("recovery point %d without any flush, want 0", rp)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if rp := l.RecoveryPoint(); rp != 20 {
		t.Fatalf("recovery point %d after Flush, want 20", rp)
	}
}

func TestFlushMsFlushesInTheBackground(t *testing.T) {
	cfg := segment.DefaultConfig()
	cfg.FlushMs = 20 * time.Millisecond
	l := open(t, t.TempDir(), cfg)
	defer l.Close()
	appendN(t, l, 3, 1, 10, 1)
	deadline := time.Now().Add(5 * time.Second)
	for l.RecoveryPoint() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("recovery point %d five seconds after appends with flush.ms=20", l.RecoveryPoint())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Kafka: a rolled segment is flushed asynchronously and the recovery
// point moves past it.
func TestRolledSegmentsAreFlushedOffThePath(t *testing.T) {
	cfg := segment.DefaultConfig()
	cfg.SegmentBytes = 1024
	l := open(t, t.TempDir(), cfg)
	defer l.Close()
	appendN(t, l, 20, 1, 200, 1)
	segs := l.Segments()
	deadline := time.Now().Add(5 * time.Second)
	for l.RecoveryPoint() < segs[len(segs)-1].BaseOffset {
		if time.Now().After(deadline) {
			t.Fatalf("recovery point %d, active segment starts at %d", l.RecoveryPoint(), segs[len(segs)-1].BaseOffset)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestWriteErrorIsSticky(t *testing.T) {
	fs := segmenttest.NewFaultFS()
	cfg := segment.DefaultConfig()
	cfg.FS = fs
	l := open(t, t.TempDir(), cfg)
	defer l.Close()
	appendN(t, l, 2, 1, 10, 1)
	fs.CutWritesAfter(5)
	if _, err := l.Append(segmenttest.Batch(t, 1, 10, 9, 0)); err == nil {
		t.Fatal("append with a failing write succeeded")
	}
	fs.CutWritesAfter(-1)
	if _, err := l.Append(segmenttest.Batch(t, 1, 10, 9, 0)); !errors.Is(err, segment.ErrLogFailed) {
		t.Fatalf("append after a failed write: %v, want ErrLogFailed", err)
	}
}

func TestFailedFsyncFailsTheAppendAndSticks(t *testing.T) {
	fs := segmenttest.NewFaultFS()
	cfg := segment.DefaultConfig()
	cfg.FS = fs
	cfg.FlushMessages = 1
	l := open(t, t.TempDir(), cfg)
	defer l.Close()
	appendN(t, l, 1, 1, 10, 1)
	fs.FailSyncs(true)
	if _, err := l.Append(segmenttest.Batch(t, 1, 10, 2, 0)); !errors.Is(err, segmenttest.ErrInjected) {
		t.Fatalf("append with failing fsync: %v", err)
	}
	fs.FailSyncs(false)
	if _, err := l.Append(segmenttest.Batch(t, 1, 10, 3, 0)); !errors.Is(err, segment.ErrLogFailed) {
		t.Fatalf("append after failed fsync: %v, want ErrLogFailed", err)
	}
}

// Kafka: UnifiedLog.truncateTo, as a follower does after a leader change.
func TestTruncateTo(t *testing.T) {
	dir := t.TempDir()
	cfg := segment.DefaultConfig()
	cfg.SegmentBytes = 1024
	l := open(t, dir, cfg)
	want := appendN(t, l, 30, 2, 100, 1) // batch i holds offsets 2i, 2i+1
	if err := l.TruncateTo(31); err != nil {
		t.Fatal(err)
	}
	// Offset 31 is inside batch 15: the whole batch goes.
	if l.EndOffset() != 30 {
		t.Fatalf("end offset %d after truncating to 31, want 30", l.EndOffset())
	}
	equalBatches(t, readAll(t, l), want[:15])
	again := appendN(t, l, 2, 2, 100, 77)
	if h, _ := record.ParseHeader(again[0]); h.BaseOffset != 30 {
		t.Fatalf("append after truncation at offset %d", h.BaseOffset)
	}
	l.Close()
	cfg = segment.DefaultConfig()
	cfg.SegmentBytes = 1024
	l = open(t, dir, cfg)
	defer l.Close()
	equalBatches(t, readAll(t, l), append(want[:15:15], again...))
}

func TestTruncateFullyAndStartAt(t *testing.T) {
	dir := t.TempDir()
	cfg := segment.DefaultConfig()
	cfg.SegmentBytes = 1024
	l := open(t, dir, cfg)
	appendN(t, l, 20, 1, 100, 1)
	if err := l.TruncateFullyAndStartAt(1000); err != nil {
		t.Fatal(err)
	}
	if l.StartOffset() != 1000 || l.EndOffset() != 1000 || len(l.Segments()) != 1 {
		t.Fatalf("start %d end %d segments %d", l.StartOffset(), l.EndOffset(), len(l.Segments()))
	}
	appendN(t, l, 1, 1, 10, 1)
	l.Close()
	cfg = segment.DefaultConfig()
	cfg.SegmentBytes = 1024
	l = open(t, dir, cfg)
	defer l.Close()
	if l.StartOffset() != 1000 || l.EndOffset() != 1001 {
		t.Fatalf("after reopen: start %d end %d", l.StartOffset(), l.EndOffset())
	}
}

// Kafka: deleted segments are renamed *.deleted and removed after
// file.delete.delay.ms; in-flight readers keep their file.
func TestDeleteSegmentsKeepsReadsInProgressWhole(t *testing.T) {
	dir := t.TempDir()
	cfg := segment.DefaultConfig()
	cfg.SegmentBytes = 1024
	cfg.FileDeleteDelay = time.Hour
	l := open(t, dir, cfg)
	defer l.Close()
	want := appendN(t, l, 20, 1, 200, 1)
	region, err := l.Read(0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	segs := l.Segments()
	removed, err := l.DeleteSegmentsBefore(segs[2].BaseOffset)
	if err != nil || len(removed) != 2 {
		t.Fatalf("removed %d, %v", len(removed), err)
	}
	if l.StartOffset() != segs[2].BaseOffset {
		t.Fatalf("start offset %d, want %d", l.StartOffset(), segs[2].BaseOffset)
	}
	if _, err := l.Read(0, 100); !errors.Is(err, segment.ErrOffsetOutOfRange) {
		t.Fatalf("read below new start: %v", err)
	}
	got, err := region.Bytes()
	if err != nil || !bytes.HasPrefix(got, want[0]) {
		t.Fatalf("a region taken before deletion no longer reads: %v", err)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*.deleted"))
	if len(matches) != 6 {
		t.Fatalf("%d *.deleted files, want 6 (three per segment)", len(matches))
	}
}

func TestDeleteAllSegmentsRollsFirst(t *testing.T) {
	cfg := segment.DefaultConfig()
	cfg.FileDeleteDelay = time.Millisecond
	l := open(t, t.TempDir(), cfg)
	defer l.Close()
	appendN(t, l, 5, 1, 10, 1)
	if _, err := l.DeleteSegmentsBefore(5); err != nil {
		t.Fatal(err)
	}
	if l.StartOffset() != 5 || l.EndOffset() != 5 || len(l.Segments()) != 1 {
		t.Fatalf("start %d end %d segs %d", l.StartOffset(), l.EndOffset(), len(l.Segments()))
	}
	appendN(t, l, 1, 1, 10, 2)
	if l.EndOffset() != 6 {
		t.Fatalf("end %d", l.EndOffset())
	}
}

func TestStartOffsetIsCheckpointed(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, segment.DefaultConfig())
	appendN(t, l, 10, 1, 10, 1)
	if err := l.SetStartOffset(4); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l = open(t, dir, segment.DefaultConfig())
	defer l.Close()
	if l.StartOffset() != 4 {
		t.Fatalf("start offset %d after reopen, want 4", l.StartOffset())
	}
	data, err := os.ReadFile(filepath.Join(dir, segment.LogStartOffsetCheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	tp := segment.ParseTopicPartition(filepath.Base(dir))
	if want := "0\n1\n" + tp.Topic + " " + "0 4\n"; string(data) != want && tp.Partition == 0 {
		t.Fatalf("checkpoint file %q, want %q", data, want)
	}
}

// Kafka: ListOffsets by timestamp returns the first record with ts >= T.
func TestOffsetForTime(t *testing.T) {
	cfg := segment.DefaultConfig()
	cfg.SegmentBytes = 2048
	cfg.IndexIntervalBytes = 100
	l := open(t, t.TempDir(), cfg)
	defer l.Close()
	base := time.Now().UnixMilli()
	for i := 0; i < 100; i++ {
		if _, err := l.Append(segmenttest.Batch(t, 2, 50, int64(i), base+int64(i)*10)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		ts    int64
		want  int64
		found bool
	}{{base - 5, 0, true}, {base, 0, true}, {base + 1, 2, true}, {base + 500, 100, true}, {base + 990, 198, true}, {base + 991, 0, false}} {
		off, _, found, err := l.OffsetForTime(tc.ts)
		if err != nil || found != tc.found || (found && off != tc.want) {
			t.Errorf("OffsetForTime(base+%d) = %d, %v, %v; want %d, %v", tc.ts-base, off, found, err, tc.want, tc.found)
		}
	}
}

func TestAppendReplicatedKeepsOffsetsAndRejectsGoingBack(t *testing.T) {
	l := open(t, t.TempDir(), segment.DefaultConfig())
	defer l.Close()
	b := segmenttest.WithBase(segmenttest.Batch(t, 3, 10, 1, 0), 0)
	c := segmenttest.WithBase(segmenttest.Batch(t, 3, 10, 2, 0), 3)
	if _, err := l.AppendReplicated(append(append([]byte(nil), b...), c...)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendReplicated(segmenttest.WithBase(segmenttest.Batch(t, 1, 10, 3, 0), 5)); !errors.Is(err, segment.ErrNonContiguous) {
		t.Fatalf("append below the end: %v", err)
	}
	equalBatches(t, readAll(t, l), [][]byte{b, c})
}

func TestLeftoversAreCleanedAtOpen(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, segment.DefaultConfig())
	appendN(t, l, 3, 1, 10, 1)
	l.Close()
	for _, name := range []string{"00000000000000000007.log.deleted", "00000000000000000008.log.cleaned", "00000000000000000009.index", "recovery-point-offset-checkpoint.tmp"} {
		os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644)
	}
	l = open(t, dir, segment.DefaultConfig())
	defer l.Close()
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, n := range names {
		if filepath.Ext(n) == ".deleted" || filepath.Ext(n) == ".cleaned" || filepath.Ext(n) == ".tmp" || n == "00000000000000000009.index" {
			t.Fatalf("leftover %s survived open: %v", n, names)
		}
	}
}

// Kafka: topic config changes reach a live log (segment.bytes, flush.ms).
func TestUpdateConfigTakesEffect(t *testing.T) {
	l := open(t, t.TempDir(), segment.DefaultConfig())
	defer l.Close()
	appendN(t, l, 5, 1, 500, 1)
	if n := len(l.Segments()); n != 1 {
		t.Fatalf("%d segments before the change", n)
	}
	cfg := segment.DefaultConfig()
	cfg.SegmentBytes = 1024
	cfg.FlushMs = 10 * time.Millisecond
	if err := l.UpdateConfig(cfg); err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 5, 1, 500, 2)
	if n := len(l.Segments()); n < 4 {
		t.Fatalf("%d segments after lowering segment.bytes, want rolls", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for l.RecoveryPoint() < l.EndOffset() {
		if time.Now().After(deadline) {
			t.Fatalf("flush.ms set at run time never flushed: recovery point %d, end %d", l.RecoveryPoint(), l.EndOffset())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cfg = segment.DefaultConfig()
	cfg.SegmentBytes = 1
	if err := l.UpdateConfig(cfg); !errors.Is(err, segment.ErrInvalidConfig) {
		t.Fatalf("invalid segment.bytes: %v", err)
	}
}

// flush.ms=T flushes about every T, not every 2T: a flush is due T after
// the previous one started.
func TestFlushMsCadence(t *testing.T) {
	var flushes atomic.Int64
	cfg := segment.DefaultConfig()
	cfg.FlushMs = 50 * time.Millisecond
	cfg.OnFlush = func(time.Duration) { flushes.Add(1) }
	l := open(t, t.TempDir(), cfg)
	defer l.Close()
	stop := time.After(time.Second)
	for i := int64(0); ; i++ {
		select {
		case <-stop:
			// 1 s at 50 ms: 20 flushes if on time, 10 at the old 2T cadence.
			if n := flushes.Load(); n < 14 {
				t.Fatalf("%d flushes in 1 s with flush.ms=50", n)
			}
			return
		default:
		}
		if _, err := l.Append(segmenttest.Batch(t, 1, 10, i, 0)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Kafka: the leader stamps its epoch on every batch it appends; a plain
// Append leaves the producer's value.
func TestAppendWithEpochStampsTheLeaderEpoch(t *testing.T) {
	l := open(t, t.TempDir(), segment.DefaultConfig())
	defer l.Close()
	two := append(segmenttest.Batch(t, 2, 10, 1, 0), segmenttest.Batch(t, 1, 10, 2, 0)...)
	if _, err := l.AppendWithEpoch(two, 7); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(segmenttest.Batch(t, 1, 10, 3, 0)); err != nil {
		t.Fatal(err)
	}
	buf, _ := l.ReadBytes(0, 1<<20)
	var epochs []int32
	for _, b := range segmenttest.Batches(t, buf) {
		h, _ := record.ParseHeader(b)
		epochs = append(epochs, h.PartitionLeaderEpoch)
	}
	if len(epochs) != 3 || epochs[0] != 7 || epochs[1] != 7 || epochs[2] == 7 {
		t.Fatalf("leader epochs %v, want [7 7 <producer's>]", epochs)
	}
}

// A segment truncated away must not keep its name: recovery would bring
// its records back (divergent records, for a follower that truncated
// after a leader change). When the rename fails, the truncation fails
// and the log stops taking appends until it is reopened.
func TestTruncateToFailsWhenARemovedSegmentKeepsItsName(t *testing.T) {
	fs := &failDeletedRenames{FaultFS: segmenttest.NewFaultFS()}
	cfg := segment.DefaultConfig()
	cfg.FS, cfg.SegmentBytes = fs, 200
	l := open(t, t.TempDir(), cfg)
	defer l.Close()
	appendN(t, l, 6, 1, 100, 1) // a segment per batch or two
	if n := len(l.Segments()); n < 3 {
		t.Fatalf("%d segments, want at least 3", n)
	}
	fs.fail.Store(true) // renames to *.deleted fail from here on, nothing else
	if err := l.TruncateTo(1); !errors.Is(err, segmenttest.ErrInjected) {
		t.Fatalf("truncate with failing renames: %v, want the rename's error", err)
	}
	fs.fail.Store(false)
	if _, err := l.Append(segmenttest.Batch(t, 1, 10, 9, 0)); !errors.Is(err, segment.ErrLogFailed) {
		t.Fatalf("append after a failed truncation: %v, want ErrLogFailed", err)
	}
}

// failDeletedRenames fails only the renames that retire a segment.
type failDeletedRenames struct {
	*segmenttest.FaultFS
	fail atomic.Bool
}

func (f *failDeletedRenames) Rename(oldpath, newpath string) error {
	if f.fail.Load() && strings.HasSuffix(newpath, segment.DeletedSuffix) {
		return segmenttest.ErrInjected
	}
	return f.FaultFS.Rename(oldpath, newpath)
}
