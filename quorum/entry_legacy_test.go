package quorum

import (
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/varve/varve/metadata"
)

// A metadata log written before metadata transactions (each entry an
// 8-byte proposal id, then the change's records together) still reads:
// a node upgraded in place must not skip its cluster's history.
func TestLegacyEntriesStillRead(t *testing.T) {
	recs := []metadata.Record{
		metadata.TopicRecord{Name: "orders", TopicID: metadata.TopicID{1}},
		metadata.ConfigRecord{ResourceType: metadata.ConfigResourceTopic, ResourceName: "orders", Name: "retention.ms", Value: ptr("1000")},
	}
	id := uint64(2)<<48 | 7
	legacy := metadata.AppendEntry(binary.BigEndian.AppendUint64(nil, id), recs)
	if _, _, err := parseEntry(legacy); err == nil {
		t.Fatal("an entry of the earlier layout parsed as one framed record")
	}
	gotID, got, err := parseLegacyEntry(legacy)
	if err != nil {
		t.Fatal(err)
	}
	if gotID != id || !cmp.Equal(got, recs) {
		t.Fatalf("earlier layout read as id %x, %v", gotID, got)
	}
	for _, data := range encodeEntries(id, recs) {
		if _, _, err := parseLegacyEntry(data); err == nil {
			t.Fatalf("an entry of the current layout read as the earlier one: %x", data)
		}
	}
}

func ptr(s string) *string { return &s }
