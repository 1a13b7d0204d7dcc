package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"runtime/debug"
	"testing"
)

var allCodecs = []Compression{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd}

// sampleRecords returns n records that exercise every field: null and empty
// keys, null values (tombstones), headers with null values, and timestamps
// that go backwards (negative deltas are legal varlongs).
func sampleRecords(n int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		r := Record{
			Offset:    int64(i),
			Timestamp: 1_700_000_000_000 + int64(i*3) - int64(i%4)*10,
			Key:       fmt.Appendf(nil, "key-%d", i%17),
			Value:     fmt.Appendf(nil, "value %d %0*d", i, i%50, 0),
		}
		switch {
		case i%5 == 1:
			r.Key = nil
		case i%11 == 2:
			r.Key = []byte{}
		}
		if i%7 == 3 {
			r.Value = nil
		}
		if i%3 == 0 {
			r.Headers = []Header{{Key: "trace", Value: fmt.Appendf(nil, "t%d", i)}, {Key: "null", Value: nil}, {Key: "", Value: []byte{}}}
		}
		recs[i] = r
	}
	return recs
}

// skipUnderRace skips allocation-count tests in a -race build, where
// sync.Pool drops items at random and counts mean nothing.
func skipUnderRace(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" && s.Value == "true" {
			t.Skip("allocation counts are meaningless under -race")
		}
	}
}

// buildBatch builds a batch of recs with codec c.
func buildBatch(t testing.TB, c Compression, recs []Record) []byte {
	t.Helper()
	b := NewBatchBuilder(c)
	for _, r := range recs {
		b.Append(r)
	}
	out, err := b.Build()
	if err != nil {
		t.Fatalf("Build(%v): %v", c, err)
	}
	return out
}

// resealCRC recomputes the CRC of a batch whose covered bytes a test edited.
func resealCRC(b []byte) {
	binary.BigEndian.PutUint32(b[CRCPos:], crc32.Checksum(b[AttributesPos:], castagnoli))
}

func wantErr(t *testing.T, err, sentinel error) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("error = %v, want %v", err, sentinel)
	}
	var ce *CorruptBatchError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not a *CorruptBatchError", err)
	}
}

// Kafka: DefaultRecordBatch field layout (KAFKA-REFERENCE §1.2): the header
// encodes each field at its documented offset and decodes back unchanged.
func TestBatchHeaderLayout(t *testing.T) {
	h := BatchHeader{BaseOffset: 0x0102030405060708, Length: 0x11121314, PartitionLeaderEpoch: 0x21222324,
		Magic: 2, CRC: 0x31323334, Attributes: 0x4142, LastOffsetDelta: 0x51525354,
		BaseTimestamp: 0x6162636465666768, MaxTimestamp: 0x7172737475767778, ProducerID: -2,
		ProducerEpoch: 0x0a0b, BaseSequence: 0x0c0d0e0f, RecordCount: 0x1a1b1c1d}
	b := h.AppendTo(nil)
	if len(b) != BatchHeaderSize {
		t.Fatalf("header is %d bytes, want %d", len(b), BatchHeaderSize)
	}
	checks := []struct {
		pos  int
		want byte
	}{{BaseOffsetPos, 0x01}, {LengthPos, 0x11}, {PartitionLeaderEpochPos, 0x21}, {MagicPos, 2},
		{CRCPos, 0x31}, {AttributesPos, 0x41}, {LastOffsetDeltaPos, 0x51}, {BaseTimestampPos, 0x61},
		{MaxTimestampPos, 0x71}, {ProducerIDPos, 0xff}, {ProducerEpochPos, 0x0a}, {BaseSequencePos, 0x0c},
		{RecordCountPos, 0x1a}}
	for _, c := range checks {
		if b[c.pos] != c.want {
			t.Errorf("byte %d = %#x, want %#x", c.pos, b[c.pos], c.want)
		}
	}
	got, err := ParseHeader(b)
	if err != nil || got != h {
		t.Fatalf("ParseHeader = %+v, %v; want %+v", got, err, h)
	}
	if _, err := ParseHeader(b[:60]); !errors.Is(err, ErrShortBatch) {
		t.Fatalf("ParseHeader(60 bytes) error = %v, want ErrShortBatch", err)
	}
}

