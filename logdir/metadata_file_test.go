package logdir_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/varve/varve/logdir"
)

// Kafka: PartitionMetadataReadBuffer reads "version: 0" then
// "topic_id: <base64url id>". The file Kafka writes has no newline at
// the end; the one older Varve wrote has one; both load. Another
// version, a missing id line or a bad id is refused.
func TestParsePartitionMetadata(t *testing.T) {
	id := logdir.TopicID{0x3f, 0xfe, 0x10, 0x42, 9: 7, 15: 0xff}
	for _, tc := range []struct {
		name, data string
		ok         bool
	}{
		{"kafka", "version: 0\ntopic_id: " + id.String(), true},
		{"trailing newline", "version: 0\ntopic_id: " + id.String() + "\n", true},
		{"crlf", "version: 0\r\ntopic_id: " + id.String() + "\r\n", true},
		{"version 1", "version: 1\ntopic_id: " + id.String(), false},
		{"no id line", "version: 0\n", false},
		{"bad id", "version: 0\ntopic_id: not-an-id", false},
		{"lines swapped", "topic_id: " + id.String() + "\nversion: 0", false},
		{"empty", "", false},
	} {
		got, err := logdir.ParsePartitionMetadata([]byte(tc.data))
		if tc.ok && (err != nil || got != id) {
			t.Errorf("%s: got %v, %v; want %v", tc.name, got, err, id)
		}
		if !tc.ok && err == nil {
			t.Errorf("%s: accepted %q as %v", tc.name, tc.data, got)
		}
	}
}

// A partition directory written by Kafka (its partition.metadata made by
// hand here, as Kafka 4.x writes it) loads with its topic id.
func TestLoadsKafkasPartitionMetadata(t *testing.T) {
	d := t.TempDir()
	id := logdir.TopicID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	pdir := filepath.Join(d, "adopted-0")
	if err := os.Mkdir(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Uuid.toString of these bytes: base64url without padding.
	if err := os.WriteFile(filepath.Join(pdir, logdir.PartitionMetadataFile), []byte("version: 0\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := openManager(t, []string{d})
	defer m.Close()
	pl, ok := m.Get(tp("adopted", 0))
	if !ok || pl.TopicID != id {
		t.Fatalf("adopted partition loaded %v with topic id %v; want %v", ok, pl, id)
	}
}
