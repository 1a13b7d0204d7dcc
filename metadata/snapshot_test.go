package metadata

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"
)

// genImage builds an image by applying random records one at a time,
// each drawn to mostly apply to the image so far (an existing broker's
// epoch, an existing topic's next partition); a record that does not
// apply is dropped, as the controller would never have written it.
func genImage(t *rapid.T) *Image {
	img := New("snapshot-cluster")
	steps := rapid.IntRange(0, 100).Draw(t, "steps")
	for range steps {
		next, err := Apply(img, genStep(t, img))
		if err == nil {
			img = next
		}
	}
	return img
}

// genStep draws one record against img.
func genStep(t *rapid.T, img *Image) Record {
	topic := func() *Topic {
		name := rapid.SampledFrom([]string{"a", "b", "c", "d"}).Draw(t, "topic-name")
		if tp, ok := img.Topic(name); ok {
			return tp
		}
		return &Topic{Name: name, ID: TopicID{15: byte(rapid.IntRange(1, 6).Draw(t, "topic-id"))}}
	}
	brokerEpoch := func() (int32, int64) {
		id := rapid.Int32Range(0, 4).Draw(t, "broker")
		if b, ok := img.Broker(id); ok {
			return id, b.Epoch
		}
		return id, 1
	}
	switch rapid.IntRange(0, 13).Draw(t, "kind") {
	case 0:
		r := genRegisterBroker(t).(RegisterBrokerRecord)
		r.BrokerID = rapid.Int32Range(0, 4).Draw(t, "broker")
		return r
	case 1:
		r := genBrokerChange(t).(BrokerRegistrationChangeRecord)
		r.BrokerID, r.BrokerEpoch = brokerEpoch()
		return r
	case 2:
		id, epoch := brokerEpoch()
		return FenceBrokerRecord{BrokerID: id, BrokerEpoch: epoch}
	case 3:
		id, epoch := brokerEpoch()
		return UnfenceBrokerRecord{BrokerID: id, BrokerEpoch: epoch}
	case 4:
		tp := topic()
		return TopicRecord{Name: tp.Name, TopicID: tp.ID}
	case 5, 6:
		tp := topic()
		r := genPartition(t).(PartitionRecord)
		r.TopicID, r.PartitionID = tp.ID, int32(len(tp.Partitions))
		return r
	case 7:
		tp := topic()
		r := genPartitionChange(t).(PartitionChangeRecord)
		r.TopicID, r.PartitionID = tp.ID, rapid.Int32Range(0, int32(max(len(tp.Partitions)-1, 0))).Draw(t, "partition")
		return r
	case 8, 9:
		tp := topic()
		if rapid.IntRange(0, 7).Draw(t, "remove") == 0 {
			return RemoveTopicRecord{TopicID: tp.ID}
		}
		r := genConfig(t).(ConfigRecord)
		r.ResourceType, r.ResourceName = ConfigResourceTopic, tp.Name
		r.Name = rapid.SampledFrom([]string{"retention.ms", "segment.bytes", "cleanup.policy"}).Draw(t, "config")
		return r
	case 12:
		return genClientQuota(t)
	case 13:
		r := genConfig(t).(ConfigRecord)
		r.ResourceType, r.ResourceName = ConfigResourceBroker, rapid.SampledFrom([]string{"", "1", "2"}).Draw(t, "broker-resource")
		r.Name = rapid.SampledFrom([]string{"log.retention.ms", "message.max.bytes"}).Draw(t, "config")
		return r
	case 10:
		return ProducerIdsRecord{BrokerID: rapid.Int32Range(0, 4).Draw(t, "broker"), BrokerEpoch: rapid.Int64().Draw(t, "epoch"),
			NextProducerID: img.ProducerIDs().NextProducerID + rapid.Int64Range(0, 2000).Draw(t, "ids")}
	}
	return FeatureLevelRecord{Name: rapid.SampledFrom([]string{"metadata.version", "kraft.version", "group.version"}).Draw(t, "feature"),
		FeatureLevel: rapid.Int16Range(0, 33).Draw(t, "level")}
}

// sameImage compares images in everything but Version; nil and empty
// are one ("no configs", "no ISR").
var sameImage = cmp.Options{cmp.AllowUnexported(Image{}), cmpopts.IgnoreFields(Image{}, "version"), cmpopts.EquateEmpty()}

// Kafka: a snapshot is the image written as records
// (MetadataImage.write), and replaying it into an empty image gives the
// image back, epochs included: a PartitionRecord's leader and partition
// epochs are taken as they are.
func TestSnapshotRebuildsImage(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		img := genImage(t)
		recs := SnapshotRecords(img)
		got, err := Apply(New(img.ClusterID()), recs...)
		if err != nil {
			t.Fatalf("Apply(snapshot): %v", err)
		}
		if d := cmp.Diff(img, got, sameImage); d != "" {
			t.Fatalf("image rebuilt from its snapshot (-want +got):\n%s", d)
		}
		// As a node would have it: through the records' bytes.
		decoded, err := DecodeEntry(AppendEntry(nil, recs))
		if err != nil {
			t.Fatalf("DecodeEntry(snapshot): %v", err)
		}
		got, err = Apply(New(img.ClusterID()), decoded...)
		if err != nil {
			t.Fatalf("Apply(decoded snapshot): %v", err)
		}
		if d := cmp.Diff(img, got, sameImage); d != "" {
			t.Fatalf("image rebuilt from its encoded snapshot (-want +got):\n%s", d)
		}
	})
}

// The snapshot begins with metadata.version (Kafka reads it first to
// know the version of what follows) and puts each topic's configs after
// the topic.
func TestSnapshotOrder(t *testing.T) {
	level := func(name string, l int16) Record { return FeatureLevelRecord{Name: name, FeatureLevel: l} }
	id := TopicID{15: 1}
	v := "1000"
	img, err := Apply(New("c"), level("group.version", 1), level("metadata.version", 33),
		RegisterBrokerRecord{BrokerID: 2, BrokerEpoch: 5, Fenced: true},
		BrokerRegistrationChangeRecord{BrokerID: 2, BrokerEpoch: 5, InControlledShutdown: true},
		TopicRecord{Name: "t", TopicID: id},
		PartitionRecord{TopicID: id, Replicas: []int32{2}, ISR: []int32{2}, Leader: 2},
		PartitionChangeRecord{TopicID: id, Leader: 2},
		ConfigRecord{ResourceType: ConfigResourceTopic, ResourceName: "t", Name: "retention.ms", Value: &v},
		ProducerIdsRecord{BrokerID: 2, BrokerEpoch: 5, NextProducerID: 1000})
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{
		level("metadata.version", 33), level("group.version", 1),
		RegisterBrokerRecord{BrokerID: 2, BrokerEpoch: 5, Fenced: true, InControlledShutdown: true},
		TopicRecord{Name: "t", TopicID: id},
		PartitionRecord{TopicID: id, Replicas: []int32{2}, ISR: []int32{2}, Leader: 2, LeaderEpoch: 1, PartitionEpoch: 1},
		ConfigRecord{ResourceType: ConfigResourceTopic, ResourceName: "t", Name: "retention.ms", Value: &v},
		ProducerIdsRecord{BrokerID: 2, BrokerEpoch: -1, NextProducerID: 1000},
	}
	if d := cmp.Diff(want, SnapshotRecords(img)); d != "" {
		t.Fatalf("SnapshotRecords (-want +got):\n%s", d)
	}
	if recs := SnapshotRecords(New("c")); len(recs) != 0 {
		t.Fatalf("SnapshotRecords(empty image) = %v", recs)
	}
}