func TestBatchHeaderAccessors(t *testing.T) {
	h := BatchHeader{BaseOffset: 100, Length: 100, LastOffsetDelta: 9,
		Attributes: int16(CompressionZstd) | AttrTimestampType | AttrTransactional | AttrControl | AttrDeleteHorizon}
	if h.Size() != 112 || h.LastOffset() != 109 || h.NextOffset() != 110 {
		t.Errorf("Size/LastOffset/NextOffset = %d/%d/%d", h.Size(), h.LastOffset(), h.NextOffset())
	}
	if h.Compression() != CompressionZstd || h.TimestampType() != TimestampLogAppendTime ||
		!h.IsTransactional() || !h.IsControl() || !h.HasDeleteHorizon() {
		t.Errorf("attribute accessors wrong for %#x", h.Attributes)
	}
	h.Attributes = 0
	if h.Compression() != CompressionNone || h.TimestampType() != TimestampCreateTime ||
		h.IsTransactional() || h.IsControl() || h.HasDeleteHorizon() {
		t.Errorf("attribute accessors wrong for 0")
	}
}

// Kafka: DefaultRecordBatch.isValid: the CRC-32C covers bytes [21, end), so
// flipping any bit there, or in the CRC field itself, makes the batch invalid.
func TestBatchCRCDetectsEveryBitFlip(t *testing.T) {
	for _, c := range allCodecs {
		t.Run(c.String(), func(t *testing.T) {
			b := buildBatch(t, c, sampleRecords(20))
			if _, err := ValidateBatch(b); err != nil {
				t.Fatalf("valid batch rejected: %v", err)
			}
			for i := CRCPos; i < len(b); i++ {
				for bit := range 8 {
					b[i] ^= 1 << bit
					_, err := ValidateBatch(b)
					b[i] ^= 1 << bit
					if !errors.Is(err, ErrCRCMismatch) {
						t.Fatalf("flip byte %d bit %d: error = %v, want ErrCRCMismatch", i, bit, err)
					}
				}
			}
		})
	}
}

// Kafka: the CRC excludes BaseOffset and PartitionLeaderEpoch so that the
// leader can stamp them in place (DESIGN.md "assignment costs 8 bytes").
func TestSetBaseOffsetAndEpochKeepCRC(t *testing.T) {
	b := buildBatch(t, CompressionLZ4, sampleRecords(5))
	before := binary.BigEndian.Uint32(b[CRCPos:])
	SetBaseOffset(b, 1<<40+7)
	SetPartitionLeaderEpoch(b, 42)
	h, err := ValidateBatch(b)
	if err != nil {
		t.Fatalf("ValidateBatch after SetBaseOffset: %v", err)
	}
	if h.BaseOffset != 1<<40+7 || h.PartitionLeaderEpoch != 42 || h.CRC != before {
		t.Fatalf("header %+v, want base %d epoch 42 crc %d", h, int64(1<<40+7), before)
	}
	recs, err := DecodeBatch(b, nil)
	if err != nil || recs[0].Offset != 1<<40+7 || recs[4].Offset != 1<<40+11 {
		t.Fatalf("DecodeBatch offsets after SetBaseOffset: %v %v", recs, err)
	}
}

// Kafka: DefaultRecordBatch.setMaxTimestamp(LOG_APPEND_TIME, now) sets bit 3
// and MaxTimestamp and recomputes the CRC; every record then reads as
// having that timestamp (DefaultRecord.readFrom with logAppendTime).
func TestSetMaxTimestampLogAppendTime(t *testing.T) {
	for _, c := range allCodecs {
		b := buildBatch(t, c, sampleRecords(4))
		SetMaxTimestampLogAppendTime(b, 1234)
		h, err := ValidateBatch(b)
		if err != nil {
			t.Fatalf("%v: ValidateBatch: %v", c, err)
		}
		if h.TimestampType() != TimestampLogAppendTime || h.MaxTimestamp != 1234 || h.Compression() != c {
			t.Fatalf("%v: header %+v", c, h)
		}
		recs, err := DecodeBatch(b, nil)
		if err != nil {
			t.Fatalf("%v: DecodeBatch: %v", c, err)
		}
		for _, r := range recs {
			if r.Timestamp != 1234 {
				t.Fatalf("%v: record %d timestamp %d, want the LogAppendTime 1234", c, r.Offset, r.Timestamp)
			}
		}
	}
}

