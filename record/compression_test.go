package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/klauspost/compress/s2"
)

func testPayloads() map[string][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 200<<10)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	text := bytes.Repeat([]byte("varve is a layer of sediment laid down in order. "), 3000)
	return map[string][]byte{"empty": {}, "one": {7}, "random": random, "text": text}
}

func TestCompressionRoundTrip(t *testing.T) {
	for _, c := range allCodecs {
		for name, src := range testPayloads() {
			comp, err := compress(c, []byte("keep"), src)
			if err != nil {
				t.Fatalf("%v/%s: compress: %v", c, name, err)
			}
			if string(comp[:4]) != "keep" {
				t.Fatalf("%v/%s: compress did not append", c, name)
			}
			out, err := decompress(c, nil, comp[4:], DefaultMaxDecompressedBytes)
			if err != nil {
				t.Fatalf("%v/%s: decompress: %v", c, name, err)
			}
			if !bytes.Equal(out, src) {
				t.Fatalf("%v/%s: round trip changed %d bytes into %d", c, name, len(src), len(out))
			}
		}
	}
}

func TestCompressionNames(t *testing.T) {
	for _, c := range allCodecs {
		got, err := ParseCompression(c.String())
		if err != nil || got != c {
			t.Errorf("ParseCompression(%q) = %v, %v", c.String(), got, err)
		}
	}
	if _, err := ParseCompression("brotli"); err == nil {
		t.Error("ParseCompression accepted brotli")
	}
	if s := Compression(6).String(); s != "unknown(6)" {
		t.Errorf("String of 6 = %q", s)
	}
}

// Kafka (Java producer): snappy is xerial-framed by snappy-java's
// SnappyOutputStream: magic, version 1, compatible version 1, then blocks of
// at most 32 KiB of input, each behind a big-endian length.
func TestSnappyXerialFraming(t *testing.T) {
	src := testPayloads()["random"]
	comp, _ := compress(CompressionSnappy, nil, src)
	if !bytes.Equal(comp[:16], []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1}) {
		t.Fatalf("xerial header % x", comp[:16])
	}
	rest, blocks, total := comp[16:], 0, 0
	for len(rest) > 0 {
		n := int(binary.BigEndian.Uint32(rest))
		block := rest[4 : 4+n]
		dec, err := s2.Decode(nil, block)
		if err != nil || len(dec) > 32<<10 {
			t.Fatalf("block %d: %d bytes decoded, %v", blocks, len(dec), err)
		}
		total += len(dec)
		rest = rest[4+n:]
		blocks++
	}
	if total != len(src) || blocks != (len(src)+32<<10-1)/(32<<10) {
		t.Fatalf("%d blocks holding %d bytes for %d input bytes", blocks, total, len(src))
	}
}

// Kafka: snappy-java's SnappyInputStream also reads an unframed snappy
// block (some non-Java clients send one).
func TestSnappyRawBlockAccepted(t *testing.T) {
	src := testPayloads()["text"]
	out, err := decompress(CompressionSnappy, nil, s2.EncodeSnappy(nil, src), DefaultMaxDecompressedBytes)
	if err != nil || !bytes.Equal(out, src) {
		t.Fatalf("raw snappy: %d bytes, %v", len(out), err)
	}
}

// Kafka's Java producer writes LZ4 frames with 64 KiB independent blocks and
// no checksums (KafkaLZ4BlockOutputStream): FLG 0x60, BD 0x40.
func TestLZ4FrameDescriptor(t *testing.T) {
	comp, _ := compress(CompressionLZ4, nil, testPayloads()["text"])
	if binary.LittleEndian.Uint32(comp) != 0x184D2204 || comp[4] != 0x60 || comp[5] != 0x40 {
		t.Fatalf("lz4 frame starts % x", comp[:7])
	}
}

func TestDecompressCorruptInput(t *testing.T) {
	for _, c := range allCodecs[1:] {
		comp, _ := compress(c, nil, testPayloads()["text"])
		// (An empty input is not tested: the record decoder never
		// decompresses an empty records section.)
		for _, cut := range []int{1, len(comp) / 2, len(comp) - 1} {
			if _, err := decompress(c, nil, comp[:cut], DefaultMaxDecompressedBytes); err == nil {
				t.Errorf("%v: decompress of %d/%d bytes succeeded", c, cut, len(comp))
			}
		}
	}
}

// DESIGN.md: bad input never causes an unbounded allocation. 16 MiB of
// zeros compress to almost nothing; with a 1 MiB limit every codec must stop
// early, having allocated about the limit and no more.
func TestDecompressionBombIsBounded(t *testing.T) {
	const limit = 1 << 20
	zeros := make([]byte, 16<<20)
	for _, c := range allCodecs {
		comp, err := compress(c, nil, zeros)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decompress(c, nil, comp, limit); !errors.Is(err, errDecompressLimit) {
			t.Fatalf("%v: decompress beyond the limit: %v", c, err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _ = decompress(c, nil, comp, limit)
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 8*limit {
			t.Errorf("%v: refusing a bomb allocated %d bytes for a %d-byte limit", c, grew, limit)
		}
	}
}

// A xerial block claiming a huge decoded length must be refused before
// anything is allocated for it.
func TestSnappyLengthClaimIsChecked(t *testing.T) {
	block := binary.AppendUvarint(nil, 1<<30) // claims 1 GiB
	block = append(block, 0, 0)
	framed := append(append([]byte(nil), xerialHeader...), 0, 0, 0, byte(len(block)))
	framed = append(framed, block...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := decompress(CompressionSnappy, nil, framed, DefaultMaxDecompressedBytes)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, errDecompressLimit) || after.TotalAlloc-before.TotalAlloc > 1<<20 {
		t.Fatalf("error %v after allocating %d bytes", err, after.TotalAlloc-before.TotalAlloc)
	}
}

// The bound reaches users as ErrBatchTooLarge from the record decoder.
func TestDecodeBatchDecompressionLimit(t *testing.T) {
	big := make([]byte, 2<<20)
	b := NewBatchBuilder(CompressionZstd)
	b.Append(Record{Timestamp: 1, Value: big})
	batch, _ := b.Build()
	d := BatchDecoder{MaxDecompressedBytes: 1 << 20}
	_, err := d.Decode(batch, nil)
	wantErr(t, err, ErrBatchTooLarge)
	if _, err := DecodeBatch(batch, nil); err != nil {
		t.Fatalf("DecodeBatch with the default limit: %v", err)
	}
}

func BenchmarkCompress(b *testing.B) {
	src := buildBatch(b, CompressionNone, sampleRecords(1000))[RecordsPos:]
	for _, c := range allCodecs[1:] {
		b.Run(c.String(), func(b *testing.B) {
			dst := make([]byte, 0, 2*len(src))
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := compress(c, dst[:0], src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
