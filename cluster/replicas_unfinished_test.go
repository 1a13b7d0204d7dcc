package cluster_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
	"github.com/varve/varve/metadata"
)

// startFollower starts node 3 alone on logDir, following an image in
// which it is a replica of t-0 that node 1 leads, with isr as the ISR.
func startFollower(t *testing.T, logDir string, isr []int32) {
	t.Helper()
	port := freePort(t, "127.0.0.1")
	cfg, err := config.Parse(map[string]string{"node.id": "3", "log.dirs": logDir,
		"listeners": fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", port), "varve.metrics.listener": ""})
	if err != nil {
		t.Fatal(err)
	}
	id := metadata.TopicID{0xc1, 4}
	var recs []metadata.Record
	for b := int32(1); b <= 3; b++ {
		recs = append(recs, metadata.RegisterBrokerRecord{BrokerID: b, BrokerEpoch: int64(b),
			Endpoints: []metadata.Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: int32(port + int(b)), SecurityProtocol: "PLAINTEXT"}}})
	}
	recs = append(recs, metadata.TopicRecord{Name: "t", TopicID: id},
		metadata.PartitionRecord{TopicID: id, PartitionID: 0, Replicas: []int32{1, 3}, ISR: isr, Leader: 1})
	img, err := metadata.Apply(metadata.New("unfinished-test"), recs...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cluster.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	b.UsePublisher(metadata.NewPublisher(img))
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Shutdown(context.Background()) })
}

// Kafka: Partition.checkOrSetTopicId. A partition directory whose
// creation a crash cut short has no partition.metadata, so no topic id:
// a follower out of the ISR with such a replica deletes it and creates
// it again with the metadata's topic id (partition.metadata written),
// rather than fetch with no topic id, be refused UNKNOWN_TOPIC_ID, and
// hold a reassignment that adds it for ever. In the ISR it is kept as
// it was.
func TestReplicaWithoutTopicIDIsCreatedAgain(t *testing.T) {
	for _, c := range []struct {
		name    string
		isr     []int32
		written bool
	}{{"out of the ISR", []int32{1}, true}, {"in the ISR", []int32{1, 3}, false}} {
		t.Run(c.name, func(t *testing.T) {
			logDir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(logDir, "t-0"), 0o755); err != nil {
				t.Fatal(err)
			}
			startFollower(t, logDir, c.isr)
			meta := filepath.Join(logDir, "t-0", "partition.metadata")
			deadline := time.Now().Add(5 * time.Second)
			for time.Now().Before(deadline) {
				if _, err := os.Stat(meta); err == nil {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			_, err := os.Stat(meta)
			if written := err == nil; written != c.written {
				t.Fatalf("partition.metadata written: %v, want %v", written, c.written)
			}
		})
	}
}
