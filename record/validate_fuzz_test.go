package record

import (
	"errors"
	"testing"
)

// FuzzValidateProduced: the produce validator never panics, fails only
// with the errors its contract names, and agrees with the decoder: every
// batch it accepts decodes to RecordCount records at offsets 0, 1, 2, ...
// Run with
//
//	go test ./record -run '^$' -fuzz '^FuzzValidateProduced$' -fuzztime 30s
func FuzzValidateProduced(f *testing.F) {
	for _, b := range seedBatches(f) {
		f.Add(b, false)
		f.Add(append(append([]byte(nil), b...), b[:20]...), true)
	}
	f.Add(rawBatch(f, CompressionNone, 3, recordsOf(0, 2, 1)), false)
	f.Fuzz(func(t *testing.T, data []byte, compacted bool) {
		rules := rulesFor(compacted)
		err := ValidateProduced(data, rules)
		if err != nil {
			checkValidateErr(t, err)
			return
		}
		var d BatchDecoder
		var recs []Record
		for p := 0; p < len(data); {
			h, n, err := NextBatch(data[p:], 0)
			if err != nil {
				t.Fatalf("accepted, but batch at %d: %v", p, err)
			}
			if recs, err = d.Decode(data[p:p+n], recs); err != nil {
				t.Fatalf("accepted, but the decoder refuses batch at %d: %v", p, err)
			}
			for i, r := range recs {
				if r.Offset != h.BaseOffset+int64(i) || (compacted && r.Key == nil) {
					t.Fatalf("accepted record %d at offset %d, key %q", i, r.Offset, r.Key)
				}
			}
			p += n
		}
	})
}

func checkValidateErr(t *testing.T, err error) {
	if errors.Is(err, ErrShortBatch) {
		t.Fatalf("a torn tail must be corrupt, got %v", err)
	}
	var rej *RecordsRejectedError
	if errors.As(err, &rej) {
		if len(rej.Records) == 0 {
			t.Fatalf("rejected records without naming one: %v", err)
		}
		return
	}
	if !errors.Is(err, ErrCorruptBatch) {
		t.Fatalf("error %v is not a corrupt batch", err)
	}
}
