package record

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Kafka: MemoryRecordsBuilder for a producer: base offset 0, dense offset
// deltas, BaseTimestamp = first record's, MaxTimestamp = largest, CreateTime,
// PartitionLeaderEpoch -1, producer fields -1 unless idempotent.
func TestBuilderHeaderFields(t *testing.T) {
	b := NewBatchBuilder(CompressionSnappy)
	b.Append(Record{Timestamp: 300, Value: []byte("a")})
	b.Append(Record{Timestamp: 900, Value: []byte("b")})
	b.Append(Record{Timestamp: 100, Value: []byte("c")})
	out, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	h, err := ValidateClientBatch(out)
	if err != nil {
		t.Fatal(err)
	}
	want := BatchHeader{BaseOffset: 0, Length: h.Length, PartitionLeaderEpoch: -1, Magic: 2, CRC: h.CRC,
		Attributes: int16(CompressionSnappy), LastOffsetDelta: 2, BaseTimestamp: 300, MaxTimestamp: 900,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, RecordCount: 3}
	if h != want {
		t.Fatalf("header\n got %+v\nwant %+v", h, want)
	}
	if int(h.Size()) != len(out) {
		t.Fatalf("Size %d, batch %d bytes", h.Size(), len(out))
	}
}

// Kafka: KIP-98 idempotent/transactional batches carry producer id, epoch,
// base sequence and attribute bit 4.
func TestBuilderProducerAndTransactional(t *testing.T) {
	b := NewBatchBuilder(CompressionNone)
	b.SetProducer(77, 3, 1000)
	b.SetTransactional(true)
	b.Append(Record{Timestamp: 1, Value: []byte("x")})
	out, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	h, _ := ValidateBatch(out)
	if h.ProducerID != 77 || h.ProducerEpoch != 3 || h.BaseSequence != 1000 || !h.IsTransactional() || h.IsControl() {
		t.Fatalf("header %+v", h)
	}
}

func TestBuilderTimestampZeroMeansNow(t *testing.T) {
	before := time.Now().UnixMilli()
	b := NewBatchBuilder(CompressionNone)
	b.Append(Record{Value: []byte("x")})
	out, _ := b.Build()
	after := time.Now().UnixMilli()
	recs, err := DecodeBatch(out, nil)
	if err != nil || recs[0].Timestamp < before || recs[0].Timestamp > after {
		t.Fatalf("timestamp %d not in [%d, %d] (%v)", recs[0].Timestamp, before, after, err)
	}
}

// Kafka: a producer never sends an empty batch; LogValidator rejects one.
func TestBuilderEmptyFails(t *testing.T) {
	b := NewBatchBuilder(CompressionZstd)
	if _, err := b.Build(); !errors.Is(err, ErrInvalidRecordCount) {
		t.Fatalf("Build of no records: %v", err)
	}
}

func TestBuilderResetAndAppendTo(t *testing.T) {
	for _, c := range allCodecs {
		b := NewBatchBuilder(c)
		b.SetProducer(5, 1, 0)
		for _, r := range sampleRecords(50) {
			b.Append(r)
		}
		first, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		b.Reset()
		if b.Len() != 0 {
			t.Fatalf("Len after Reset = %d", b.Len())
		}
		want := sampleRecords(3)
		for _, r := range want {
			b.Append(r)
		}
		prefix := []byte("prefix")
		out, err := b.AppendTo(prefix)
		if err != nil {
			t.Fatal(err)
		}
		if string(out[:6]) != "prefix" {
			t.Fatalf("AppendTo clobbered dst")
		}
		h, err := ValidateBatch(out[6:])
		if err != nil || h.RecordCount != 3 || h.ProducerID != 5 {
			t.Fatalf("%v: rebuilt after Reset: %+v %v", c, h, err)
		}
		got, err := DecodeBatch(out[6:], nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%v: records after Reset differ:\n%s", c, diff)
		}
		// The first batch must be unaffected by the builder's reuse.
		if _, err := ValidateBatch(first); err != nil {
			t.Fatalf("%v: first batch changed after Reset: %v", c, err)
		}
	}
}

