package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// Fuzz targets for everything that parses bytes from outside: batch headers
// (produce requests, segment files being recovered), the records decoder,
// and legacy message sets. None may panic; successful parses must be
// self-consistent. Run one with, for example:
//
//	go test ./segment -run '^$' -fuzz '^FuzzValidateBatch$' -fuzztime 30s

// seedBatches returns valid batches of every codec.
func seedBatches(tb testing.TB) [][]byte {
	var out [][]byte
	for _, c := range allCodecs {
		for _, n := range []int{1, 5} {
			out = append(out, buildBatch(tb, c, sampleRecords(n)))
		}
	}
	return out
}

func FuzzValidateBatch(f *testing.F) {
	for _, b := range seedBatches(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ValidateBatch(data)
		if err != nil {
			if !errors.Is(err, ErrShortBatch) && !errors.Is(err, ErrCorruptBatch) {
				t.Fatalf("error %v is neither short nor corrupt", err)
			}
			return
		}
		if !bytes.Equal(h.AppendTo(nil), data[:BatchHeaderSize]) || h.Size() != int64(len(data)) {
			t.Fatalf("header %+v does not re-encode to its bytes", h)
		}
		d := BatchDecoder{MaxDecompressedBytes: 1 << 20}
		recs, err := d.Decode(data, nil)
		if err == nil && len(recs) != int(h.RecordCount) {
			t.Fatalf("decoded %d records, header says %d", len(recs), h.RecordCount)
		}
	})
}

func FuzzNextBatch(f *testing.F) {
	for _, b := range seedBatches(f) {
		f.Add(b, 0)
		f.Add(b[:len(b)/2], 100)
	}
	f.Fuzz(func(t *testing.T, data []byte, maxBytes int) {
		h, size, err := NextBatch(data, maxBytes)
		if err != nil {
			return
		}
		if size < BatchHeaderSize || size > len(data) || int64(size) != h.Size() ||
			(maxBytes > 0 && size > maxBytes) {
			t.Fatalf("size %d for %d bytes (max %d), header %+v", size, len(data), maxBytes, h)
		}
		if !bytes.Equal(h.AppendTo(nil), data[:BatchHeaderSize]) {
			t.Fatalf("header %+v does not re-encode to its bytes", h)
		}
	})
}

// FuzzDecodeBatch wraps fuzzed records sections in a header with a correct
// CRC (the fuzzer would rarely find one), optionally compressing them first
// so that the record parser is reached through every codec.
func FuzzDecodeBatch(f *testing.F) {
	for _, c := range allCodecs {
		recs := sampleRecords(4)
		b := buildBatch(f, c, recs)
		raw := buildBatch(f, CompressionNone, recs)[RecordsPos:]
		f.Add(int16(c), int32(4), int32(3), raw, true)
		f.Add(int16(c), int32(4), int32(3), b[RecordsPos:], false)
	}
	f.Fuzz(func(t *testing.T, attrs int16, count, delta int32, records []byte, doCompress bool) {
		if doCompress {
			c := Compression(attrs & AttrCompressionMask)
			if !c.valid() {
				return
			}
			var err error
			if records, err = compress(c, nil, records); err != nil {
				t.Fatal(err)
			}
		}
		h := BatchHeader{Magic: MagicV2, Attributes: attrs, LastOffsetDelta: delta, RecordCount: count,
			BaseOffset: 1000, BaseTimestamp: 5, MaxTimestamp: 9}
		b := append(h.AppendTo(nil), records...)
		binary.BigEndian.PutUint32(b[LengthPos:], uint32(len(b)-LogOverhead))
		resealCRC(b)
		checkDecode(t, b)
	})
}

// checkDecode decodes b with a 1 MiB bound and, when that succeeds, checks
// the records and that rebuilding them gives the same records back.
func checkDecode(t *testing.T, b []byte) {
	d := BatchDecoder{MaxDecompressedBytes: 1 << 20}
	recs, err := d.Decode(b, nil)
	if err != nil {
		if !errors.Is(err, ErrCorruptBatch) {
			t.Fatalf("error %v is not corrupt", err)
		}
		return
	}
	h, _ := ParseHeader(b)
	if len(recs) != int(h.RecordCount) {
		t.Fatalf("decoded %d records, header says %d", len(recs), h.RecordCount)
	}
	for i := 1; i < len(recs); i++ {
		if recs[i].Offset <= recs[i-1].Offset || recs[i].Offset > h.LastOffset() {
			t.Fatalf("offsets out of order: %d after %d", recs[i].Offset, recs[i-1].Offset)
		}
	}
	again, err := RebuildBatch(h, recs)
	if err != nil {
		t.Fatalf("RebuildBatch of decoded records: %v", err)
	}
	recs2, err := DecodeBatch(again, nil)
	if err != nil || len(recs2) != len(recs) {
		t.Fatalf("rebuilt batch decodes to %d records, %v", len(recs2), err)
	}
	for i := range recs {
		if recs[i].Offset != recs2[i].Offset || !bytes.Equal(recs[i].Key, recs2[i].Key) ||
			!bytes.Equal(recs[i].Value, recs2[i].Value) || len(recs[i].Headers) != len(recs2[i].Headers) {
			t.Fatalf("record %d changed by rebuilding: %+v -> %+v", i, recs[i], recs2[i])
		}
	}
}

func FuzzUpConvertLegacy(f *testing.F) {
	for _, magic := range []int8{0, 1} {
		f.Add(legacySet(magic, legacyRecords()))
		for _, c := range []Compression{CompressionGzip, CompressionSnappy, CompressionLZ4} {
			f.Add(legacyWrapper(f, magic, c, 0, 99, legacySet(magic, legacyRecords())))
		}
	}
	f.Fuzz(func(t *testing.T, set []byte) {
		b, err := UpConvertLegacy(set)
		if err != nil {
			var ce *CorruptBatchError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *CorruptBatchError", err)
			}
			return
		}
		if _, err := ValidateClientBatch(b); err != nil {
			t.Fatalf("up-converted batch invalid: %v", err)
		}
		checkDecode(t, b)
	})
}
