package record

import (
	"bytes"
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
