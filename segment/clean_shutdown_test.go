package segment_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/varve/varve/segment"
)

// Kafka 3.5+: CleanShutdownFileHandler writes {"version":0,"brokerEpoch":N}
// into .kafka_cleanshutdown and reads N back at start; a marker it
// cannot read (an empty one from an older Kafka, another version)
// yields no epoch. Varve reads the markers two Kafka 4.4.0 brokers wrote
// and writes the same bytes for their epochs.
func TestCleanShutdownMarkerKafkaWrote(t *testing.T) {
	for path, epoch := range map[string]int64{
		"../internal/kafkafixtures/testdata/kafka-4.4.0/.kafka_cleanshutdown":     43,
		"../internal/kafkafixtures/testdata/kafka-4.4.0-txn/.kafka_cleanshutdown": 21,
	} {
		kafka, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := segment.ParseCleanShutdown(kafka); err != nil || got != epoch {
			t.Errorf("%s: epoch %d, %v; want %d", path, got, err, epoch)
		}
		dir := t.TempDir()
		if err := segment.WriteCleanShutdownEpoch(nil, dir, epoch); err != nil {
			t.Fatal(err)
		}
		if ours, _ := os.ReadFile(filepath.Join(dir, segment.CleanShutdownFile)); string(ours) != string(kafka) {
			t.Errorf("Varve wrote %q, Kafka %q", ours, kafka)
		}
	}
	for _, bad := range []string{"", "{}", `{"version":1,"brokerEpoch":3}`, `{"version":0}`, `{"brokerEpoch":3}`,
		`{"version":0,"brokerEpoch":"3"}`, `{"version":0,"brokerEpoch":3,"x":1}`, `[0,3]`, `{"version":0,"brokerEpoch":3}{}`} {
		if _, err := segment.ParseCleanShutdown([]byte(bad)); err == nil {
			t.Errorf("%q read as a marker with an epoch", bad)
		}
	}
}

// A log that manages its own marker (no log manager, no broker) writes
// Kafka's default epoch, -1.
func TestStandaloneLogMarkerHasNoEpoch(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, segment.DefaultConfig())
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, segment.CleanShutdownFile))
	if err != nil {
		t.Fatal(err)
	}
	if epoch, err := segment.ParseCleanShutdown(data); err != nil || epoch != -1 {
		t.Fatalf("marker %q: epoch %d, %v; want -1", data, epoch, err)
	}
}
