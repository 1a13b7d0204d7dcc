package compaction

import (
	"bytes"
	"testing"

	"github.com/varve/varve/record"
	"pgregory.net/rapid"
)

// scanKeys reads the same offsets, keys and null values as the full
// decoder (Kafka's DefaultRecord.readFrom), and never panics on a damaged
// records section.
func TestScanKeysAgreesWithDecodeBatch(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		b := record.NewBatchBuilder(record.CompressionNone)
		for range rapid.IntRange(1, 20).Draw(rt, "records") {
			r := record.Record{Timestamp: rapid.Int64Range(1, 1<<40).Draw(rt, "ts")}
			if !rapid.Bool().Draw(rt, "keyless") {
				r.Key = rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(rt, "key")
			}
			if !rapid.Bool().Draw(rt, "tombstone") {
				r.Value = rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(rt, "value")
			}
			for range rapid.IntRange(0, 3).Draw(rt, "headers") {
				r.Headers = append(r.Headers, record.Header{Key: "h", Value: []byte("v")})
			}
			b.Append(r)
		}
		batch, err := b.Build()
		if err != nil {
			rt.Fatal(err)
		}
		record.SetBaseOffset(batch, rapid.Int64Range(0, 1<<40).Draw(rt, "base"))
		h, _ := record.ParseHeader(batch)
		recs, err := record.DecodeBatch(batch, nil)
		if err != nil {
			rt.Fatal(err)
		}
		keys, err := scanKeys(h, batch[record.RecordsPos:], nil)
		if err != nil || len(keys) != len(recs) {
			rt.Fatalf("scanKeys: %d records, %v; decoder: %d", len(keys), err, len(recs))
		}
		for i, r := range recs {
			k := keys[i]
			if k.offset != r.Offset || !bytes.Equal(k.key, r.Key) || (k.key == nil) != (r.Key == nil) || k.tombstone != (r.Value == nil) {
				rt.Fatalf("record %d: scan %+v, decode offset %d key %q tombstone %v", i, k, r.Offset, r.Key, r.Value == nil)
			}
		}
		// Damage one byte of the records: an error or a result, never a panic.
		pos := rapid.IntRange(record.RecordsPos, len(batch)-1).Draw(rt, "pos")
		batch[pos] ^= byte(rapid.IntRange(1, 255).Draw(rt, "flip"))
		_, _ = scanKeys(h, batch[record.RecordsPos:], nil)
	})
}
