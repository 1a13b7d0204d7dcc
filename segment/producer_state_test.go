package segment_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// idem describes one idempotent producer batch.
type idem struct {
	pid   int64
	epoch int16
	seq   int32
	n     int   // records
	ts    int64 // record timestamps; 0 means now
}

// build returns the batch; the same idem always builds the same bytes
// when ts is set.
func (b idem) build(t testing.TB) []byte {
	t.Helper()
	out, err := b.bytes()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (b idem) bytes() ([]byte, error) {
	bb := record.NewBatchBuilder(record.CompressionNone)
	bb.SetProducer(b.pid, b.epoch, b.seq)
	ts := b.ts
	if ts == 0 {
		ts = time.Now().UnixMilli()
	}
	for i := 0; i < b.n; i++ {
		bb.Append(record.Record{Key: []byte(fmt.Sprintf("p%d-e%d-s%d-%d", b.pid, b.epoch, b.seq, i)),
			Value: make([]byte, 40), Timestamp: ts})
	}
	return bb.Build()
}

func (b idem) lastSeq() int32 { return b.seq + int32(b.n) - 1 }

// next is the batch of n records that follows b.
func (b idem) next(n int) idem {
	return idem{pid: b.pid, epoch: b.epoch, seq: b.lastSeq() + 1, n: n, ts: b.ts}
}

// mustAppend appends b and requires a fresh (non-duplicate) write.
func mustAppend(t testing.TB, l *segment.Log, b idem) segment.AppendInfo {
	t.Helper()
	info, err := l.Append(b.build(t))
	if err != nil {
		t.Fatalf("append %+v: %v", b, err)
	}
	if info.Duplicate {
		t.Fatalf("append %+v: reported as a duplicate of [%d, %d]", b, info.FirstOffset, info.LastOffset)
	}
	return info
}

// mustDuplicate retries b and requires it to be recognised as the batch
// written at [first, last], with nothing written.
func mustDuplicate(t testing.TB, l *segment.Log, b idem, first, last int64) {
	t.Helper()
	end, size := l.EndOffset(), l.Size()
	info, err := l.Append(b.build(t))
	if err != nil {
		t.Fatalf("retry %+v: %v", b, err)
	}
	if !info.Duplicate || info.FirstOffset != first || info.LastOffset != last {
		t.Fatalf("retry %+v: got %+v, want a duplicate of [%d, %d]", b, info, first, last)
	}
	if l.EndOffset() != end || l.Size() != size {
		t.Fatalf("retry %+v wrote: end %d -> %d, size %d -> %d", b, end, l.EndOffset(), size, l.Size())
	}
}

// mustRefuse appends b and requires the error want, with nothing written.
func mustRefuse(t testing.TB, l *segment.Log, b idem, want error) {
	t.Helper()
	end, size := l.EndOffset(), l.Size()
	info, err := l.Append(b.build(t))
	if !errors.Is(err, want) {
		t.Fatalf("append %+v: got %+v, %v; want %v", b, info, err, want)
	}
	if l.EndOffset() != end || l.Size() != size {
		t.Fatalf("refused append %+v wrote: end %d -> %d, size %d -> %d", b, end, l.EndOffset(), size, l.Size())
	}
}

func quietConfig() segment.Config {
	cfg := segment.DefaultConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	return cfg
}

// Kafka: UnifiedLog.analyzeAndValidateProducerState and
// ProducerStateEntry.findDuplicateBatch. A retry of a batch already in
// the log is answered with the original batch's offsets and not written.
func TestProducerDuplicateRetryReturnsOriginalOffsets(t *testing.T) {
	l := open(t, t.TempDir(), quietConfig())
	defer l.Close()
	b0 := idem{pid: 7, epoch: 0, seq: 0, n: 3}
	b1 := b0.next(2)
	i0, i1 := mustAppend(t, l, b0), mustAppend(t, l, b1)
	if i0.FirstOffset != 0 || i0.LastOffset != 2 || i1.FirstOffset != 3 || i1.LastOffset != 4 {
		t.Fatalf("offsets %+v %+v", i0, i1)
	}
	appendN(t, l, 1, 2, 10, 99) // a batch without a producer in between
	mustDuplicate(t, l, b0, 0, 2)
	mustDuplicate(t, l, b1, 3, 4)
	// A retried request holding a new batch then a duplicate is answered
	// with the duplicate and writes nothing (Kafka returns at the first).
	b2 := b1.next(1)
	end := l.EndOffset()
	info, err := l.Append(append(b2.build(t), b1.build(t)...))
	if err != nil || !info.Duplicate || info.FirstOffset != 3 || l.EndOffset() != end {
		t.Fatalf("new+duplicate append: %+v, %v, end %d -> %d", info, err, end, l.EndOffset())
	}
	mustAppend(t, l, b2)
}

// Kafka: ProducerAppendInfo.checkSequence. A sequence that skips ahead
// is OUT_OF_ORDER_SEQUENCE_NUMBER and writes nothing.
func TestProducerSequenceGapIsOutOfOrder(t *testing.T) {
	l := open(t, t.TempDir(), quietConfig())
	defer l.Close()
	b0 := idem{pid: 7, seq: 0, n: 2}
	mustAppend(t, l, b0)
	mustRefuse(t, l, idem{pid: 7, seq: 5, n: 1}, segment.ErrOutOfOrderSequence)
	mustRefuse(t, l, idem{pid: 7, seq: 1, n: 1}, segment.ErrOutOfOrderSequence) // overlaps, not a duplicate
	mustAppend(t, l, b0.next(1))
	if ps, ok := l.ProducerState(7); !ok || ps.LastSequence != 2 || ps.LastOffset != 2 {
		t.Fatalf("state %+v, %v", ps, ok)
	}
}

// Kafka: ProducerAppendInfo.checkProducerEpoch. A batch from an older
// epoch (a fenced, zombie producer) is INVALID_PRODUCER_EPOCH, even when
// its sequence would fit.
func TestProducerLowerEpochIsFenced(t *testing.T) {
	l := open(t, t.TempDir(), quietConfig())
	defer l.Close()
	mustAppend(t, l, idem{pid: 7, epoch: 3, seq: 0, n: 1})
	mustRefuse(t, l, idem{pid: 7, epoch: 2, seq: 1, n: 1}, segment.ErrInvalidProducerEpoch)
	mustRefuse(t, l, idem{pid: 7, epoch: 2, seq: 0, n: 1}, segment.ErrInvalidProducerEpoch)
}

// Kafka: a new epoch (after InitProducerId) must start at sequence 0 and
// forgets the old epoch's batches.
func TestProducerEpochBumpResetsSequence(t *testing.T) {
	l := open(t, t.TempDir(), quietConfig())
	defer l.Close()
	old := idem{pid: 7, epoch: 0, seq: 0, n: 4}
	mustAppend(t, l, old)
	mustRefuse(t, l, idem{pid: 7, epoch: 1, seq: 4, n: 1}, segment.ErrOutOfOrderSequence)
	fresh := idem{pid: 7, epoch: 1, seq: 0, n: 2}
	mustAppend(t, l, fresh)
	mustRefuse(t, l, old, segment.ErrInvalidProducerEpoch) // a retry from the old epoch is fenced
	mustDuplicate(t, l, fresh, 4, 5)
	if ps, _ := l.ProducerState(7); ps.Epoch != 1 || len(ps.Batches) != 1 {
		t.Fatalf("state after the bump: %+v", ps)
	}
}

// Kafka: ProducerStateEntry.NUM_BATCHES_TO_RETAIN = 5. Retries of the
// last five batches are duplicates; an older one is out of order.
func TestProducerWindowOfFive(t *testing.T) {
	l := open(t, t.TempDir(), quietConfig())
	defer l.Close()
	var bs []idem
	var infos []segment.AppendInfo
	b := idem{pid: 7, seq: 0, n: 2}
	for i := 0; i < 7; i++ {
		bs, infos = append(bs, b), append(infos, mustAppend(t, l, b))
		b = b.next(1 + i%3)
	}
	for i := 2; i < 7; i++ {
		mustDuplicate(t, l, bs[i], infos[i].FirstOffset, infos[i].LastOffset)
	}
	mustRefuse(t, l, bs[1], segment.ErrOutOfOrderSequence)
	if ps, _ := l.ProducerState(7); len(ps.Batches) != segment.NumBatchesToRetain {
		t.Fatalf("%d batches remembered, want %d", len(ps.Batches), segment.NumBatchesToRetain)
	}
}

// Kafka 3.x/4.x (KIP-360): the leader accepts any sequence from a
// producer it does not know, instead of UNKNOWN_PRODUCER_ID.
func TestProducerUnknownAcceptsAnySequence(t *testing.T) {
	l := open(t, t.TempDir(), quietConfig())
	defer l.Close()
	b := idem{pid: 9, epoch: 4, seq: 42, n: 2}
	mustAppend(t, l, b)
	mustAppend(t, l, b.next(1))
	mustDuplicate(t, l, b, 0, 1)
}

// Kafka: DefaultRecordBatch.incrementSequence. Sequences wrap from
// MaxInt32 to 0.
func TestProducerSequenceWrapsAround(t *testing.T) {
	l := open(t, t.TempDir(), quietConfig())
	defer l.Close()
	wrap := idem{pid: 7, seq: math.MaxInt32 - 1, n: 3} // sequences MaxInt32-1, MaxInt32, 0
	mustAppend(t, l, wrap)
	if ps, _ := l.ProducerState(7); ps.LastSequence != 0 {
		t.Fatalf("last sequence %d, want 0 after the wrap", ps.LastSequence)
	}
	mustRefuse(t, l, idem{pid: 7, seq: 0, n: 1}, segment.ErrOutOfOrderSequence)
	mustAppend(t, l, idem{pid: 7, seq: 1, n: 1})
	mustDuplicate(t, l, wrap, 0, 2)
}

// Kafka: the batches of one append are checked one by one, each against
// the state the earlier ones leave, and the append is all or nothing.
func TestProducerMultiBatchAppendIsAllOrNothing(t *testing.T) {
	l := open(t, t.TempDir(), quietConfig())
	defer l.Close()
	a := idem{pid: 7, seq: 0, n: 2}
	mustAppend(t, l, a)
	b := a.next(3)
	bad := append(b.build(t), idem{pid: 7, seq: 9, n: 1}.build(t)...)
	if _, err := l.Append(bad); !errors.Is(err, segment.ErrOutOfOrderSequence) {
		t.Fatalf("got %v, want ErrOutOfOrderSequence", err)
	}
	if l.EndOffset() != 2 {
		t.Fatalf("refused append wrote up to %d", l.EndOffset())
	}
	if ps, _ := l.ProducerState(7); ps.LastSequence != a.lastSeq() {
		t.Fatalf("a refused append changed the producer state: %+v", ps)
	}
	other := idem{pid: 8, seq: 0, n: 1}
	good := append(append(b.build(t), b.next(1).build(t)...), other.build(t)...)
	info, err := l.Append(good)
	if err != nil || info.FirstOffset != 2 || info.LastOffset != 6 {
		t.Fatalf("good multi-batch append: %+v, %v", info, err)
	}
	mustDuplicate(t, l, b, 2, 4)
	mustDuplicate(t, l, b.next(1), 5, 5)
	mustDuplicate(t, l, other, 6, 6)
}

// Kafka: LogValidator refuses a control batch from a client and a
// producer id without a sequence (INVALID_RECORD).
func TestProducerClientBatchChecks(t *testing.T) {
	l := open(t, t.TempDir(), quietConfig())
	defer l.Close()
	noSeq := idem{pid: 7, seq: -1, n: 1}.build(t)
	if _, err := l.Append(noSeq); !errors.Is(err, record.ErrInvalidRecord) || !errors.Is(err, record.ErrCorruptBatch) {
		t.Fatalf("batch with a producer id and no sequence: %v", err)
	}
	ctrl := withAttributes(idem{pid: 7, seq: 0, n: 1}.build(t), record.AttrControl)
	if _, err := l.Append(ctrl); !errors.Is(err, record.ErrInvalidRecord) {
		t.Fatalf("control batch from a client: %v", err)
	}
	if l.EndOffset() != 0 {
		t.Fatalf("refused batches wrote up to %d", l.EndOffset())
	}
}

// withAttributes sets attribute bits and recomputes the CRC.
func withAttributes(b []byte, bits int16) []byte {
	attrs := int16(b[record.AttributesPos])<<8 | int16(b[record.AttributesPos+1]) | bits
	b[record.AttributesPos], b[record.AttributesPos+1] = byte(attrs>>8), byte(attrs)
	crc := crc32.Checksum(b[record.AttributesPos:], crc32.MakeTable(crc32.Castagnoli))
	b[record.CRCPos], b[record.CRCPos+1], b[record.CRCPos+2], b[record.CRCPos+3] = byte(crc>>24), byte(crc>>16), byte(crc>>8), byte(crc)
	return b
}

// Kafka: AppendOrigin.REPLICATION. A follower takes the leader's batches
// as they are (gaps, older epochs) and updates producer state from them.
func TestAppendReplicatedUpdatesProducerStateWithoutChecks(t *testing.T) {
	l := open(t, t.TempDir(), quietConfig())
	defer l.Close()
	off := int64(0)
	for _, b := range []idem{{pid: 7, epoch: 2, seq: 0, n: 2}, {pid: 7, epoch: 2, seq: 10, n: 1}, {pid: 7, epoch: 1, seq: 3, n: 1}} {
		raw := b.build(t)
		record.SetBaseOffset(raw, off)
		if _, err := l.AppendReplicated(raw); err != nil {
			t.Fatalf("replicated %+v: %v", b, err)
		}
		off += int64(b.n)
	}
	ps, ok := l.ProducerState(7)
	if !ok || ps.Epoch != 1 || ps.LastSequence != 3 || ps.LastOffset != 3 {
		t.Fatalf("state %+v, %v", ps, ok)
	}
}

// snapshotOffsets lists the .snapshot files of dir.
func snapshotOffsets(t testing.TB, dir string) []int64 {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "*"+segment.SnapshotSuffix))
	var out []int64
	for _, n := range names {
		var off int64
		if _, err := fmt.Sscanf(filepath.Base(n), "%020d.snapshot", &off); err != nil {
			t.Fatalf("snapshot file %s: %v", n, err)
		}
		out = append(out, off)
	}
	slices.Sort(out)
	return out
}

