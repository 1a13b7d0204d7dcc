package record

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Interop with an independent Kafka encoder: franz-go's kmsg (generated from
// Kafka's message specs) for the batch and record layout, and kgo's default
// compressor and decompressor for the codecs' framing (kgo decodes xerial
// snappy and the Java client's LZ4 frames).

var kgoCodecs = map[Compression]kgo.CompressionCodec{
	CompressionGzip:   kgo.GzipCompression(),
	CompressionSnappy: kgo.SnappyCompression(),
	CompressionLZ4:    kgo.Lz4Compression(),
	CompressionZstd:   kgo.ZstdCompression(),
}

// kmsgRecord encodes r with kmsg.Record, computing its Length field.
func kmsgRecord(r Record, offDelta int32, tsDelta int64) []byte {
	kr := kmsg.Record{TimestampDelta64: tsDelta, OffsetDelta: offDelta, Key: r.Key, Value: r.Value}
	for _, h := range r.Headers {
		kr.Headers = append(kr.Headers, kmsg.Header{Key: h.Key, Value: h.Value})
	}
	body := kr.AppendTo(nil)[1:] // Length 0 encodes as one byte
	kr.Length = int32(len(body))
	return kr.AppendTo(nil)
}

// kmsgBatch encodes recs as a kmsg.RecordBatch compressed by kgo.
func kmsgBatch(t *testing.T, c Compression, recs []Record) []byte {
	t.Helper()
	var raw []byte
	base, maxTS := recs[0].Timestamp, recs[0].Timestamp
	for i, r := range recs {
		raw = append(raw, kmsgRecord(r, int32(i), r.Timestamp-base)...)
		maxTS = max(maxTS, r.Timestamp)
	}
	if c != CompressionNone {
		comp, err := kgo.DefaultCompressor(kgoCodecs[c])
		if err != nil {
			t.Fatal(err)
		}
		out, used := comp.Compress(new(bytes.Buffer), raw)
		if int8(used) != int8(c) {
			t.Fatalf("kgo used codec %d for %v", used, c)
		}
		raw = append([]byte(nil), out...)
	}
	rb := kmsg.RecordBatch{FirstOffset: 0, Length: int32(MinBatchLength + len(raw)), PartitionLeaderEpoch: -1,
		Magic: 2, Attributes: int16(c), LastOffsetDelta: int32(len(recs) - 1), FirstTimestamp: base,
		MaxTimestamp: maxTS, ProducerID: 12, ProducerEpoch: 1, FirstSequence: 100,
		NumRecords: int32(len(recs)), Records: raw}
	b := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// kmsg-encoded batches of every codec validate and decode to the records
// they were built from.
func TestInteropDecodeKmsgBatches(t *testing.T) {
	for _, c := range allCodecs {
		want := sampleRecords(300)
		b := kmsgBatch(t, c, want)
		h, err := ValidateClientBatch(b)
		if err != nil {
			t.Fatalf("%v: ValidateClientBatch of a kmsg batch: %v", c, err)
		}
		if h.Compression() != c || h.ProducerID != 12 || h.BaseSequence != 100 || h.RecordCount != 300 {
			t.Fatalf("%v: header %+v", c, h)
		}
		got, err := DecodeBatch(b, nil)
		if err != nil {
			t.Fatalf("%v: DecodeBatch of a kmsg batch: %v", c, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%v: records differ (-want +got):\n%s", c, diff)
		}
	}
}

// Our batches read back with kmsg.RecordBatch.ReadFrom, kgo's decompressor
// and kmsg.Record.ReadFrom, with every field and the CRC matching.
func TestInteropKmsgReadsOurBatches(t *testing.T) {
	dec := kgo.DefaultDecompressor()
	for _, c := range allCodecs {
		want := sampleRecords(300)
		bb := NewBatchBuilder(c)
		bb.SetProducer(99, 7, 5)
		for _, r := range want {
			bb.Append(r)
		}
		b, err := bb.Build()
		if err != nil {
			t.Fatal(err)
		}
		SetBaseOffset(b, 4000)
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(b); err != nil {
			t.Fatalf("%v: kmsg ReadFrom: %v", c, err)
		}
		crc := crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli))
		if rb.FirstOffset != 4000 || int(rb.Length) != len(b)-12 || rb.Magic != 2 || uint32(rb.CRC) != crc ||
			rb.Attributes != int16(c) || rb.LastOffsetDelta != 299 || rb.NumRecords != 300 ||
			rb.FirstTimestamp != want[0].Timestamp || rb.ProducerID != 99 || rb.ProducerEpoch != 7 ||
			rb.FirstSequence != 5 || rb.PartitionLeaderEpoch != -1 {
			t.Fatalf("%v: kmsg sees %+v", c, rb)
		}
		raw := rb.Records
		if c != CompressionNone {
			if raw, err = dec.Decompress(rb.Records, kgo.CompressionCodecType(c)); err != nil {
				t.Fatalf("%v: kgo Decompress: %v", c, err)
			}
		}
		got := kmsgRecords(t, raw, rb)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%v: kmsg records differ (-want +got):\n%s", c, diff)
		}
	}
}

// kmsgRecords splits raw into records by their Length varints and decodes
// each with kmsg.Record.ReadFrom.
func kmsgRecords(t *testing.T, raw []byte, rb kmsg.RecordBatch) []Record {
	t.Helper()
	var out []Record
	for len(raw) > 0 {
		length, n := binary.Varint(raw)
		if n <= 0 || int(length) > len(raw)-n {
			t.Fatalf("bad record length at %d", len(out))
		}
		var kr kmsg.Record
		if err := kr.ReadFrom(raw[:n+int(length)]); err != nil {
			t.Fatalf("record %d: kmsg ReadFrom: %v", len(out), err)
		}
		if kr.Attributes != 0 {
			t.Fatalf("record %d: attributes %d", len(out), kr.Attributes)
		}
		r := Record{Offset: int64(kr.OffsetDelta), Timestamp: rb.FirstTimestamp + kr.TimestampDelta64,
			Key: kr.Key, Value: kr.Value}
		for _, h := range kr.Headers {
			r.Headers = append(r.Headers, Header{Key: h.Key, Value: h.Value})
		}
		out = append(out, r)
		raw = raw[n+int(length):]
	}
	if len(out) != int(rb.NumRecords) {
		t.Fatalf("%d records, header says %d", len(out), rb.NumRecords)
	}
	return out
}
