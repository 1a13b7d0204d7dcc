package metadata

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Kafka: KIP-868. BeginTransactionRecord, EndTransactionRecord,
// AbortTransactionRecord and NoOpRecord in Kafka's bytes (version 0,
// the optional name and reason as tagged field 0), and Apply leaves the
// image and its version as they are for each.
func TestTxnRecords(t *testing.T) {
	tests := []struct {
		rec Record
		hex string
	}{
		{NoOpRecord{}, "01140000"},
		{BeginTransactionRecord{}, "01170000"},
		{BeginTransactionRecord{Name: "ab"}, "011700" + "01 00 03 03 6162"},
		{EndTransactionRecord{}, "01180000"},
		{AbortTransactionRecord{Reason: "x"}, "011900" + "01 00 02 02 78"},
	}
	img := New("c")
	for _, tc := range tests {
		want, _ := hex.DecodeString(stripSpaces(tc.hex))
		got := AppendRecord(nil, tc.rec)
		if !bytes.Equal(got, want) {
			t.Errorf("%#v written as %x, want %x", tc.rec, got, want)
		}
		back, err := DecodeRecord(got)
		if err != nil || !cmp.Equal(back, tc.rec) {
			t.Errorf("%x decoded as %#v, %v", got, back, err)
		}
		if !IsControl(tc.rec) {
			t.Errorf("%T is not a control record", tc.rec)
		}
		next, err := Apply(img, tc.rec)
		if err != nil || next.Version() != img.Version() {
			t.Errorf("Apply(%T): version %d, %v", tc.rec, next.Version(), err)
		}
	}
	if IsControl(TopicRecord{}) {
		t.Error("TopicRecord is a control record")
	}
}

func stripSpaces(s string) string {
	return string(bytes.ReplaceAll([]byte(s), []byte(" "), nil))
}
