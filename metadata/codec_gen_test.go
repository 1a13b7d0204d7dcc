package metadata

import (
	"maps"
	"slices"

	"pgregory.net/rapid"
)

// Generators of records holding values Kafka can write (AppendRecord's
// precondition). Arrays Kafka's schemas make non-nullable come out nil
// when empty, as DecodeRecord returns them, so that a round trip
// compares equal without blurring nil and empty where they differ
// (PartitionChangeRecord's nullable arrays).

func genString(t *rapid.T, label string) string {
	return rapid.StringMatching(`[a-z0-9._-]{0,12}`).Draw(t, label)
}

func genTopicID(t *rapid.T, label string) (id TopicID) {
	copy(id[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, label))
	return id
}

// genBrokers returns a list of broker ids, nil when empty.
func genBrokers(t *rapid.T, label string) []int32 {
	s := rapid.SliceOfN(rapid.Int32Range(-1, 1<<20), 0, 5).Draw(t, label)
	if len(s) == 0 {
		return nil
	}
	return s
}

// genNullableBrokers returns nil (no change), an empty list (cleared)
// or a list.
func genNullableBrokers(t *rapid.T, label string) []int32 {
	switch rapid.IntRange(0, 2).Draw(t, label+"-kind") {
	case 0:
		return nil
	case 1:
		return []int32{}
	}
	return rapid.SliceOfN(rapid.Int32(), 1, 5).Draw(t, label)
}

func genEndpoints(t *rapid.T) []Endpoint {
	n := rapid.IntRange(0, 3).Draw(t, "endpoints")
	if n == 0 {
		return nil
	}
	protos := []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}
	eps := make([]Endpoint, n)
	for i := range eps {
		eps[i] = Endpoint{Listener: genString(t, "listener"), Host: genString(t, "host"),
			Port: rapid.Int32Range(0, 65535).Draw(t, "port"), SecurityProtocol: rapid.SampledFrom(protos).Draw(t, "protocol")}
	}
	return eps
}

func genRegisterBroker(t *rapid.T) Record {
	var inc [16]byte
	copy(inc[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, "incarnation"))
	return RegisterBrokerRecord{BrokerID: rapid.Int32().Draw(t, "broker"), IncarnationID: inc,
		BrokerEpoch: rapid.Int64().Draw(t, "epoch"), Endpoints: genEndpoints(t), Rack: genString(t, "rack"),
		Fenced: rapid.Bool().Draw(t, "fenced"), InControlledShutdown: rapid.Bool().Draw(t, "shutdown")}
}

func genBrokerChange(t *rapid.T) Record {
	return BrokerRegistrationChangeRecord{BrokerID: rapid.Int32().Draw(t, "broker"), BrokerEpoch: rapid.Int64().Draw(t, "epoch"),
		Fenced:               FenceChange(rapid.Int8Range(-1, 1).Draw(t, "fenced")),
		InControlledShutdown: rapid.Bool().Draw(t, "shutdown")}
}

func genPartition(t *rapid.T) Record {
	return PartitionRecord{PartitionID: rapid.Int32().Draw(t, "partition"), TopicID: genTopicID(t, "topic"),
		Replicas: genBrokers(t, "replicas"), ISR: genBrokers(t, "isr"),
		RemovingReplicas: genBrokers(t, "removing"), AddingReplicas: genBrokers(t, "adding"),
		Leader: rapid.Int32().Draw(t, "leader"), LeaderRecovery: LeaderRecoveryState(rapid.Int8Range(0, 1).Draw(t, "recovery")),
		LeaderEpoch: rapid.Int32().Draw(t, "leader-epoch"), PartitionEpoch: rapid.Int32().Draw(t, "partition-epoch")}
}

func genPartitionChange(t *rapid.T) Record {
	r := PartitionChangeRecord{PartitionID: rapid.Int32().Draw(t, "partition"), TopicID: genTopicID(t, "topic"),
		Leader: rapid.SampledFrom([]int32{NoLeaderChange, NoLeader, 0, 1, 7, 1 << 30}).Draw(t, "leader"),
		ISR:    genNullableBrokers(t, "isr"), Replicas: genNullableBrokers(t, "replicas"),
		RemovingReplicas: genNullableBrokers(t, "removing"), AddingReplicas: genNullableBrokers(t, "adding")}
	if s := rapid.IntRange(-1, 1).Draw(t, "recovery"); s >= 0 {
		state := LeaderRecoveryState(s)
		r.LeaderRecovery = &state
	}
	return r
}

func genConfig(t *rapid.T) Record {
	r := ConfigRecord{ResourceType: rapid.SampledFrom([]ConfigResourceType{ConfigResourceTopic, ConfigResourceBroker}).Draw(t, "type"),
		ResourceName: genString(t, "resource"), Name: genString(t, "name")}
	if rapid.Bool().Draw(t, "set") {
		v := genString(t, "value")
		r.Value = &v
	}
	return r
}

// recordGens draws a record of each type, by Kafka's name of it.
var recordGens = map[string]func(*rapid.T) Record{
	"RegisterBrokerRecord":           genRegisterBroker,
	"BrokerRegistrationChangeRecord": genBrokerChange,
	"PartitionRecord":                genPartition,
	"PartitionChangeRecord":          genPartitionChange,
	"ConfigRecord":                   genConfig,
	"FenceBrokerRecord": func(t *rapid.T) Record {
		return FenceBrokerRecord{BrokerID: rapid.Int32().Draw(t, "broker"), BrokerEpoch: rapid.Int64().Draw(t, "epoch")}
	},
	"UnfenceBrokerRecord": func(t *rapid.T) Record {
		return UnfenceBrokerRecord{BrokerID: rapid.Int32().Draw(t, "broker"), BrokerEpoch: rapid.Int64().Draw(t, "epoch")}
	},
	"TopicRecord": func(t *rapid.T) Record {
		return TopicRecord{Name: genString(t, "name"), TopicID: genTopicID(t, "topic")}
	},
	"RemoveTopicRecord": func(t *rapid.T) Record { return RemoveTopicRecord{TopicID: genTopicID(t, "topic")} },
	"ProducerIdsRecord": func(t *rapid.T) Record {
		return ProducerIdsRecord{BrokerID: rapid.Int32().Draw(t, "broker"), BrokerEpoch: rapid.Int64().Draw(t, "epoch"),
			NextProducerID: rapid.Int64().Draw(t, "next")}
	},
	"FeatureLevelRecord": func(t *rapid.T) Record {
		return FeatureLevelRecord{Name: genString(t, "name"), FeatureLevel: rapid.Int16().Draw(t, "level")}
	},
}

// genRecord draws a record of any type.
func genRecord(t *rapid.T) Record {
	names := slices.Sorted(maps.Keys(recordGens))
	return recordGens[rapid.SampledFrom(names).Draw(t, "type")](t)
}
