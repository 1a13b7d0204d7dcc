package segment_test

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/varve/varve/segment"
)

// kafkaFixtures holds files an Apache Kafka 4.4.0 broker wrote for topic
// "fixture" (2 partitions); kafkaInput is what its producers sent
// (internal/kafkafixtures/README.md says how).
const (
	kafkaFixtures = "../internal/kafkafixtures/testdata/kafka-4.4.0"
	kafkaInput    = "../internal/kafkafixtures/input.txt"
)

// sentRecord is one line of kafkaInput: the produce round, key and value.
type sentRecord struct {
	round      int
	key, value string
}

func readKafkaInput(t *testing.T) []sentRecord {
	t.Helper()
	f, err := os.Open(kafkaInput)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []sentRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		round, kv, ok1 := strings.Cut(sc.Text(), " ")
		k, v, ok2 := strings.Cut(kv, ":")
		if !ok1 || !ok2 || len(round) != 1 {
			t.Fatalf("bad input line %q", sc.Text())
		}
		out = append(out, sentRecord{int(round[0] - '0'), k, v})
	}
	return out
}

// Kafka: OffsetCheckpointFile (CheckpointFile, version 0) as a 4.4.0
// broker's LogManager and ReplicaManager wrote them at a clean shutdown.
// The log-start-offset checkpoint has no entries: Kafka writes one only
// for a log whose start offset is past its first segment's base.
func TestReadCheckpointsKafkaWrote(t *testing.T) {
	ends := map[segment.TopicPartition]int64{{Topic: "fixture", Partition: 0}: 4, {Topic: "fixture", Partition: 1}: 12}
	for name, want := range map[string]map[segment.TopicPartition]int64{
		segment.RecoveryPointCheckpointFile:  ends,
		segment.ReplicationCheckpointFile:    ends,
		segment.LogStartOffsetCheckpointFile: {},
	} {
		got, err := segment.ReadCheckpoint(nil, filepath.Join(kafkaFixtures, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
		data, err := os.ReadFile(filepath.Join(kafkaFixtures, name))
		if err != nil {
			t.Fatal(err)
		}
		// Kafka writes entries in its map's order, Varve sorted: the same
		// lines, maybe in another order.
		if w, g := sortedLines(data), sortedLines(segment.EncodeCheckpoint(got)); !slices.Equal(w, g) {
			t.Errorf("%s: EncodeCheckpoint gives lines %q, Kafka wrote %q", name, g, w)
		}
	}
}

func sortedLines(b []byte) []string {
	l := strings.Split(string(b), "\n")
	slices.Sort(l)
	return l
}

// Kafka: LogCleanerManager creates cleaner-offset-checkpoint empty when
// no log was ever cleaned, and CheckpointReadBuffer.read returns no
// entries for a file with no first line (checked against 4.4.0's
// OffsetCheckpointFile.read on this very file: {}).
func TestReadEmptyCleanerCheckpointKafkaWrote(t *testing.T) {
	got, err := segment.ReadCheckpoint(nil, filepath.Join(kafkaFixtures, segment.CleanerOffsetCheckpointFile))
	if err != nil || len(got) != 0 {
		t.Fatalf("Kafka's empty cleaner-offset-checkpoint: %v, %v; want no entries", got, err)
	}
}
