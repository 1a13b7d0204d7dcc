package replica

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// kafkaFixtures holds files an Apache Kafka 4.4.0 broker wrote
// (internal/kafkafixtures/README.md says how).
const kafkaFixtures = "../internal/kafkafixtures/testdata/kafka-4.4.0"

// Kafka: LeaderEpochCheckpointFile (CheckpointFile, version 0) as a 4.4.0
// broker wrote it. The node was restarted between produce rounds, so each
// partition has epoch 0 from offset 0 and epoch 2 from round 3's first
// offset (KRaft moved the leader to none, epoch 1, at the controlled
// shutdown and back to node 1, epoch 2, at the restart). Varve must read
// the entries and write the same bytes back.
func TestEpochCheckpointKafkaWrote(t *testing.T) {
	for _, tc := range []struct {
		partition string
		want      []EpochEntry
	}{
		{"fixture-0", []EpochEntry{{0, 0}, {2, 2}}},
		{"fixture-1", []EpochEntry{{0, 0}, {2, 8}}},
	} {
		t.Run(tc.partition, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(kafkaFixtures, tc.partition, "leader-epoch-checkpoint"))
			if err != nil {
				t.Fatal(err)
			}
			c, err := UnmarshalEpochCheckpoint(data)
			if err != nil {
				t.Fatalf("Kafka's leader-epoch-checkpoint: %v\n%q", err, data)
			}
			if diff := cmp.Diff(tc.want, c.Entries()); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if got := c.MarshalCheckpoint(); !bytes.Equal(got, data) {
				t.Errorf("MarshalCheckpoint:\n%q\nKafka wrote:\n%q", got, data)
			}
		})
	}
}
