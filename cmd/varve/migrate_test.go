package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/migrate"
)

// The Kafka 4.4.0 fixtures: partition directories of topic "fixture"
// and, from a later run of the same script, a metadata log whose topic
// "fixture" has another id (internal/kafkafixtures/README.md).
const (
	kafkaPartitions  = "../../internal/kafkafixtures/testdata/kafka-4.4.0"
	kafkaMetadata    = "../../internal/kafkafixtures/testdata/kafka-4.4.0-metadata"
	kafkaMetadataTID = "UNAFgIxKTTGsDJ2XRP7eJg"
)

func runMigrate(args ...string) (string, error) {
	var out bytes.Buffer
	cmd := newMigrateFromKafkaCmd()
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.Execute()
	return out.String(), err
}

// copyFixture copies Kafka's log dir into a temporary directory.
func copyFixture(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "kafka")
	if err := os.CopyFS(dir, os.DirFS(kafkaPartitions)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Kafka: partition.metadata names the topic id the KRaft metadata
// names; partitions of another id are no partitions of that topic, and
// the migration refuses them, writing nothing.
func TestMigrateFromKafkaRefusesOtherTopicIDs(t *testing.T) {
	dir := copyFixture(t)
	out, err := runMigrate(dir, "--metadata-dir", kafkaMetadata)
	if !errors.Is(err, migrate.ErrRefused) {
		t.Fatalf("err %v, want a refusal\n%s", err, out)
	}
	for _, want := range []string{"REFUSED", "fixture-0: partition.metadata names topic id", "fixture-1: partition.metadata names topic id"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, cluster.MetadataFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused migration wrote %s: %v", cluster.MetadataFile, err)
	}
}

// Kafka: topic configs (segment.ms=1000 here) and producer-id blocks are
// in the metadata log. --dry-run prints the plan and writes nothing;
// without it the node's metadata file is written.
func TestMigrateFromKafkaDryRunThenWrite(t *testing.T) {
	dir := copyFixture(t)
	for _, p := range []string{"fixture-0", "fixture-1"} {
		if err := os.WriteFile(filepath.Join(dir, p, "partition.metadata"), []byte("version: 0\ntopic_id: "+kafkaMetadataTID), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := runMigrate(dir, "--metadata-dir", kafkaMetadata, "--dry-run")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"fixture  id " + kafkaMetadataTID + "  partitions 2", "segment.ms=1000", "producer ids       from 2000", "dry run: nothing written"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	meta := filepath.Join(dir, cluster.MetadataFile)
	if _, err := os.Stat(meta); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a dry run wrote %s: %v", meta, err)
	}
	if out, err = runMigrate(dir, "--metadata-dir", kafkaMetadata); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	data, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"segment.ms": "1000"`, `"producer_id_block_end": 2000`, `"node_id": 1`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("%s lacks %s:\n%s", cluster.MetadataFile, want, data)
		}
	}
}