// produced is a batch and where it was written.
type produced struct {
	b           idem
	first, last int64
}

// produceSeq appends n batches of pid continuing from b and returns them.
func produceSeq(t testing.TB, l *segment.Log, b idem, n int) []produced {
	t.Helper()
	var out []produced
	for i := 0; i < n; i++ {
		info := mustAppend(t, l, b)
		out = append(out, produced{b, info.FirstOffset, info.LastOffset})
		b = b.next(1 + i%2)
	}
	return out
}

// Kafka: UnifiedLog.close takes a snapshot at the log end, and a
// snapshot keeps only each producer's last batch. After a clean reopen
// the last batch is still a duplicate; the earlier ones are out of the
// window.
func TestProducerStateSurvivesCleanReopen(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, quietConfig())
	ps := produceSeq(t, l, idem{pid: 7, epoch: 2, seq: 0, n: 2}, 3)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	ps = append(ps, produceSeq(t, l, ps[2].b.next(1), 3)...)
	end := l.EndOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := snapshotOffsets(t, dir); !slices.Equal(got, []int64{ps[3].first, end}) {
		t.Fatalf("snapshots at %v, want [%d %d] (the roll and the log end)", got, ps[3].first, end)
	}
	l = open(t, dir, quietConfig())
	defer l.Close()
	last := ps[len(ps)-1]
	st, ok := l.ProducerState(7)
	if !ok || st.Epoch != 2 || st.LastSequence != last.b.lastSeq() || st.LastOffset != last.last || len(st.Batches) != 1 {
		t.Fatalf("state after a clean reopen: %+v, %v", st, ok)
	}
	mustDuplicate(t, l, last.b, last.first, last.last)
	mustRefuse(t, l, ps[len(ps)-2].b, segment.ErrOutOfOrderSequence)
	mustAppend(t, l, last.b.next(1))
}

