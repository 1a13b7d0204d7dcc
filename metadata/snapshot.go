package metadata

import (
	"maps"
	"slices"
)

// metadataVersionFeature is the feature a snapshot begins with: Kafka
// reads a log's or a snapshot's first records to learn the
// metadata.version its records are written at.
const metadataVersionFeature = MetadataVersionFeature

// SnapshotRecords returns records that rebuild img from
// New(img.ClusterID()): Apply(New(img.ClusterID()), recs...) is img in
// everything but Version, which counts the records replayed. The order
// is Kafka's (MetadataImage.write): finalized features, metadata.version
// first; brokers by id, each registration carrying its fenced and
// controlled-shutdown state (Kafka: BrokerRegistration.toRecord);
// topics by name, each followed by its partitions in order, with their
// leader and partition epochs as they are (a PartitionRecord sets them,
// it does not bump them); topic configuration overrides by topic and
// name; dynamic broker settings by resource ("" first) and name;
// client quota values by entity and key; the producer-id block; SCRAM credentials by user and
// mechanism; the ACLs by id.
//
// The records share slices with img, which is immutable: they must not
// be modified.
func SnapshotRecords(img *Image) []Record {
	var recs []Record
	recs = appendFeatureRecords(recs, img)
	for _, b := range img.Brokers() {
		recs = append(recs, RegisterBrokerRecord{BrokerID: b.ID, IncarnationID: b.IncarnationID, BrokerEpoch: b.Epoch,
			Endpoints: b.Endpoints, Rack: b.Rack, Fenced: b.Fenced, InControlledShutdown: b.InControlledShutdown})
	}
	for t := range img.Topics() {
		recs = appendTopicRecords(recs, t)
	}
	for t := range img.Topics() {
		for _, name := range slices.Sorted(maps.Keys(t.Configs)) {
			v := t.Configs[name]
			recs = append(recs, ConfigRecord{ResourceType: ConfigResourceTopic, ResourceName: t.Name, Name: name, Value: &v})
		}
	}
	recs = appendBrokerConfigRecords(recs, img)
	recs = appendQuotaRecords(recs, img)
	if p := img.ProducerIDs(); p != (ProducerIDs{}) {
		// The image keeps no broker epoch: -1 is Kafka's default, and
		// what Kafka's ProducerIdsImage writes.
		recs = append(recs, ProducerIdsRecord{BrokerID: p.BrokerID, BrokerEpoch: -1, NextProducerID: p.NextProducerID})
	}
	recs = appendScramRecords(recs, img)
	return appendACLRecords(recs, img)
}

func appendFeatureRecords(recs []Record, img *Image) []Record {
	names := img.Features()
	if i := slices.Index(names, metadataVersionFeature); i > 0 {
		names = append(append([]string{metadataVersionFeature}, names[:i]...), names[i+1:]...)
	}
	for _, name := range names {
		recs = append(recs, FeatureLevelRecord{Name: name, FeatureLevel: img.FeatureLevel(name)})
	}
	return recs
}

func appendTopicRecords(recs []Record, t *Topic) []Record {
	recs = append(recs, TopicRecord{Name: t.Name, TopicID: t.ID})
	for i := range t.Partitions {
		p := &t.Partitions[i]
		recs = append(recs, PartitionRecord{PartitionID: int32(i), TopicID: t.ID,
			Replicas: p.Replicas, ISR: p.ISR, RemovingReplicas: p.RemovingReplicas, AddingReplicas: p.AddingReplicas,
			Leader: p.Leader, LeaderRecovery: p.LeaderRecovery, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch})
	}
	return recs
}
