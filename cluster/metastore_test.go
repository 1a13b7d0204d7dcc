package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/config"
	"github.com/varve/varve/segment"
)

// openTestBroker opens a broker on dir without listening.
func openTestBroker(t *testing.T, dir string, props map[string]string) *Broker {
	t.Helper()
	p := map[string]string{"log.dirs": dir, "listeners": "PLAINTEXT://127.0.0.1:9092", "varve.metrics.listener": ""}
	for k, v := range props {
		p[k] = v
	}
	cfg, err := config.Parse(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func closeTestBroker(t *testing.T, b *Broker) {
	t.Helper()
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// failingFS fails every fsync, as a full or failing disk does.
type failingFS struct{ segment.OSFS }

type failingFile struct{ segment.File }

func (f failingFS) OpenFile(name string, flag int, perm os.FileMode) (segment.File, error) {
	file, err := f.OSFS.OpenFile(name, flag, perm)
	return failingFile{file}, err
}

func (failingFile) Sync() error { return errors.New("injected fsync failure") }

// A metadata change is applied to a copy, persisted, then published:
// when the write fails, the image (what every handler answers from) is
// unchanged and nothing was created. Before, the store changed memory
// first and a failed save left the topic in memory but not on disk.
func TestMetadataWriteFailureLeavesImageUnchanged(t *testing.T) {
	dir := t.TempDir()
	b := openTestBroker(t, dir, nil)
	defer closeTestBroker(t, b)
	if _, err := b.createTopic(topicSpec{name: "kept", partitions: 1, rf: 1, configs: map[string]string{"retention.ms": "1000"}}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, MetadataFile))
	img := b.meta.image()
	b.meta.fs = failingFS{}

	_, err := b.createTopic(topicSpec{name: "lost", partitions: 2, rf: 1})
	if !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("create with a failing disk: %v, want KAFKA_STORAGE_ERROR", err)
	}
	err = b.alterTopicConfigs("kept", []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "retention.ms", Value: ptr("5")}}, false)
	if err == nil {
		t.Fatal("config change with a failing disk succeeded")
	}
	if errs := b.deleteTopics([]string{"kept"}, quotaCheck{}); !errors.Is(errs[0], kerr.KafkaStorageError) {
		t.Fatalf("delete with a failing disk: %v", errs[0])
	}
	if _, err := b.meta.nextProducerID(); err == nil {
		t.Fatal("a producer id block was reserved without being written")
	}
	if b.meta.image() != img {
		t.Fatal("a failed write published a new image")
	}
	if _, ok := b.parts.Partition(partitionOf("lost", 0)); ok {
		t.Fatal("a partition was created for a topic the metadata does not hold")
	}
	if got := b.topicConfig("kept").Overrides()["retention.ms"]; got != "1000" {
		t.Fatalf("retention.ms = %q after a failed change, want 1000", got)
	}
	after, _ := os.ReadFile(filepath.Join(dir, MetadataFile))
	if string(before) != string(after) {
		t.Fatal("the metadata file changed")
	}
}

func ptr[T any](v T) *T { return &v }

// A data directory written before the metadata image existed loads: its
// topics, partition counts, configuration overrides and producer-id
// block are in the first image, with this node as every partition's
// leader and replica at epoch 0, as before.
func TestOldMetadataFileLoads(t *testing.T) {
	dir := t.TempDir()
	old := `{
  "version": 1,
  "cluster_id": "old-cluster",
  "node_id": 1,
  "producer_id_block_end": 3000,
  "topics": {
    "orders": {"name": "orders", "id": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16], "partitions": 3, "configs": {"cleanup.policy": "compact"}}
  }
}`
	if err := os.WriteFile(filepath.Join(dir, MetadataFile), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	b := openTestBroker(t, dir, nil)
	defer closeTestBroker(t, b)
	img := b.meta.image()
	tp, ok := img.Topic("orders")
	if !ok || img.ClusterID() != "old-cluster" || len(tp.Partitions) != 3 || tp.Configs["cleanup.policy"] != "compact" || tp.ID[15] != 16 {
		t.Fatalf("loaded %+v (cluster %s)", tp, img.ClusterID())
	}
	for i, p := range tp.Partitions {
		if p.Leader != 1 || p.LeaderEpoch != 0 || p.PartitionEpoch != 0 || fmt.Sprint(p.Replicas, p.ISR) != "[1] [1]" {
			t.Errorf("partition %d: %+v", i, p)
		}
		if _, ok := b.parts.Partition(partitionOf("orders", int32(i))); !ok {
			t.Errorf("partition %d not created", i)
		}
	}
	if br, ok := img.Broker(1); !ok || br.Endpoints[0].Host != "127.0.0.1" || br.Endpoints[0].Port != 9092 {
		t.Fatalf("this node's registration: %+v", br)
	}
	if id, err := b.meta.nextProducerID(); err != nil || id != 3000 {
		t.Fatalf("first producer id %d (%v), want 3000: ids of the last run may be in use", id, err)
	}
}

// errCrash stops an admin operation as the death of the process would.
var errCrash = errors.New("simulated crash")

// crashAt makes the n-th crash point of kind step stop the operation.
func crashAt(b *Broker, step string, n int) {
	seen := 0
	b.meta.crashPoint = func(s string) error {
		if s != step {
			return nil
		}
		if seen++; seen == n {
			return errCrash
		}
		return nil
	}
}

func topicPartitionsOnDisk(t *testing.T, dir, topic string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), topic+"-") && !strings.HasSuffix(e.Name(), "-delete") {
			n++
		}
	}
	return n
}

