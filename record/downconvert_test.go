package record

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"testing"
)

// Kafka: Fetch v0-3 consumers get records down-converted to magic 0/1;
// converting back (UpConvertLegacy) must give the same keys, values,
// timestamps (magic 1) and order.
func TestDownConvertRoundTrip(t *testing.T) {
	for _, codec := range []Compression{CompressionNone, CompressionGzip, CompressionZstd} {
		b := NewBatchBuilder(codec)
		recs := []Record{
			{Key: []byte("k1"), Value: []byte("v1"), Timestamp: 1000},
			{Key: nil, Value: []byte("no key"), Timestamp: 1001},
			{Key: []byte("tomb"), Value: nil, Timestamp: 1002, Headers: []Header{{Key: "dropped"}}},
		}
		for _, r := range recs {
			b.Append(r)
		}
		batch, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		SetBaseOffset(batch, 40)
		buf := append(append([]byte(nil), batch...), batch[:30]...) // a partial tail is ignored
		for _, magic := range []int8{0, 1} {
			legacy, err := DownConvert(buf, magic)
			if err != nil {
				t.Fatal(err)
			}
			if got := int64(legacy[0])<<56 | int64(legacy[7]); got != 40 {
				t.Fatalf("first message offset %d, want 40", got)
			}
			v2, err := UpConvertLegacy(legacy)
			if err != nil {
				t.Fatalf("%v magic %d: the down-converted set does not read back: %v", codec, magic, err)
			}
			got, err := DecodeBatch(v2, nil)
			if err != nil || len(got) != len(recs) {
				t.Fatalf("%d records, %v", len(got), err)
			}
			for i, r := range recs {
				if !bytes.Equal(got[i].Key, r.Key) || !bytes.Equal(got[i].Value, r.Value) || (got[i].Key == nil) != (r.Key == nil) || (got[i].Value == nil) != (r.Value == nil) {
					t.Fatalf("record %d differs: %+v", i, got[i])
				}
				wantTs := r.Timestamp
				if magic == 0 {
					wantTs = -1
				}
				if got[i].Timestamp != wantTs {
					t.Fatalf("magic %d record %d timestamp %d, want %d", magic, i, got[i].Timestamp, wantTs)
				}
			}
		}
	}
}

// Issue: Fetch v0-3 made DownConvert inflate stored zstd and gzip batches
// whose one record is 60 MiB of zeros (2 KB compressed); 40 of them and
// two fetches exhausted the broker. Kafka's LazyDownConversionRecords
// converts within the fetch size: the result never passes maxBytes, and
// converting costs about the inflation bound, not 40 x 60 MiB.
func TestDownConvertLimitedBomb(t *testing.T) {
	for _, codec := range []Compression{CompressionZstd, CompressionGzip} {
		b := NewBatchBuilder(codec)
		b.Append(Record{Value: make([]byte, 60<<20), Timestamp: 1000})
		bomb, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		var buf []byte
		for i := range 40 {
			SetBaseOffset(bomb, int64(i))
			buf = append(buf, bomb...)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out, err := DownConvertLimited(buf, 1, 1<<20, 4<<20)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 12<<20 {
			t.Fatalf("%v: down-converting 40 bombs allocated %d bytes", codec, grew)
		}
		// Not even the first message fits: its overhead alone says so.
		if len(out) != LogOverhead || binary.BigEndian.Uint32(out[8:]) <= 1<<20 {
			t.Fatalf("%v: got %d bytes, want the 12-byte overhead of a message over 1 MiB", codec, len(out))
		}
	}
}

// Messages are converted while they fit; the first that does not ends the
// result, whole messages only.
func TestDownConvertLimitedStopsAtMaxBytes(t *testing.T) {
	b := NewBatchBuilder(CompressionLZ4)
	for range 100 {
		b.Append(Record{Value: make([]byte, 100), Timestamp: 1000})
	}
	batch, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	all, err := DownConvert(batch, 1)
	if err != nil {
		t.Fatal(err)
	}
	each := len(all) / 100
	out, err := DownConvertLimited(batch, 1, 10*each+each/2, 1<<20)
	if err != nil || len(out) != 10*each {
		t.Fatalf("got %d bytes (%v), want 10 messages of %d", len(out), err, each)
	}
	if !bytes.Equal(out, all[:len(out)]) {
		t.Fatal("the limited result is not a prefix of the whole one")
	}
}
