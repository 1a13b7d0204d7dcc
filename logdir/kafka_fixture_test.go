package logdir_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/segment"
)

// kafkaFixtures holds a log dir an Apache Kafka 4.4.0 broker left at a
// clean shutdown: topic "fixture", 2 partitions, topic id below
// (internal/kafkafixtures/README.md says how).
const (
	kafkaFixtures = "../internal/kafkafixtures/testdata/kafka-4.4.0"
	kafkaTopicID  = "URjXs_rjRYacNb0H9_9Kmg"
)

// Kafka: PartitionMetadataFile as a 4.4.0 broker wrote it. Varve reads
// its topic id, and writes the same bytes for the same id when it creates
// a partition.
func TestPartitionMetadataKafkaWrote(t *testing.T) {
	id, err := logdir.ParseTopicID(kafkaTopicID)
	if err != nil {
		t.Fatal(err)
	}
	m := openManager(t, []string{t.TempDir()})
	defer m.Close()
	for _, p := range []int32{0, 1} {
		name := tp("fixture", p).String()
		kafka, err := os.ReadFile(filepath.Join(kafkaFixtures, name, logdir.PartitionMetadataFile))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := logdir.ParsePartitionMetadata(kafka); err != nil || got != id {
			t.Errorf("%s: Kafka's partition.metadata read as %v, %v; want %v", name, got, err, id)
		}
		pl, err := m.Create(tp("fixture", p), id)
		if err != nil {
			t.Fatal(err)
		}
		ours, err := os.ReadFile(filepath.Join(pl.Log.Dir(), logdir.PartitionMetadataFile))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ours, kafka) {
			t.Errorf("%s: Varve wrote %q, Kafka wrote %q", name, ours, kafka)
		}
	}
}

// copyKafkaLogDir copies the fixture log dir (both partitions, the
// checkpoints, the clean-shutdown marker) without the KRaft metadata
// log's directory, which Kafka's LogManager does not load either.
func copyKafkaLogDir(t *testing.T, withMetadataLog bool) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(kafkaFixtures)); err != nil {
		t.Fatal(err)
	}
	if !withMetadataLog {
		if err := os.RemoveAll(filepath.Join(dst, "__cluster_metadata-0")); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// fixtureNow keeps the fixture's idempotent producers from expiring
// (producer.id.expiration.ms, one day) whatever day the test runs.
func fixtureNow(c *logdir.Config) {
	inner := c.LogConfig
	c.LogConfig = func(topic string) segment.Config {
		cfg := inner(topic)
		cfg.SegmentBytes = segment.DefaultSegmentBytes
		cfg.Now = func() time.Time { return time.UnixMilli(1796143368312).Add(time.Minute) }
		return cfg
	}
}

// Kafka: LogManager.loadLogs on a log dir that Kafka 4.4.0 shut down
// cleanly: the marker (Kafka 4.x writes {"version":0,"brokerEpoch":N} in
// it) makes the load clean, the recovery-point and replication-offset
// checkpoints give each partition its recovery point and high watermark,
// and partition.metadata its topic id.
func TestLoadLogDirKafkaWrote(t *testing.T) {
	id, err := logdir.ParseTopicID(kafkaTopicID)
	if err != nil {
		t.Fatal(err)
	}
	m := openManager(t, []string{copyKafkaLogDir(t, false)}, fixtureNow)
	defer m.Close()
	for p, end := range map[int32]int64{0: 4, 1: 12} {
		pl, ok := m.Get(tp("fixture", p))
		if !ok {
			t.Fatalf("fixture-%d not loaded; loaded %d logs", p, len(m.Logs()))
		}
		rep := pl.Log.Recovery()
		if pl.TopicID != id || pl.CheckpointedHW != end || !rep.CleanShutdown || rep.SegmentsRecovered != 0 || rep.Dropped() {
			t.Errorf("fixture-%d: topic id %v, checkpointed hw %d, recovery %+v; want %v, %d, a clean load", p, pl.TopicID, pl.CheckpointedHW, rep, id, end)
		}
		if pl.Log.EndOffset() != end || pl.Log.RecoveryPoint() != end || len(pl.Log.Producers()) != 3 {
			t.Errorf("fixture-%d: end %d, recovery point %d, %d producers; want %d, %d, 3", p, pl.Log.EndOffset(), pl.Log.RecoveryPoint(), len(pl.Log.Producers()), end, end)
		}
	}
	if n := len(m.Logs()); n != 2 {
		t.Errorf("loaded %d logs, want the 2 partitions of fixture", n)
	}
}

// Kafka: LogManager.loadLogs skips the KRaft metadata log's directory
// (__cluster_metadata-0, which KafkaRaftClient owns), so a log dir that is
// also the metadata log dir (metadata.log.dir unset) loads only the topic
// partitions.
func TestLoadLogDirKafkaWroteSkipsMetadataLog(t *testing.T) {
	dir := copyKafkaLogDir(t, true)
	m := openManager(t, []string{dir}, fixtureNow)
	if _, ok := m.Get(tp("__cluster_metadata", 0)); ok {
		t.Errorf("the KRaft metadata log was loaded as a partition")
	}
	if n := len(m.Logs()); n != 2 {
		t.Errorf("loaded %d logs, want the 2 partitions of fixture", n)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir(filepath.Join(dir, "__cluster_metadata-0"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Name() != "quorum-state" {
		t.Errorf("the log manager wrote into the metadata log's directory: %v", files)
	}
}