// Kafka: a deleted topic stays deleted. DeleteTopics stopped after 3 of
// its 8 partitions: at the next start the topic is gone, with none of
// its partitions recreated and none left on disk. Before, the
// remaining partitions were adopted back as a topic without configs.
func TestDeleteTopicsKilledMidwayNeverComesBack(t *testing.T) {
	dir := t.TempDir()
	b := openTestBroker(t, dir, nil)
	if _, err := b.createTopic(topicSpec{name: "doomed", partitions: 8, rf: 1, configs: map[string]string{"retention.ms": "1000"}}); err != nil {
		t.Fatal(err)
	}
	crashAt(b, "delete partition", 4)
	if errs := b.deleteTopics([]string{"doomed"}, quotaCheck{}); !errors.Is(errs[0], errCrash) {
		t.Fatalf("delete: %v, want the simulated crash", errs[0])
	}
	if n := topicPartitionsOnDisk(t, dir, "doomed"); n != 5 {
		t.Fatalf("%d partitions left on disk after the crash, want 5", n)
	}
	closeTestBroker(t, b)

	b = openTestBroker(t, dir, nil)
	defer closeTestBroker(t, b)
	if _, ok := b.meta.image().Topic("doomed"); ok {
		t.Fatal("the deleted topic came back")
	}
	for _, p := range b.parts.Partitions() {
		if p.TP.Topic == "doomed" {
			t.Fatalf("partition %s came back", p.TP)
		}
	}
	if n := topicPartitionsOnDisk(t, dir, "doomed"); n != 0 {
		t.Fatalf("%d partition directories remain", n)
	}
	if q := b.meta.pendingDeletions(); len(q) != 0 {
		t.Fatalf("deletion queue after start: %v", q)
	}
	// The name can be used again, from scratch.
	if tp, err := b.createTopic(topicSpec{name: "doomed", partitions: 2, rf: 1}); err != nil || len(tp.Partitions) != 2 || tp.Configs != nil {
		t.Fatalf("recreate: %+v, %v", tp, err)
	}
}

// CreateTopics and CreatePartitions stopped midway come back whole: the
// metadata was written first, and the start creates the partitions
// that were missing, with the topic's configuration.
func TestCreateKilledMidwayComesBackWhole(t *testing.T) {
	dir := t.TempDir()
	b := openTestBroker(t, dir, nil)
	crashAt(b, "create partition", 3)
	_, err := b.createTopic(topicSpec{name: "born", partitions: 6, rf: 1, configs: map[string]string{"cleanup.policy": "compact"}})
	if !errors.Is(err, kerr.KafkaStorageError) && !errors.Is(err, errCrash) {
		t.Fatalf("create: %v, want the simulated crash", err)
	}
	closeTestBroker(t, b)

	b = openTestBroker(t, dir, nil)
	tp, ok := b.meta.image().Topic("born")
	if !ok || len(tp.Partitions) != 6 || tp.Configs["cleanup.policy"] != "compact" {
		t.Fatalf("after restart: %+v", tp)
	}
	if n := topicPartitionsOnDisk(t, dir, "born"); n != 6 {
		t.Fatalf("%d partitions on disk, want 6", n)
	}
	crashAt(b, "create partition", 2)
	if err := b.addPartitions("born", 10, nil, false, quotaCheck{}); err == nil {
		t.Fatal("the simulated crash did not stop CreatePartitions")
	}
	closeTestBroker(t, b)

	b = openTestBroker(t, dir, nil)
	defer closeTestBroker(t, b)
	if tp, _ := b.meta.image().Topic("born"); len(tp.Partitions) != 10 {
		t.Fatalf("%d partitions after restart, want 10", len(tp.Partitions))
	}
	if n := topicPartitionsOnDisk(t, dir, "born"); n != 10 {
		t.Fatalf("%d partitions on disk, want 10", n)
	}
}

// A partition directory missing at start (lost while CreateTopics filled
// the disk) is recreated with a log line, and the start does not wait on
// itself: it used to hold the metadata lock while the partition's
// creation waited for it.
func TestMissingPartitionDirectoryAtStart(t *testing.T) {
	dir := t.TempDir()
	b := openTestBroker(t, dir, nil)
	if _, err := b.createTopic(topicSpec{name: "holey", partitions: 3, rf: 1}); err != nil {
		t.Fatal(err)
	}
	closeTestBroker(t, b)
	if err := os.RemoveAll(filepath.Join(dir, "holey-1")); err != nil {
		t.Fatal(err)
	}
	b = openTestBroker(t, dir, nil)
	defer closeTestBroker(t, b)
	if _, ok := b.parts.Partition(partitionOf("holey", 1)); !ok {
		t.Fatal("missing partition not recreated")
	}
}