// Kafka: LogLoader/rebuildProducerState. After a crash the state is the
// latest snapshot (the roll's) plus a replay of the batches after it, so
// every batch after the snapshot, and the last one before it, are still
// recognised as retries.
func TestProducerStateSurvivesUncleanReopen(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, quietConfig())
	ps := produceSeq(t, l, idem{pid: 7, seq: 0, n: 1}, 3)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	ps = append(ps, produceSeq(t, l, ps[2].b.next(2), 3)...)
	l.Abandon()
	l = open(t, dir, quietConfig())
	defer l.Close()
	for _, p := range ps[2:] {
		mustDuplicate(t, l, p.b, p.first, p.last)
	}
	mustRefuse(t, l, ps[1].b, segment.ErrOutOfOrderSequence)
	if got := snapshotOffsets(t, dir); !slices.Contains(got, l.EndOffset()) {
		t.Fatalf("snapshots %v: the rebuild did not snapshot the log end %d", got, l.EndOffset())
	}
}

// Kafka: UnifiedLog.truncateTo reloads producer state from a snapshot
// at or below the new end and deletes the snapshots past it.
func TestProducerStateFollowsTruncation(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, quietConfig())
	defer l.Close()
	var ps []produced
	b := idem{pid: 7, seq: 0, n: 2}
	for i := 0; i < 4; i++ {
		ps = append(ps, produceSeq(t, l, b, 2)...)
		b = ps[len(ps)-1].b.next(1)
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	cut := ps[3] // truncate away ps[3] and everything after
	if err := l.TruncateTo(cut.first); err != nil {
		t.Fatal(err)
	}
	st, ok := l.ProducerState(7)
	if !ok || st.LastSequence != ps[2].b.lastSeq() || st.LastOffset != ps[2].last {
		t.Fatalf("state after truncating to %d: %+v, %v", cut.first, st, ok)
	}
	for _, off := range snapshotOffsets(t, dir) {
		if off > l.EndOffset() {
			t.Fatalf("snapshot at %d survived truncation to %d", off, l.EndOffset())
		}
	}
	mustDuplicate(t, l, ps[2].b, ps[2].first, ps[2].last)
	mustAppend(t, l, cut.b) // its sequence is the next one again
	if err := l.TruncateFullyAndStartAt(100); err != nil {
		t.Fatal(err)
	}
	if _, ok := l.ProducerState(7); ok {
		t.Fatal("producer state survived TruncateFullyAndStartAt")
	}
	if got := snapshotOffsets(t, dir); len(got) != 0 {
		t.Fatalf("snapshots %v survived TruncateFullyAndStartAt", got)
	}
}

