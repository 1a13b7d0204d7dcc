package record

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// legacyMsg encodes one message-set entry with franz-go's kmsg.MessageV0/V1
// (an independent encoder of LegacyRecord), filling in MessageSize and CRC.
func legacyMsg(magic int8, offset int64, attrs int8, ts int64, key, value []byte) []byte {
	var b []byte
	if magic == 0 {
		m := kmsg.MessageV0{Offset: offset, Magic: 0, Attributes: attrs, Key: key, Value: value}
		b = m.AppendTo(nil)
	} else {
		m := kmsg.MessageV1{Offset: offset, Magic: 1, Attributes: attrs, Timestamp: ts, Key: key, Value: value}
		b = m.AppendTo(nil)
	}
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[12:], crc32.ChecksumIEEE(b[16:]))
	return b
}

// legacyRecords are the records the tests put in legacy sets; Offset is the
// index, Timestamp is what magic 1 carries.
func legacyRecords() []Record {
	return []Record{
		{Offset: 0, Timestamp: 1000, Key: []byte("k0"), Value: []byte("v0")},
		{Offset: 1, Timestamp: 900, Key: nil, Value: []byte("v1")},
		{Offset: 2, Timestamp: 1100, Key: []byte("k2"), Value: nil},
		{Offset: 3, Timestamp: 1050, Key: []byte{}, Value: []byte{}},
	}
}

// legacySet encodes recs as uncompressed messages of the given magic; inner
// sets of magic 1 wrappers use relative offsets, as producers write them.
func legacySet(magic int8, recs []Record) []byte {
	var set []byte
	for i, r := range recs {
		set = append(set, legacyMsg(magic, int64(i), 0, r.Timestamp, r.Key, r.Value)...)
	}
	return set
}

// legacyWrapper compresses inner with c into one wrapper message.
func legacyWrapper(t testing.TB, magic int8, c Compression, attrs int8, ts int64, inner []byte) []byte {
	t.Helper()
	comp, err := compress(c, nil, inner)
	if err != nil {
		t.Fatal(err)
	}
	return legacyMsg(magic, 3, int8(c)|attrs, ts, nil, comp)
}

// expectUpConverted checks a converted batch: valid, codec c, records want
// with dense offsets and no producer.
func expectUpConverted(t *testing.T, b []byte, c Compression, want []Record) {
	t.Helper()
	h, err := ValidateClientBatch(b)
	if err != nil {
		t.Fatalf("converted batch invalid: %v", err)
	}
	if h.Compression() != c || h.ProducerID != NoProducerID || h.TimestampType() != TimestampCreateTime {
		t.Fatalf("converted header %+v, want codec %v", h, c)
	}
	got, err := DecodeBatch(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("converted records differ (-want +got):\n%s", diff)
	}
}

// Kafka: LogValidator up-conversion of magic 0: no timestamps, so records
// get NO_TIMESTAMP (-1).
func TestUpConvertLegacyV0(t *testing.T) {
	want := legacyRecords()
	b, err := UpConvertLegacy(legacySet(0, want))
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		want[i].Timestamp = NoTimestamp
	}
	expectUpConverted(t, b, CompressionNone, want)
	if h, _ := ParseHeader(b); h.BaseTimestamp != NoTimestamp || h.MaxTimestamp != NoTimestamp {
		t.Fatalf("magic 0 batch timestamps %d/%d, want -1/-1", h.BaseTimestamp, h.MaxTimestamp)
	}
}

// Kafka: magic 1 CreateTime timestamps survive up-conversion; MaxTimestamp
// is the largest.
func TestUpConvertLegacyV1(t *testing.T) {
	want := legacyRecords()
	b, err := UpConvertLegacy(legacySet(1, want))
	if err != nil {
		t.Fatal(err)
	}
	expectUpConverted(t, b, CompressionNone, want)
	if h, _ := ParseHeader(b); h.BaseTimestamp != 1000 || h.MaxTimestamp != 1100 {
		t.Fatalf("timestamps %d/%d, want 1000/1100", h.BaseTimestamp, h.MaxTimestamp)
	}
}

// Kafka: compressed wrappers (gzip, snappy, lz4; zstd never existed before
// v2) convert to one v2 batch with the same codec.
func TestUpConvertLegacyCompressedWrappers(t *testing.T) {
	for _, magic := range []int8{0, 1} {
		for _, c := range []Compression{CompressionGzip, CompressionSnappy, CompressionLZ4} {
			want := legacyRecords()
			set := legacyWrapper(t, magic, c, 0, 5000, legacySet(magic, want[:2]))
			set = append(set, legacyWrapper(t, magic, c, 0, 5000, legacySet(magic, want[2:]))...)
			b, err := UpConvertLegacy(set)
			if err != nil {
				t.Fatalf("magic %d %v: %v", magic, c, err)
			}
			if magic == 0 {
				for i := range want {
					want[i].Timestamp = NoTimestamp
				}
			}
			expectUpConverted(t, b, c, want)
		}
	}
}

