package cluster_test

import (
	"log/slog"
	"testing"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
	"github.com/varve/varve/metadata"
)

// deltaBroker is a broker, not started, whose replicas the test applies
// images to, with brokers 1-3 registered in img.
func deltaBroker(t *testing.T) (*cluster.Broker, *metadata.Image) {
	t.Helper()
	cfg, err := config.Parse(map[string]string{"node.id": "1", "log.dirs": t.TempDir(), "listeners": "PLAINTEXT://127.0.0.1:0",
		"varve.metrics.listener": "", "log.index.size.max.bytes": "4096"})
	if err != nil {
		t.Fatal(err)
	}
	var recs []metadata.Record
	for id := int32(1); id <= 3; id++ {
		recs = append(recs, metadata.RegisterBrokerRecord{BrokerID: id, BrokerEpoch: int64(id),
			Endpoints: []metadata.Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: 9090 + id, SecurityProtocol: "PLAINTEXT"}}})
	}
	img := apply(t, metadata.New("delta"), recs...)
	b, err := cluster.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Kill)
	b.UsePublisher(metadata.NewPublisher(img))
	return b, img
}

func apply(t *testing.T, img *metadata.Image, recs ...metadata.Record) *metadata.Image {
	t.Helper()
	next, err := metadata.Apply(img, recs...)
	if err != nil {
		t.Fatal(err)
	}
	return next
}

func topicRecords(name string, id metadata.TopicID, partitions int32) []metadata.Record {
	recs := []metadata.Record{metadata.TopicRecord{Name: name, TopicID: id}}
	for p := range partitions {
		recs = append(recs, metadata.PartitionRecord{TopicID: id, PartitionID: p, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, Leader: 1})
	}
	return recs
}

// TestApplyImageDelta: the replica manager applies what changed between
// two images, not the whole image: a change of one topic looks at that
// topic's partitions only, a change of no topic at none; the changed
// partition's new leader epoch reaches its replica. Kafka:
// ReplicaManager.applyDelta walks the TopicsDelta's changed partitions.
func TestApplyImageDelta(t *testing.T) {
	b, img := deltaBroker(t)
	a, c := metadata.TopicID{0xa}, metadata.TopicID{0xc}
	img = apply(t, img, append(topicRecords("a", a, 4), topicRecords("c", c, 2)...)...)
	b.ApplyImage(img)
	if got := b.PartitionsVisited(); got != 6 {
		t.Fatalf("first image: %d partitions looked at, want all 6", got)
	}
	img = apply(t, img, metadata.PartitionChangeRecord{TopicID: c, PartitionID: 1, Leader: 1})
	b.ApplyImage(img)
	if got := b.PartitionsVisited(); got != 2 {
		t.Errorf("a change of topic c: %d partitions looked at, want c's 2", got)
	}
	if _, st := b.PartitionReplica("c", 1).State(); st.LeaderEpoch != 1 {
		t.Errorf("c-1 has leader epoch %d after the change, want 1", st.LeaderEpoch)
	}
	img = apply(t, img, metadata.FenceBrokerRecord{BrokerID: 3, BrokerEpoch: 3})
	b.ApplyImage(img)
	if got := b.PartitionsVisited(); got != 0 {
		t.Errorf("a broker change alone: %d partitions looked at, want none", got)
	}
}

// TestApplyImageRetriesTopic: a topic deleted and created again under
// the same name in one image cannot be applied while the old topic's
// replica is still there; it is applied with the next image, although
// that image does not change it. Kafka: a topic id names a topic, and a
// re-created topic's replicas replace the old one's.
func TestApplyImageRetriesTopic(t *testing.T) {
	b, img := deltaBroker(t)
	old, renewed := metadata.TopicID{0x01}, metadata.TopicID{0x02}
	img = apply(t, img, topicRecords("x", old, 1)...)
	b.ApplyImage(img)
	img = apply(t, img, append([]metadata.Record{metadata.RemoveTopicRecord{TopicID: old}}, topicRecords("x", renewed, 1)...)...)
	b.ApplyImage(img)
	img = apply(t, img, topicRecords("unrelated", metadata.TopicID{0x03}, 1)...)
	b.ApplyImage(img)
	p := b.PartitionReplica("x", 0)
	if p == nil || p.TopicID != [16]byte(renewed) {
		t.Fatalf("x-0 after the next image: %+v, want the replica of topic id %x", p, renewed)
	}
}