// Kafka: deleteSegments deletes the snapshots of the deleted segments,
// and (KIP-360) the producer's state outlives its data: the snapshot at
// the new active segment keeps it across a restart.
func TestProducerSnapshotsFollowSegmentDeletion(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, quietConfig())
	var ps []produced
	b := idem{pid: 7, seq: 0, n: 1}
	for i := 0; i < 3; i++ {
		ps = append(ps, produceSeq(t, l, b, 1)...)
		b = ps[len(ps)-1].b.next(1)
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := l.DeleteSegmentsBefore(l.EndOffset())
	if err != nil || len(removed) != 3 {
		t.Fatalf("removed %d segments, %v", len(removed), err)
	}
	if _, ok := l.ProducerState(7); !ok {
		t.Fatal("producer state dropped with its segments")
	}
	l.Abandon()
	if got := snapshotOffsets(t, dir); !slices.Equal(got, []int64{3}) {
		t.Fatalf("snapshots %v, want only [3] (the active segment's)", got)
	}
	l = open(t, dir, quietConfig())
	defer l.Close()
	// The snapshot at the log start offset is deleted at load
	// (truncateAndReload keeps only those above the log start): the
	// producer is unknown again and may continue at any sequence.
	if _, ok := l.ProducerState(7); ok {
		t.Fatal("state loaded from a snapshot at the log start offset")
	}
	mustAppend(t, l, ps[2].b.next(1))
}

