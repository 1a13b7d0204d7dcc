package logdir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMetaProperties: a log dir is formatted with Kafka's
// meta.properties (version 1: cluster.id, node.id, directory.id) and a
// node of another cluster or id refuses it. Kafka: KIP-631 (storage
// formatting), MetaProperties, KIP-858 (directory.id).
func TestMetaProperties(t *testing.T) {
	dir := t.TempDir()
	mp, err := FormatOrCheck(nil, dir, 3, "MkU3OEVBNTcwNTJENDM2Qk")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, MetaPropertiesFile))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []string{"cluster.id=MkU3OEVBNTcwNTJENDM2Qk\n", "node.id=3\n", "version=1\n", "directory.id=" + mp.DirectoryID.String() + "\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("meta.properties lacks %q:\n%s", want, text)
		}
	}
	again, err := FormatOrCheck(nil, dir, 3, "MkU3OEVBNTcwNTJENDM2Qk")
	if err != nil || again != mp {
		t.Fatalf("second start: %+v, %v; want %+v", again, err, mp)
	}
	if _, err := FormatOrCheck(nil, dir, 4, "MkU3OEVBNTcwNTJENDM2Qk"); !errors.Is(err, ErrMetaMismatch) {
		t.Errorf("another node.id: %v, want ErrMetaMismatch", err)
	}
	if _, err := FormatOrCheck(nil, dir, 3, "other"); !errors.Is(err, ErrMetaMismatch) {
		t.Errorf("another cluster.id: %v, want ErrMetaMismatch", err)
	}
}

// TestParseMetaPropertiesKafka reads the file as Kafka writes it.
func TestParseMetaPropertiesKafka(t *testing.T) {
	mp, err := ParseMetaProperties([]byte("#\n#Tue Dec 01 12:00:00 UTC 2026\nnode.id=1\ndirectory.id=J8Ps5gK4Qc6mXv2bqz0Rbg\nversion=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qk\n"))
	if err != nil || mp.NodeID != 1 || mp.ClusterID != "MkU3OEVBNTcwNTJENDM2Qk" || mp.DirectoryID.String() != "J8Ps5gK4Qc6mXv2bqz0Rbg" {
		t.Fatalf("got %+v, %v", mp, err)
	}
	for _, bad := range []string{"version=0\nbroker.id=1\n", "version=1\ncluster.id=x\n", "version=1\nnode.id=1\n", "version=1\nnode.id=1\ncluster.id=x\ndirectory.id=!!\n"} {
		if _, err := ParseMetaProperties([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// Kafka: MetaPropertiesEnsemble writes meta.properties with
// PropertiesUtils.writePropertiesFile (Java's Properties.store, an empty
// comment, the date). For the node, directory and cluster of the file a
// Kafka 4.4.0 broker wrote, at the date it wrote in it, Varve writes the
// same bytes.
func TestMetaPropertiesBytesKafkaWrote(t *testing.T) {
	kafka, err := os.ReadFile("../internal/kafkafixtures/testdata/kafka-4.4.0/meta.properties")
	if err != nil {
		t.Fatal(err)
	}
	mp, err := ParseMetaProperties(kafka)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(kafka), "\n")
	when, err := time.Parse("Mon Jan 02 15:04:05 MST 2006", strings.TrimPrefix(lines[1], "#"))
	if err != nil {
		t.Fatal(err)
	}
	if got := mp.encode(when); string(got) != string(kafka) {
		t.Errorf("Varve writes\n%s\nKafka wrote\n%s", got, kafka)
	}
}