// Kafka: FileLogInputStream.nextBatch returns nothing for a batch that runs
// past the end of the file: every truncation is a torn tail, not corruption.
func TestBatchTruncationIsShort(t *testing.T) {
	b := buildBatch(t, CompressionNone, sampleRecords(10))
	for n := range len(b) {
		if _, err := ValidateBatch(b[:n]); !errors.Is(err, ErrShortBatch) || errors.Is(err, ErrCorruptBatch) {
			t.Fatalf("ValidateBatch(%d of %d bytes) error = %v, want ErrShortBatch only", n, len(b), err)
		}
		_, size, err := NextBatch(b[:n], 0)
		if !errors.Is(err, ErrShortBatch) {
			t.Fatalf("NextBatch(%d of %d bytes) error = %v, want ErrShortBatch", n, len(b), err)
		}
		if n >= LogOverhead && size != len(b) {
			t.Fatalf("NextBatch(%d bytes) size = %d, want %d", n, size, len(b))
		}
	}
}

// Kafka: ensureValid rejects a size below RECORD_BATCH_OVERHEAD;
// FileLogInputStream rejects a batch above the maximum size.
func TestBatchBadLength(t *testing.T) {
	good := buildBatch(t, CompressionNone, sampleRecords(3))
	cases := []struct {
		name   string
		length int32
		max    int
		want   error
	}{
		{"zero", 0, 0, ErrCorruptBatch},
		{"too_small", MinBatchLength - 1, 0, ErrCorruptBatch},
		{"negative", -1, 0, ErrCorruptBatch},
		{"min_int32", -1 << 31, 0, ErrCorruptBatch},
		{"too_big", int32(len(good)), len(good), ErrBatchTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := append([]byte(nil), good...)
			binary.BigEndian.PutUint32(b[LengthPos:], uint32(c.length))
			if _, _, err := NextBatch(b, c.max); !errors.Is(err, c.want) || !errors.Is(err, ErrCorruptBatch) {
				t.Fatalf("NextBatch error = %v, want %v", err, c.want)
			}
			if c.max == 0 {
				if _, err := ValidateBatch(b); !errors.Is(err, c.want) {
					t.Fatalf("ValidateBatch error = %v, want %v", err, c.want)
				}
			}
		})
	}
	// A length shorter than the buffer leaves trailing bytes: ValidateBatch
	// wants exactly one batch.
	long := append(append([]byte(nil), good...), 0)
	if _, err := ValidateBatch(long); !errors.Is(err, ErrCorruptBatch) {
		t.Fatalf("ValidateBatch with a trailing byte: %v, want ErrCorruptBatch", err)
	}
}

// Kafka: only magic 2 batches are stored; magic sits outside the CRC, so it
// is checked on its own.
func TestBatchBadMagic(t *testing.T) {
	for _, magic := range []byte{0, 1, 3, 0xff} {
		b := buildBatch(t, CompressionNone, sampleRecords(2))
		b[MagicPos] = magic
		_, err := ValidateBatch(b)
		wantErr(t, err, ErrInvalidMagic)
		_, _, err = NextBatch(b, 0)
		wantErr(t, err, ErrInvalidMagic)
	}
}

