package metadata

import (
	"maps"
	"slices"
)

// The records below have the shape of Kafka's KRaft metadata records
// (metadata/src/main/resources/common/metadata/*.json in Kafka), with
// the fields a Varve node uses today. They are plain Go values: the
// single-node metadata file rebuilds them at start, and the Raft
// controller will serialise them into its log.

// TopicID is a topic's 16-byte UUID, as Kafka's Uuid.
type TopicID [16]byte

// Record is one change to the metadata. Apply replays a list of them.
type Record interface {
	isRecord()
}

// NoLeaderChange in PartitionChangeRecord.Leader keeps the leader (and
// the leader epoch) as they are. Kafka: PartitionChangeRecord's
// default of -2.
const NoLeaderChange int32 = -2

// NoLeader is a partition without a leader. Kafka: -1.
const NoLeader int32 = -1

// Endpoint is where a broker serves one listener. Kafka:
// RegisterBrokerRecord.BrokerEndpoint.
type Endpoint struct {
	Listener         string
	Host             string
	Port             int32
	SecurityProtocol string
}

// RegisterBrokerRecord registers (or re-registers) a broker. Kafka:
// RegisterBrokerRecord (api key 0); a re-registration replaces the
// previous one. A broker's registration is written with
// InControlledShutdown false; a snapshot of a broker in controlled
// shutdown writes it true (Kafka: BrokerRegistration.toRecord).
type RegisterBrokerRecord struct {
	BrokerID             int32
	IncarnationID        [16]byte // the broker process's random id; zero when unknown
	BrokerEpoch          int64
	Endpoints            []Endpoint
	Rack                 string // "" when unset
	Fenced               bool
	InControlledShutdown bool
}

// TopicRecord creates a topic. Kafka: TopicRecord (api key 2).
type TopicRecord struct {
	Name    string
	TopicID TopicID
}

// PartitionRecord creates a partition of an existing topic. Partition
// ids are dense: a topic's partitions are recorded 0, 1, 2, ... Kafka:
// PartitionRecord (api key 3).
type PartitionRecord struct {
	PartitionID      int32
	TopicID          TopicID
	Replicas         []int32
	ISR              []int32
	RemovingReplicas []int32 // replicas a reassignment removes; empty when none
	AddingReplicas   []int32 // replicas a reassignment adds; empty when none
	Leader           int32
	LeaderRecovery   LeaderRecoveryState
	LeaderEpoch      int32
	PartitionEpoch   int32
}

// LeaderRecoveryState says whether a leader chosen by an unclean
// election has finished recovering its log (KIP-704). Kafka:
// LeaderRecoveryState, 0 RECOVERED, 1 RECOVERING.
type LeaderRecoveryState int8

// Kafka's leader recovery states.
const (
	Recovered  LeaderRecoveryState = 0
	Recovering LeaderRecoveryState = 1
)

// PartitionChangeRecord changes a partition. Nil slices leave the field
// unchanged (an empty, non-nil slice clears it); Leader NoLeaderChange
// leaves the leader unchanged; a nil LeaderRecovery leaves the recovery
// state unchanged (Kafka's default of -1). Kafka: PartitionChangeRecord
// (api key 5).
type PartitionChangeRecord struct {
	PartitionID      int32
	TopicID          TopicID
	Leader           int32
	ISR              []int32
	Replicas         []int32
	RemovingReplicas []int32
	AddingReplicas   []int32
	LeaderRecovery   *LeaderRecoveryState
}

// RemoveTopicRecord removes a topic and all its partitions. Kafka:
// RemoveTopicRecord (api key 9).
type RemoveTopicRecord struct {
	TopicID TopicID
}

// ConfigResourceType is Kafka's ConfigResource.Type byte.
type ConfigResourceType int8

// The resource types a ConfigRecord names (Kafka's codes).
const (
	ConfigResourceTopic  ConfigResourceType = 2
	ConfigResourceBroker ConfigResourceType = 4
)

// ConfigRecord sets (Value non-nil) or deletes (Value nil) one
// configuration override. Kafka: ConfigRecord (api key 4).
type ConfigRecord struct {
	ResourceType ConfigResourceType
	ResourceName string
	Name         string
	Value        *string
}

// ProducerIdsRecord reserves producer ids below NextProducerID for
// BrokerID. Kafka: ProducerIdsRecord (api key 15).
type ProducerIdsRecord struct {
	BrokerID       int32
	BrokerEpoch    int64
	NextProducerID int64
}

// FenceChange is BrokerRegistrationChangeRecord.Fenced: Kafka's
// BrokerRegistrationFencingChange.
type FenceChange int8

// Kafka's fencing changes.
const (
	FenceUnchanged FenceChange = 0
	FenceBroker    FenceChange = 1
	UnfenceBroker  FenceChange = -1
)

// BrokerRegistrationChangeRecord fences, unfences or marks in controlled
// shutdown the registration whose epoch is BrokerEpoch. Kafka:
// BrokerRegistrationChangeRecord (api key 17); InControlledShutdown is
// Kafka's BrokerRegistrationInControlledShutdownChange (KIP-841: the
// controlled shutdown is persisted so a new controller knows of it).
type BrokerRegistrationChangeRecord struct {
	BrokerID             int32
	BrokerEpoch          int64
	Fenced               FenceChange
	InControlledShutdown bool // true marks the broker in controlled shutdown; false leaves it
}

// FenceBrokerRecord fences a broker. Kafka: FenceBrokerRecord (api key
// 7), which metadata versions before 3.3 write instead of a
// BrokerRegistrationChangeRecord.
type FenceBrokerRecord struct {
	BrokerID    int32
	BrokerEpoch int64
}

// UnfenceBrokerRecord unfences a broker. Kafka: UnfenceBrokerRecord (api
// key 8).
type UnfenceBrokerRecord struct {
	BrokerID    int32
	BrokerEpoch int64
}

// FeatureLevelRecord sets a feature's finalized level, metadata.version
// first among them; level 0 removes the feature. Kafka:
// FeatureLevelRecord (api key 12).
type FeatureLevelRecord struct {
	Name         string
	FeatureLevel int16
}

func (FeatureLevelRecord) isRecord()             {}
func (RegisterBrokerRecord) isRecord()           {}
func (BrokerRegistrationChangeRecord) isRecord() {}
func (FenceBrokerRecord) isRecord()              {}
func (UnfenceBrokerRecord) isRecord()            {}
func (TopicRecord) isRecord()                    {}
func (PartitionRecord) isRecord()                {}
func (PartitionChangeRecord) isRecord()          {}
func (RemoveTopicRecord) isRecord()              {}
func (ConfigRecord) isRecord()                   {}
func (ProducerIdsRecord) isRecord()              {}

// TopicConfigRecords are the ConfigRecords that take a topic's
// overrides from old to next: deletions (a nil value) then settings,
// each in name order. The active controller writes them, and a single
// node's metadata file records the same.
func TopicConfigRecords(topic string, old, next map[string]string) []Record {
	var recs []Record
	for _, k := range slices.Sorted(maps.Keys(old)) {
		if _, kept := next[k]; !kept {
			recs = append(recs, ConfigRecord{ResourceType: ConfigResourceTopic, ResourceName: topic, Name: k})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(next)) {
		if v, had := old[k]; !had || v != next[k] {
			v := next[k]
			recs = append(recs, ConfigRecord{ResourceType: ConfigResourceTopic, ResourceName: topic, Name: k, Value: &v})
		}
	}
	return recs
}