// Kafka: a LogAppendTime wrapper's timestamp applies to its inner messages
// (LegacyRecord with wrapperRecordTimestampType LOG_APPEND_TIME).
func TestUpConvertLegacyLogAppendTimeWrapper(t *testing.T) {
	want := legacyRecords()
	b, err := UpConvertLegacy(legacyWrapper(t, 1, CompressionGzip, AttrTimestampType, 7777, legacySet(1, want)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		want[i].Timestamp = 7777
	}
	expectUpConverted(t, b, CompressionGzip, want)
}

// breakLZ4HeaderChecksum recomputes an LZ4 frame's header checksum over the
// magic number too, as Kafka 0.8-0.9 clients did for magic 0 (KAFKA-3160).
func breakLZ4HeaderChecksum(frame []byte) []byte {
	end := 6
	if frame[4]&0x08 != 0 {
		end += 8
	}
	broken := append([]byte(nil), frame...)
	broken[end] = byte(xxh32Short(broken[:end]) >> 8)
	return broken
}

// Kafka: KafkaLZ4BlockInputStream ignores the frame header checksum of
// magic 0 messages, whose producers computed it wrongly; magic 1 frames
// must carry a correct one.
func TestUpConvertLegacyMagic0LZ4Checksum(t *testing.T) {
	inner := legacySet(0, legacyRecords())
	comp, _ := compress(CompressionLZ4, nil, inner)
	broken := breakLZ4HeaderChecksum(comp)
	if broken[6] == comp[6] {
		t.Fatal("test frame's checksum did not change; pick other data")
	}
	b, err := UpConvertLegacy(legacyMsg(0, 3, int8(CompressionLZ4), 0, nil, broken))
	if err != nil {
		t.Fatalf("magic 0 LZ4 with the old header checksum: %v", err)
	}
	if h, _ := ValidateBatch(b); h.RecordCount != 4 {
		t.Fatalf("converted %d records", h.RecordCount)
	}
	inner1 := legacySet(1, legacyRecords())
	comp1, _ := compress(CompressionLZ4, nil, inner1)
	_, err = UpConvertLegacy(legacyMsg(1, 3, int8(CompressionLZ4), 0, nil, breakLZ4HeaderChecksum(comp1)))
	if !errors.Is(err, ErrCorruptRecord) {
		t.Fatalf("magic 1 LZ4 with a wrong header checksum: %v, want ErrCorruptRecord", err)
	}
}

// xxh32Short must match the LZ4 frame header checksums that pierrec/lz4
// writes (with and without a content size).
func TestXXH32MatchesLZ4FrameHeader(t *testing.T) {
	for _, src := range [][]byte{nil, []byte("abc"), make([]byte, 100000)} {
		frame, _ := compress(CompressionLZ4, nil, src)
		if got := byte(xxh32Short(frame[4:6]) >> 8); got != frame[6] {
			t.Fatalf("header checksum %#x, frame has %#x", got, frame[6])
		}
		if fixed := fixLZ4HeaderChecksum(frame); string(fixed) != string(frame) {
			t.Fatal("fixing a correct frame changed it")
		}
	}
	// Known XXH32 value (seed 0) from the reference implementation.
	if got := xxh32Short([]byte("abc")); got != 0x32D153FF {
		t.Fatalf("xxh32(abc) = %#x, want 0x32d153ff", got)
	}
}

// Kafka: LegacyRecord.ensureValid (size and CRC-32), and
// LogValidator's rules for compressed sets.
func TestUpConvertLegacyRejects(t *testing.T) {
	good := legacySet(1, legacyRecords())
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)-1] ^= 1
	tooSmall := legacyMsg(0, 0, 0, 0, nil, nil)
	binary.BigEndian.PutUint32(tooSmall[8:], 13)
	magic2 := legacyMsg(1, 0, 0, 0, nil, []byte("x"))
	magic2[16] = 2
	binary.BigEndian.PutUint32(magic2[12:], crc32.ChecksumIEEE(magic2[16:]))
	nested := legacyWrapper(t, 1, CompressionGzip, 0, 0, legacyWrapper(t, 1, CompressionGzip, 0, 0, good))
	mixed := legacyWrapper(t, 1, CompressionSnappy, 0, 0, legacySet(0, legacyRecords()))
	tornInner := legacyWrapper(t, 1, CompressionGzip, 0, 0, good[:len(good)-3])
	nullWrapper := legacyMsg(1, 0, int8(CompressionGzip), 0, nil, nil)
	zstdWrapper := legacyWrapper(t, 1, CompressionZstd, 0, 0, good)
	cases := []struct {
		name string
		set  []byte
		want error
	}{
		{"empty", nil, ErrInvalidRecordCount},
		{"bad_crc", flipped, ErrCRCMismatch},
		{"torn", good[:len(good)-1], ErrShortBatch},
		{"size_below_overhead", tooSmall, ErrCorruptRecord},
		{"magic_2", magic2, ErrInvalidMagic},
		{"nested_compression", nested, ErrCorruptRecord},
		{"inner_magic_differs", mixed, ErrInvalidMagic},
		{"torn_inner_set", tornInner, ErrCorruptRecord},
		{"null_wrapper_value", nullWrapper, ErrCorruptRecord},
		{"zstd_wrapper", zstdWrapper, ErrCorruptRecord},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := UpConvertLegacy(c.set)
			wantErr(t, err, c.want)
		})
	}
}

// A wrapper's inner set counts against the decompression budget.
func TestUpConvertLegacyBudget(t *testing.T) {
	inner := legacySet(1, []Record{{Value: make([]byte, 4096)}})
	set := legacyWrapper(t, 1, CompressionGzip, 0, 0, inner)
	c := legacyConverter{budget: len(inner) - 1, b: NewBatchBuilder(CompressionNone)}
	if err := c.walk(set, nil, 0); !errors.Is(err, ErrCorruptRecord) {
		t.Fatalf("over budget: %v", err)
	}
	c = legacyConverter{budget: len(inner), b: NewBatchBuilder(CompressionNone)}
	if err := c.walk(set, nil, 0); err != nil || c.b.Len() != 1 {
		t.Fatalf("at budget: %v, %d records", err, c.b.Len())
	}
}