// Kafka: LogValidator: "Inconsistent batch offset range ... and count of
// records"; compaction leaves fewer records than offsets, never more.
func TestBatchCountVersusDelta(t *testing.T) {
	cases := []struct {
		name         string
		count, delta int32
		valid        bool // ValidateBatch
		client       bool // ValidateClientBatch
	}{
		{"dense", 3, 2, true, true},
		{"compacted", 2, 5, true, false},
		{"empty_retained", 0, 4, true, false},
		{"more_records_than_offsets", 4, 2, false, false},
		{"negative_count", -1, 2, false, false},
		{"negative_delta", 0, -1, false, false},
		{"count_overflows_bytes", 1000, 2000, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := buildBatch(t, CompressionNone, sampleRecords(3))
			binary.BigEndian.PutUint32(b[RecordCountPos:], uint32(c.count))
			binary.BigEndian.PutUint32(b[LastOffsetDeltaPos:], uint32(c.delta))
			resealCRC(b)
			_, err := ValidateBatch(b)
			if (err == nil) != c.valid {
				t.Fatalf("ValidateBatch error = %v, want valid=%v", err, c.valid)
			}
			if err != nil && !errors.Is(err, ErrInvalidRecordCount) {
				t.Fatalf("ValidateBatch error = %v, want ErrInvalidRecordCount", err)
			}
			_, err = ValidateClientBatch(b)
			if (err == nil) != c.client {
				t.Fatalf("ValidateClientBatch error = %v, want valid=%v", err, c.client)
			}
		})
	}
}

func TestBatchUnknownCompression(t *testing.T) {
	b := buildBatch(t, CompressionNone, sampleRecords(1))
	b[AttributesPos+1] |= 5
	resealCRC(b)
	_, err := ValidateBatch(b)
	wantErr(t, err, ErrCorruptBatch)
}

func TestNextBatchWalksConcatenatedBatches(t *testing.T) {
	var buf []byte
	var sizes []int
	for i, c := range allCodecs {
		b := buildBatch(t, c, sampleRecords(i+1))
		SetBaseOffset(b, int64(i*100))
		buf = append(buf, b...)
		sizes = append(sizes, len(b))
	}
	for i, pos := 0, 0; pos < len(buf); i++ {
		h, size, err := NextBatch(buf[pos:], 1<<20)
		if err != nil || size != sizes[i] || h.BaseOffset != int64(i*100) || int(h.RecordCount) != i+1 {
			t.Fatalf("batch %d: %+v size %d err %v", i, h, size, err)
		}
		if _, err := ValidateBatch(buf[pos : pos+size]); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		pos += size
	}
}

func TestCorruptBatchErrorFields(t *testing.T) {
	b := buildBatch(t, CompressionNone, sampleRecords(2))
	SetBaseOffset(b, 77)
	b[len(b)-1] ^= 1
	_, err := ValidateBatch(b)
	var ce *CorruptBatchError
	if !errors.As(err, &ce) || ce.Offset != 77 || ce.Pos != CRCPos || ce.Err != ErrCRCMismatch {
		t.Fatalf("error = %#v", err)
	}
	if errors.Unwrap(err) != ErrCRCMismatch {
		t.Fatalf("Unwrap = %v", errors.Unwrap(err))
	}
	if moved := shiftPos(err, 1000); !errors.As(moved, &ce) || ce.Pos != CRCPos+1000 {
		t.Fatalf("shiftPos: %v", moved)
	}
}

// ValidateBatch is a header parse plus one CRC; it must not allocate.
func TestValidateBatchDoesNotAllocate(t *testing.T) {
	b := buildBatch(t, CompressionNone, sampleRecords(100))
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := ValidateBatch(b); err != nil {
			t.Fatal(err)
		}
		if _, _, err := NextBatch(b, 0); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("ValidateBatch+NextBatch allocate %.1f times", allocs)
	}
}

// batchOfSize builds an uncompressed batch of about size bytes.
func batchOfSize(tb testing.TB, size int) []byte {
	value := make([]byte, 1000)
	for i := range value {
		value[i] = byte(i * 7)
	}
	b := NewBatchBuilder(CompressionNone)
	for b.UncompressedSize()+len(value)+20 <= size {
		b.Append(Record{Timestamp: 1, Value: value})
	}
	b.Append(Record{Timestamp: 1, Value: value[:max(0, size-b.UncompressedSize()-20)]})
	out, err := b.Build()
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// BenchmarkValidateBatch measures the produce-path check alone (CPU only):
// header parse plus one CRC-32C over the batch.
func BenchmarkValidateBatch(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
		batch := batchOfSize(b, size)
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ValidateBatch(batch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
