package quorum

// A stand-in for package metadata's record codec (AppendEntry,
// DecodeEntry, SnapshotRecords) until it lands: JSON with a type name
// per record, which keeps nil and empty slices and pointers to zero
// apart, as the records' meaning needs.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/varve/varve/metadata"
)

func init() {
	appendEntry, decodeEntry, snapshotRecords = testAppendEntry, testDecodeEntry, testSnapshotRecords
}

type taggedRecord struct {
	T string
	R json.RawMessage
}

var testRecordTypes = map[string]func() metadata.Record{
	"RegisterBroker":           func() metadata.Record { return &metadata.RegisterBrokerRecord{} },
	"BrokerRegistrationChange": func() metadata.Record { return &metadata.BrokerRegistrationChangeRecord{} },
	"Topic":                    func() metadata.Record { return &metadata.TopicRecord{} },
	"Partition":                func() metadata.Record { return &metadata.PartitionRecord{} },
	"PartitionChange":          func() metadata.Record { return &metadata.PartitionChangeRecord{} },
	"RemoveTopic":              func() metadata.Record { return &metadata.RemoveTopicRecord{} },
	"Config":                   func() metadata.Record { return &metadata.ConfigRecord{} },
	"ProducerIds":              func() metadata.Record { return &metadata.ProducerIdsRecord{} },
	"FeatureLevel":             func() metadata.Record { return &metadata.FeatureLevelRecord{} },
}

func testTypeName(r metadata.Record) string {
	switch r.(type) {
	case metadata.RegisterBrokerRecord:
		return "RegisterBroker"
	case metadata.BrokerRegistrationChangeRecord:
		return "BrokerRegistrationChange"
	case metadata.TopicRecord:
		return "Topic"
	case metadata.PartitionRecord:
		return "Partition"
	case metadata.PartitionChangeRecord:
		return "PartitionChange"
	case metadata.RemoveTopicRecord:
		return "RemoveTopic"
	case metadata.ConfigRecord:
		return "Config"
	case metadata.ProducerIdsRecord:
		return "ProducerIds"
	case metadata.FeatureLevelRecord:
		return "FeatureLevel"
	}
	panic(fmt.Sprintf("test codec: record %T", r))
}

func testAppendEntry(dst []byte, recs []metadata.Record) []byte {
	var out []taggedRecord
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			panic(err)
		}
		out = append(out, taggedRecord{testTypeName(r), b})
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(err)
	}
	return append(dst, b...)
}

func testDecodeEntry(b []byte) ([]metadata.Record, error) {
	var in []taggedRecord
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, err
	}
	var out []metadata.Record
	for _, t := range in {
		mk := testRecordTypes[t.T]
		if mk == nil {
			return nil, fmt.Errorf("unknown record %q", t.T)
		}
		p := mk()
		if err := json.Unmarshal(t.R, p); err != nil {
			return nil, err
		}
		out = append(out, deref(p))
	}
	return out, nil
}

func deref(p metadata.Record) metadata.Record {
	switch r := p.(type) {
	case *metadata.RegisterBrokerRecord:
		return *r
	case *metadata.BrokerRegistrationChangeRecord:
		return *r
	case *metadata.TopicRecord:
		return *r
	case *metadata.PartitionRecord:
		return *r
	case *metadata.PartitionChangeRecord:
		return *r
	case *metadata.RemoveTopicRecord:
		return *r
	case *metadata.ConfigRecord:
		return *r
	case *metadata.ProducerIdsRecord:
		return *r
	case *metadata.FeatureLevelRecord:
		return *r
	}
	panic("unreachable")
}

func testSnapshotRecords(img *metadata.Image) []metadata.Record {
	var recs []metadata.Record
	for _, name := range img.Features() {
		recs = append(recs, metadata.FeatureLevelRecord{Name: name, FeatureLevel: img.FeatureLevel(name)})
	}
	for _, b := range img.Brokers() {
		recs = append(recs, metadata.RegisterBrokerRecord{BrokerID: b.ID, IncarnationID: b.IncarnationID,
			BrokerEpoch: b.Epoch, Endpoints: b.Endpoints, Rack: b.Rack, Fenced: b.Fenced})
		if b.InControlledShutdown {
			recs = append(recs, metadata.BrokerRegistrationChangeRecord{BrokerID: b.ID, BrokerEpoch: b.Epoch, InControlledShutdown: true})
		}
	}
	for t := range img.Topics() {
		recs = append(recs, metadata.TopicRecord{Name: t.Name, TopicID: t.ID})
		for i, p := range t.Partitions {
			recs = append(recs, metadata.PartitionRecord{PartitionID: int32(i), TopicID: t.ID, Replicas: p.Replicas,
				ISR: p.ISR, RemovingReplicas: p.RemovingReplicas, AddingReplicas: p.AddingReplicas, Leader: p.Leader,
				LeaderRecovery: p.LeaderRecovery, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch})
		}
		for _, k := range slices.Sorted(maps.Keys(t.Configs)) {
			v := t.Configs[k]
			recs = append(recs, metadata.ConfigRecord{ResourceType: metadata.ConfigResourceTopic, ResourceName: t.Name, Name: k, Value: &v})
		}
	}
	if pid := img.ProducerIDs(); pid.NextProducerID > 0 {
		recs = append(recs, metadata.ProducerIdsRecord{BrokerID: pid.BrokerID, NextProducerID: pid.NextProducerID})
	}
	return recs
}
