package metadata

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fuzzSeeds is one record of each type, with its optional parts set.
func fuzzSeeds() []Record {
	id := TopicID{1, 2, 3}
	v, recovering := "delete", Recovering
	return []Record{
		RegisterBrokerRecord{BrokerID: 1, IncarnationID: [16]byte{9}, BrokerEpoch: 7, Rack: "r1", Fenced: true,
			Endpoints: []Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: 9092, SecurityProtocol: "PLAINTEXT"}}},
		BrokerRegistrationChangeRecord{BrokerID: 1, BrokerEpoch: 7, Fenced: UnfenceBroker, InControlledShutdown: true},
		FenceBrokerRecord{BrokerID: 1, BrokerEpoch: 7},
		UnfenceBrokerRecord{BrokerID: 1, BrokerEpoch: 7},
		TopicRecord{Name: "orders", TopicID: id},
		PartitionRecord{TopicID: id, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2}, AddingReplicas: []int32{3},
			Leader: 1, LeaderRecovery: Recovering, LeaderEpoch: 4, PartitionEpoch: 9},
		PartitionChangeRecord{TopicID: id, PartitionID: 2, Leader: NoLeader, ISR: []int32{}, Replicas: []int32{1},
			RemovingReplicas: []int32{2}, AddingReplicas: []int32{}, LeaderRecovery: &recovering},
		RemoveTopicRecord{TopicID: id},
		ConfigRecord{ResourceType: ConfigResourceTopic, ResourceName: "orders", Name: "cleanup.policy", Value: &v},
		ProducerIdsRecord{BrokerID: 1, BrokerEpoch: 7, NextProducerID: 5000},
		FeatureLevelRecord{Name: "metadata.version", FeatureLevel: 33},
	}
}

// Kafka: MetadataRecordSerde refuses what is no record with an error
// (MetadataParseException). DecodeRecord never panics, and what it
// accepts it writes back as a record that decodes the same.
func FuzzDecodeRecord(f *testing.F) {
	for _, r := range fuzzSeeds() {
		f.Add(AppendRecord(nil, r))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := DecodeRecord(b)
		if err != nil {
			return
		}
		again, err := DecodeRecord(AppendRecord(nil, rec))
		if err != nil {
			t.Fatalf("record decoded from %x does not decode once written: %v", b, err)
		}
		if d := cmp.Diff(rec, again); d != "" {
			t.Fatalf("record decoded from %x changed when written and read (-first +second):\n%s", b, d)
		}
	})
}

// DecodeEntry never panics nor allocates past its input, and what it
// accepts it writes back as an entry that decodes the same.
func FuzzDecodeEntry(f *testing.F) {
	seeds := fuzzSeeds()
	f.Add([]byte{})
	f.Add(AppendEntry(nil, nil))
	f.Add(AppendEntry(nil, seeds[:1]))
	f.Add(AppendEntry(nil, seeds))
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := DecodeEntry(b)
		if err != nil {
			return
		}
		again, err := DecodeEntry(AppendEntry(nil, recs))
		if err != nil {
			t.Fatalf("entry decoded from %x does not decode once written: %v", b, err)
		}
		if len(recs) == 0 && len(again) == 0 {
			return
		}
		if d := cmp.Diff(recs, again); d != "" {
			t.Fatalf("entry decoded from %x changed when written and read (-first +second):\n%s", b, d)
		}
	})
}