// clock is a settable Config.Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// Kafka: producer.id.expiration.ms. A producer whose last batch is older
// than the expiration is forgotten by the periodic check
// (producer.id.expiration.check.interval.ms) and when a snapshot is
// loaded; a recent one stays.
func TestProducerIDExpiration(t *testing.T) {
	dir := t.TempDir()
	clk := &clock{now: time.UnixMilli(1_700_000_000_000)}
	cfg := quietConfig()
	cfg.Now, cfg.ProducerIDExpiration = clk.Now, time.Hour
	l := open(t, dir, cfg)
	mustAppend(t, l, idem{pid: 1, seq: 0, n: 1, ts: clk.Now().UnixMilli()})
	clk.advance(50 * time.Minute)
	mustAppend(t, l, idem{pid: 2, seq: 0, n: 1, ts: clk.Now().UnixMilli()})
	clk.advance(20 * time.Minute) // producer 1 is 70 minutes old, producer 2 is 20
	appendN(t, l, 1, 1, 10, 1)    // any append runs the check
	if _, ok := l.ProducerState(1); ok {
		t.Fatal("producer 1 did not expire")
	}
	if _, ok := l.ProducerState(2); !ok {
		t.Fatal("producer 2 expired early")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Hour)
	l = open(t, dir, cfg)
	defer l.Close()
	if got := l.Producers(); len(got) != 0 {
		t.Fatalf("expired producers loaded from the snapshot: %+v", got)
	}
}

