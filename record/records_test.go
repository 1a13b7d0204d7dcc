package record

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Kafka: DefaultRecord round trip: null key, empty key, null value
// (tombstone), headers with null values, negative timestamp deltas, for
// every codec of CompressionType.
func TestRecordRoundTripEveryCodec(t *testing.T) {
	for _, c := range allCodecs {
		for _, n := range []int{1, 2, 57, 1000} {
			want := sampleRecords(n)
			b := buildBatch(t, c, want)
			got, err := DecodeBatch(b, nil)
			if err != nil {
				t.Fatalf("%v/%d: DecodeBatch: %v", c, n, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%v/%d: records differ (-want +got):\n%s", c, n, diff)
			}
			var d BatchDecoder
			got, err = d.Decode(b, got)
			if err != nil {
				t.Fatalf("%v/%d: BatchDecoder.Decode: %v", c, n, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%v/%d: BatchDecoder records differ (-want +got):\n%s", c, n, diff)
			}
		}
	}
}

// DecodeBatch's results must not share memory with later calls (the pooled
// scratch is copied out), unlike BatchDecoder.Decode's.
func TestDecodeBatchResultsAreIndependent(t *testing.T) {
	for _, c := range allCodecs {
		a := buildBatch(t, c, sampleRecords(30))
		other := sampleRecords(30)
		for i := range other {
			other[i].Value = []byte("overwritten")
			other[i].Headers = []Header{{Key: "zzzzz", Value: []byte("zzzz")}}
		}
		b := buildBatch(t, c, other)
		got, err := DecodeBatch(a, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeBatch(b, nil); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(sampleRecords(30), got); diff != "" {
			t.Fatalf("%v: first result changed by a second DecodeBatch:\n%s", c, diff)
		}
	}
}

// Kafka: a batch's records start at BaseOffset + OffsetDelta and
// BaseTimestamp + TimestampDelta (DefaultRecord.readFrom).
func TestRecordOffsetsAndTimestampsAreAbsolute(t *testing.T) {
	b := buildBatch(t, CompressionNone, []Record{{Timestamp: 500, Value: []byte("a")}, {Timestamp: 400, Value: []byte("b")}})
	SetBaseOffset(b, 1000)
	h, _ := ParseHeader(b)
	if h.BaseTimestamp != 500 || h.MaxTimestamp != 500 {
		t.Fatalf("base/max timestamp = %d/%d, want 500/500", h.BaseTimestamp, h.MaxTimestamp)
	}
	recs, err := DecodeBatch(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if recs[0].Offset != 1000 || recs[1].Offset != 1001 || recs[0].Timestamp != 500 || recs[1].Timestamp != 400 {
		t.Fatalf("records %+v", recs)
	}
}

// handBatch assembles an uncompressed batch around a hand-written records
// section, with a correct CRC, so that the records decoder is tested alone.
func handBatch(count, lastDelta int32, records []byte) []byte {
	h := BatchHeader{Magic: MagicV2, LastOffsetDelta: lastDelta, RecordCount: count, BaseTimestamp: 10,
		MaxTimestamp: 10, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	b := append(h.AppendTo(nil), records...)
	binary.BigEndian.PutUint32(b[LengthPos:], uint32(len(b)-LogOverhead))
	resealCRC(b)
	return b
}

// rawRecord encodes a record from explicit field values.
func rawRecord(length int32, offDelta int32, fields ...[]byte) []byte {
	body := []byte{0}
	body = appendVarlong(body, 0)
	body = appendVarint(body, offDelta)
	for _, f := range fields {
		body = append(body, f...)
	}
	if length < 0 {
		length = int32(len(body))
	}
	return append(appendVarint(nil, length), body...)
}

func vi(v int32) []byte { return appendVarint(nil, v) }

// Kafka: DefaultRecord.readFrom's checks: "Invalid record size", "Found
// invalid number of record headers", "Invalid negative header key size";
// DefaultRecordBatch's iterator: the declared count must match the records.
func TestDecodeRejectsCorruptRecords(t *testing.T) {
	key := append(vi(1), 'k')
	val := append(vi(1), 'v')
	noHdr := vi(0)
	good := rawRecord(-1, 0, key, val, noHdr)
	cases := []struct {
		name         string
		count, delta int32
		recs         []byte
		want         error
	}{
		{"good", 1, 0, good, nil},
		{"length_too_long", 1, 0, rawRecord(200, 0, key, val, noHdr), ErrCorruptRecord},
		{"length_too_short", 1, 0, rawRecord(7, 0, key, val, noHdr), ErrCorruptRecord},
		{"trailing_bytes_after_last_record", 1, 0, append(append([]byte(nil), good...), 0, 0, 0, 0, 0, 0, 0), ErrInvalidRecordCount},
		{"fewer_records_than_count", 2, 1, append(append([]byte(nil), good...), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), ErrCorruptRecord},
		{"negative_header_count", 1, 0, rawRecord(-1, 0, key, val, vi(-1)), ErrCorruptRecord},
		{"header_count_too_big", 1, 0, rawRecord(-1, 0, key, val, vi(1000)), ErrCorruptRecord},
		{"negative_header_key", 1, 0, rawRecord(-1, 0, key, val, vi(1), vi(-1), vi(-1)), ErrCorruptRecord},
		{"key_past_end", 1, 0, rawRecord(-1, 0, vi(100), val, noHdr), ErrCorruptRecord},
		{"offset_delta_past_last", 1, 0, rawRecord(-1, 1, key, val, noHdr), ErrCorruptRecord},
		{"offset_delta_repeats", 2, 1, append(append([]byte(nil), good...), good...), ErrCorruptRecord},
		{"varint_too_long", 1, 0, rawRecord(-1, 0, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, val, noHdr), ErrCorruptRecord},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := handBatch(c.count, c.delta, c.recs)
			recs, err := DecodeBatch(b, nil)
			if c.want == nil {
				if err != nil || len(recs) != int(c.count) {
					t.Fatalf("DecodeBatch = %v, %v", recs, err)
				}
				return
			}
			wantErr(t, err, c.want)
			if !errors.Is(err, ErrCorruptBatch) || len(recs) != 0 {
				t.Fatalf("error %v should be corrupt with no records, got %d", err, len(recs))
			}
		})
	}
}

// Kafka: negative key and value lengths other than -1 read as null
// (DefaultRecord.readFrom only reads a key when keySize >= 0).
func TestDecodeNegativeLengthIsNull(t *testing.T) {
	b := handBatch(1, 0, rawRecord(-1, 0, vi(-5), vi(-2), vi(0)))
	recs, err := DecodeBatch(b, nil)
	if err != nil || recs[0].Key != nil || recs[0].Value != nil {
		t.Fatalf("DecodeBatch = %+v, %v", recs, err)
	}
}

// Kafka: consumers ignore a partial batch at the end of a fetch response.
func TestRecordsIgnoresTrailingPartialBatch(t *testing.T) {
	var buf []byte
	var want []Record
	next := int64(0)
	for _, c := range allCodecs {
		recs := sampleRecords(7)
		b := buildBatch(t, c, recs)
		SetBaseOffset(b, next)
		for _, r := range recs {
			r.Offset += next
			want = append(want, r)
		}
		next += 7
		buf = append(buf, b...)
	}
	tail := buildBatch(t, CompressionNone, sampleRecords(3))
	for cut := 0; cut < len(tail); cut += 13 {
		var got []Record
		for r, err := range Records(append(buf[:len(buf):len(buf)], tail[:cut]...)) {
			if err != nil {
				t.Fatalf("cut %d: %v", cut, err)
			}
			got = append(got, r)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("cut %d: records differ:\n%s", cut, diff)
		}
	}
}

func TestRecordsStopsAtCorruptBatch(t *testing.T) {
	first := buildBatch(t, CompressionNone, sampleRecords(4))
	second := buildBatch(t, CompressionGzip, sampleRecords(4))
	second[len(second)-3] ^= 0x10
	third := buildBatch(t, CompressionNone, sampleRecords(4))
	buf := append(append(append([]byte(nil), first...), second...), third...)
	n := 0
	var gotErr error
	for _, err := range Records(buf) {
		if err != nil {
			gotErr = err
			continue
		}
		n++
	}
	var ce *CorruptBatchError
	if n != 4 || !errors.Is(gotErr, ErrCRCMismatch) || !errors.As(gotErr, &ce) || ce.Pos != int64(len(first))+CRCPos {
		t.Fatalf("got %d records and error %v; want 4 and a CRC error at %d", n, gotErr, len(first)+CRCPos)
	}
	// Breaking out of the loop early must be honoured.
	for range Records(buf) {
		break
	}
}

// DESIGN.md: no allocation per record. DecodeBatch allocates a constant
// number of times per batch (decompressed copy, header slab, header keys),
// whatever the number of records.
func TestDecodeAllocationsDoNotGrowWithRecords(t *testing.T) {
	skipUnderRace(t)
	for _, c := range allCodecs {
		small := buildBatch(t, c, sampleRecords(10))
		large := buildBatch(t, c, sampleRecords(1000))
		dst := make([]Record, 0, 1000)
		allocs := func(b []byte) float64 {
			return testing.AllocsPerRun(20, func() {
				var err error
				if dst, err = DecodeBatch(b, dst[:0]); err != nil {
					t.Fatal(err)
				}
			})
		}
		as, al := allocs(small), allocs(large)
		if al > as || al > 3 {
			t.Errorf("%v: DecodeBatch allocations: %.1f for 10 records, %.1f for 1000", c, as, al)
		}
		var d BatchDecoder
		decoder := func(b []byte) float64 {
			return testing.AllocsPerRun(20, func() {
				var err error
				if dst, err = d.Decode(b, dst[:0]); err != nil {
					t.Fatal(err)
				}
			})
		}
		decoder(large) // warm up the decoder's buffers
		if ds, dl := decoder(small), decoder(large); dl > ds || dl > 1 {
			t.Errorf("%v: BatchDecoder allocations: %.1f for 10 records, %.1f for 1000", c, ds, dl)
		}
	}
}

// BenchmarkDecode decodes a batch of 1000 ~100-byte records per codec,
// reusing a BatchDecoder (the compaction path).
func BenchmarkDecode(b *testing.B) {
	recs := sampleRecords(1000)
	for _, c := range allCodecs {
		batch := buildBatch(b, c, recs)
		b.Run(c.String(), func(b *testing.B) {
			var d BatchDecoder
			var dst []Record
			b.SetBytes(int64(uncompressedSize(recs)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if dst, err = d.Decode(batch, dst[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// uncompressedSize is the uncompressed size of a batch of recs, the
// figure decoding benchmarks count as bytes processed.
func uncompressedSize(recs []Record) int {
	bb := NewBatchBuilder(CompressionNone)
	for _, r := range recs {
		bb.Append(r)
	}
	return bb.UncompressedSize()
}