// DESIGN.md: allocations per batch do not grow with the number of records.
// A warmed-up builder's Build allocates the returned slice only; AppendTo
// into a slice with room allocates nothing.
func TestBuildAllocationsDoNotGrowWithRecords(t *testing.T) {
	skipUnderRace(t)
	for _, c := range allCodecs {
		b := NewBatchBuilder(c)
		recs := sampleRecords(1000)
		fill := func(n int) func() {
			return func() {
				b.Reset()
				for i := range n {
					b.Append(recs[i])
				}
				if _, err := b.Build(); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Warm up the builder's buffers and the codec pools; zstd keeps one
		// encoder per CPU and they are used in turn.
		for range 8 {
			fill(1000)()
		}
		small := testing.AllocsPerRun(20, fill(10))
		large := testing.AllocsPerRun(20, fill(1000))
		if large > small || large > 1 {
			t.Errorf("%v: Build allocations: %.1f for 10 records, %.1f for 1000", c, small, large)
		}
		dst := make([]byte, 0, 1<<20)
		appendTo := testing.AllocsPerRun(20, func() {
			if _, err := b.AppendTo(dst[:0]); err != nil {
				t.Fatal(err)
			}
		})
		if appendTo > 0 {
			t.Errorf("%v: AppendTo allocates %.1f times", c, appendTo)
		}
	}
}

// Kafka: log cleaner (MemoryRecords.filterTo): a rebuilt batch keeps its
// base offset, last offset delta (so the producer's last sequence survives),
// producer fields, codec and attributes; retained records keep their offsets
// (invariants C1, C8).
func TestRebuildBatchKeepsOffsets(t *testing.T) {
	for _, c := range allCodecs {
		b := NewBatchBuilder(c)
		b.SetProducer(9, 2, 40)
		b.SetTransactional(true)
		for _, r := range sampleRecords(10) {
			b.Append(r)
		}
		orig, _ := b.Build()
		SetBaseOffset(orig, 500)
		SetPartitionLeaderEpoch(orig, 7)
		h, _ := ValidateBatch(orig)
		all, _ := DecodeBatch(orig, nil)
		keep := []Record{all[1], all[4], all[8]}

		out, err := RebuildBatch(h, keep)
		if err != nil {
			t.Fatalf("%v: RebuildBatch: %v", c, err)
		}
		nh, err := ValidateBatch(out)
		if err != nil {
			t.Fatalf("%v: rebuilt batch invalid: %v", c, err)
		}
		if nh.BaseOffset != 500 || nh.LastOffsetDelta != 9 || nh.RecordCount != 3 || nh.PartitionLeaderEpoch != 7 ||
			nh.ProducerID != 9 || nh.ProducerEpoch != 2 || nh.BaseSequence != 40 || nh.Attributes != h.Attributes {
			t.Fatalf("%v: rebuilt header %+v from %+v", c, nh, h)
		}
		if nh.BaseTimestamp != keep[0].Timestamp {
			t.Fatalf("%v: base timestamp %d, want first retained record's %d", c, nh.BaseTimestamp, keep[0].Timestamp)
		}
		got, err := DecodeBatch(out, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(keep, got); diff != "" {
			t.Fatalf("%v: retained records differ:\n%s", c, diff)
		}
	}
}

// Kafka: RETAIN_EMPTY keeps an emptied batch's header to preserve producer
// state: DefaultRecordBatch.writeEmptyHeader writes 61 bytes, codec none,
// firstTimestamp NO_TIMESTAMP, maxTimestamp the original batch's.
func TestRebuildBatchEmpty(t *testing.T) {
	b := NewBatchBuilder(CompressionGzip)
	b.SetProducer(3, 4, 5)
	b.SetTransactional(true)
	for _, r := range sampleRecords(4) {
		b.Append(r)
	}
	orig, _ := b.Build()
	SetBaseOffset(orig, 20)
	h, _ := ValidateBatch(orig)
	h.Attributes |= AttrDeleteHorizon
	out, err := RebuildBatch(h, nil)
	if err != nil {
		t.Fatal(err)
	}
	nh, err := ValidateBatch(out)
	if err != nil {
		t.Fatal(err)
	}
	want := BatchHeader{BaseOffset: 20, Length: MinBatchLength, PartitionLeaderEpoch: -1, Magic: 2, CRC: nh.CRC,
		Attributes: AttrTransactional, LastOffsetDelta: 3, BaseTimestamp: NoTimestamp, MaxTimestamp: h.MaxTimestamp,
		ProducerID: 3, ProducerEpoch: 4, BaseSequence: 5, RecordCount: 0}
	if nh != want || len(out) != BatchHeaderSize {
		t.Fatalf("empty batch (%d bytes)\n got %+v\nwant %+v", len(out), nh, want)
	}
	if recs, err := DecodeBatch(out, nil); err != nil || len(recs) != 0 {
		t.Fatalf("DecodeBatch(empty) = %v, %v", recs, err)
	}
}

// Kafka: KIP-534: with the delete horizon bit set, BaseTimestamp holds the
// horizon and record timestamps are deltas from it.
func TestRebuildBatchDeleteHorizon(t *testing.T) {
	orig := buildBatch(t, CompressionZstd, sampleRecords(6))
	h, _ := ValidateBatch(orig)
	recs, _ := DecodeBatch(orig, nil)
	h.Attributes |= AttrDeleteHorizon
	h.BaseTimestamp = 1_800_000_000_000
	out, err := RebuildBatch(h, recs[2:])
	if err != nil {
		t.Fatal(err)
	}
	nh, err := ValidateBatch(out)
	if err != nil {
		t.Fatal(err)
	}
	if horizon, ok := nh.DeleteHorizon(); !ok || horizon != 1_800_000_000_000 {
		t.Fatalf("delete horizon %d %v", horizon, ok)
	}
	got, _ := DecodeBatch(out, nil)
	if diff := cmp.Diff(recs[2:], got); diff != "" {
		t.Fatalf("records differ:\n%s", diff)
	}
}

// Kafka: a LogAppendTime batch is rebuilt with base = max = the original
// LogAppendTime (buildRetainedRecordsInto passes it as logAppendTime).
func TestRebuildBatchLogAppendTime(t *testing.T) {
	orig := buildBatch(t, CompressionNone, sampleRecords(3))
	SetMaxTimestampLogAppendTime(orig, 4242)
	h, _ := ValidateBatch(orig)
	recs, _ := DecodeBatch(orig, nil)
	out, err := RebuildBatch(h, recs[1:])
	if err != nil {
		t.Fatal(err)
	}
	nh, _ := ValidateBatch(out)
	got, _ := DecodeBatch(out, nil)
	if nh.BaseTimestamp != 4242 || nh.MaxTimestamp != 4242 || got[0].Timestamp != 4242 || nh.TimestampType() != TimestampLogAppendTime {
		t.Fatalf("header %+v, records %+v", nh, got)
	}
}

func TestRebuildBatchRejectsBadOffsets(t *testing.T) {
	orig := buildBatch(t, CompressionNone, sampleRecords(5))
	SetBaseOffset(orig, 100)
	h, _ := ValidateBatch(orig)
	recs, _ := DecodeBatch(orig, nil)
	cases := map[string][]Record{
		"before_base":     {{Offset: 99}},
		"after_last":      {{Offset: 105}},
		"out_of_order":    {recs[2], recs[1]},
		"duplicate":       {recs[2], recs[2]},
		"too_many":        append(append([]Record(nil), recs...), recs[0]),
		"not_in_sequence": {recs[3], recs[0]},
	}
	for name, rs := range cases {
		if _, err := RebuildBatch(h, rs); err == nil {
			t.Errorf("%s: RebuildBatch accepted %v", name, rs)
		}
	}
}

// BenchmarkBuild encodes 1000 ~100-byte records into one batch per codec,
// reusing the builder (the library producer path). Bytes are uncompressed.
func BenchmarkBuild(b *testing.B) {
	recs := sampleRecords(1000)
	dst := make([]byte, 0, 1<<20)
	for _, c := range allCodecs {
		b.Run(c.String(), func(b *testing.B) {
			bb := NewBatchBuilder(c)
			b.SetBytes(int64(uncompressedSize(recs)))
			b.ReportAllocs()
			for b.Loop() {
				bb.Reset()
				for i := range recs {
					bb.Append(recs[i])
				}
				if _, err := bb.AppendTo(dst[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func ExampleBatchBuilder() {
	b := NewBatchBuilder(CompressionZstd)
	b.Append(Record{Key: []byte("k"), Value: []byte("hello"), Timestamp: 1_700_000_000_000})
	b.Append(Record{Key: []byte("k"), Value: nil, Timestamp: 1_700_000_000_001}) // a tombstone
	batch, err := b.Build()
	if err != nil {
		panic(err)
	}
	SetBaseOffset(batch, 42) // what the log does on append
	for r, err := range Records(batch) {
		if err != nil {
			panic(err)
		}
		fmt.Printf("%d %s %q\n", r.Offset, r.Key, r.Value)
	}
	// Output:
	// 42 k "hello"
	// 43 k ""
}