// Kafka: the snapshot file of each roll is named after the new
// segment's base offset, <offset:%020d>.snapshot, and is complete once
// the flusher renamed it (no temporary file left behind by Close).
func TestProducerSnapshotAtEachRoll(t *testing.T) {
	dir := t.TempDir()
	cfg := quietConfig()
	cfg.SegmentBytes = 1024
	l := open(t, dir, cfg)
	b := idem{pid: 7, seq: 0, n: 3}
	for i := 0; i < 12; i++ {
		mustAppend(t, l, b)
		b = b.next(3)
	}
	segs := l.Segments()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if len(segs) < 3 {
		t.Fatalf("only %d segments; the test did not roll", len(segs))
	}
	want := []int64{}
	for _, s := range segs[1:] {
		want = append(want, s.BaseOffset)
	}
	want = append(want, 36)
	if got := snapshotOffsets(t, dir); !slices.Equal(got, want) {
		t.Fatalf("snapshots %v, want %v", got, want)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(tmps) > 0 {
		t.Fatalf("temporary files left: %v", tmps)
	}
	for _, off := range want[:len(want)-1] {
		states, err := segment.ReadProducerSnapshot(nil, filepath.Join(dir, fmt.Sprintf("%020d.snapshot", off)))
		if err != nil || len(states) != 1 || states[0].LastOffset != off-1 {
			t.Fatalf("snapshot %d: %+v, %v (want the batch ending at %d)", off, states, err, off-1)
		}
	}
}

// Kafka: rebuildProducerState after a clean shutdown with no snapshot
// at all (a log written before snapshots existed) writes empty
// snapshots instead of reading the log: the producers are unknown.
func TestProducerStateCleanShutdownWithoutSnapshots(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, quietConfig())
	mustAppend(t, l, idem{pid: 7, seq: 0, n: 2})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, off := range snapshotOffsets(t, dir) {
		if err := os.Remove(filepath.Join(dir, fmt.Sprintf("%020d.snapshot", off))); err != nil {
			t.Fatal(err)
		}
	}
	l = open(t, dir, quietConfig())
	defer l.Close()
	if _, ok := l.ProducerState(7); ok {
		t.Fatal("producer state read from the log despite the upgrade shortcut")
	}
	if got := snapshotOffsets(t, dir); !slices.Equal(got, []int64{2}) {
		t.Fatalf("snapshots %v, want an empty one at the log end 2", got)
	}
}

// BenchmarkProducerAppend measures what the producer checks add to a
// leader append: the same 1 KiB batches with and without a producer id,
// appended to the page cache (no fsync). Each iteration writes the next
// sequence and recomputes the CRC, in both variants; the log is emptied
// every 8192 appends, off the clock.
func BenchmarkProducerAppend(b *testing.B) {
	for _, name := range []string{"plain", "idempotent"} {
		b.Run(name, func(b *testing.B) {
			l, err := segment.Open(b.TempDir(), quietConfig())
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			batch := idem{pid: 7, seq: 0, n: 16, ts: time.Now().UnixMilli()}
			if name == "plain" {
				batch.pid, batch.epoch, batch.seq = -1, -1, -1
			}
			raw := batch.build(b)
			table := crc32.MakeTable(crc32.Castagnoli)
			b.SetBytes(int64(len(raw)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if batch.pid >= 0 {
					binary.BigEndian.PutUint32(raw[record.BaseSequencePos:], uint32(i*batch.n))
				}
				binary.BigEndian.PutUint32(raw[record.CRCPos:], crc32.Checksum(raw[record.AttributesPos:], table))
				if _, err := l.Append(raw); err != nil {
					b.Fatal(err)
				}
				if i%8192 == 8191 {
					b.StopTimer()
					if err := l.TruncateTo(0); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
			}
		})
	}
}
