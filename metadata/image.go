package metadata

import (
	"iter"
	"maps"
	"slices"
)

// Image is an immutable snapshot of the cluster's metadata: brokers,
// topics with their partitions and configuration overrides, and the
// producer-id block. Nothing in an Image, nor anything it returns, may
// be modified: images share topics with the images before and after
// them.
type Image struct {
	clusterID   string
	version     int64 // records applied since New, IsControl ones not counted
	brokers     map[int32]*Broker
	topics      map[string]*Topic
	byID        map[TopicID]*Topic
	sorted      []*Topic // by name
	producerIDs ProducerIDs
	features    map[string]int16 // finalized feature levels; never modified, replaced whole
	acls        *ACLs            // nil: none (image_acl.go)

	scram  map[ScramKey]ScramCredential       // SCRAM credentials (scram.go); copied on write
	quotas map[QuotaEntity]map[string]float64 // client quota values (quota.go); copied on write

	brokerConfigs map[string]map[string]string // dynamic broker settings by resource name (broker_config.go); copied on write
}

// Broker is a registered broker.
type Broker struct {
	ID            int32
	IncarnationID [16]byte
	Epoch         int64
	Endpoints     []Endpoint // the first is the one clients are told about
	Rack          string
	Fenced        bool
	// InControlledShutdown: the broker asked to shut down and the
	// controller is moving its leaderships away (KIP-841). A new
	// registration clears it.
	InControlledShutdown bool
}

// Topic is a topic and its partitions; Partitions[i] is partition i.
type Topic struct {
	Name       string
	ID         TopicID
	Partitions []Partition
	Configs    map[string]string // overrides of the broker defaults; nil when none
}

// Partition is one partition's replica placement and epochs.
type Partition struct {
	Replicas         []int32
	ISR              []int32
	RemovingReplicas []int32 // an ongoing reassignment's replicas to remove (KIP-455)
	AddingReplicas   []int32 // an ongoing reassignment's replicas to add
	Leader           int32
	LeaderRecovery   LeaderRecoveryState
	LeaderEpoch      int32
	PartitionEpoch   int32
}

// Reassigning reports whether a reassignment of the partition is under
// way.
func (p *Partition) Reassigning() bool {
	return len(p.AddingReplicas) > 0 || len(p.RemovingReplicas) > 0
}

// ProducerIDs is the producer-id block: every id below NextProducerID
// has been reserved by BrokerID.
type ProducerIDs struct {
	BrokerID       int32
	NextProducerID int64
}

// New returns the empty image of a cluster.
func New(clusterID string) *Image {
	return &Image{
		clusterID: clusterID,
		brokers:   map[int32]*Broker{},
		topics:    map[string]*Topic{},
		byID:      map[TopicID]*Topic{},
	}
}

// ClusterID is the cluster's id.
func (img *Image) ClusterID() string { return img.clusterID }

// Version counts the records replayed into the image since New: two
// images of one source with the same version are the same image.
func (img *Image) Version() int64 { return img.version }

// Broker returns the broker registered as id.
func (img *Image) Broker(id int32) (*Broker, bool) {
	b, ok := img.brokers[id]
	return b, ok
}

// Brokers returns every registered broker by id.
func (img *Image) Brokers() []*Broker {
	out := make([]*Broker, 0, len(img.brokers))
	for _, b := range img.brokers {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b *Broker) int { return int(a.ID) - int(b.ID) })
	return out
}

// Topic returns the topic named name.
func (img *Image) Topic(name string) (*Topic, bool) {
	t, ok := img.topics[name]
	return t, ok
}

// TopicByID returns the topic whose id is id.
func (img *Image) TopicByID(id TopicID) (*Topic, bool) {
	t, ok := img.byID[id]
	return t, ok
}

// Partition returns a topic's partition.
func (img *Image) Partition(topic string, partition int32) (*Partition, bool) {
	t, ok := img.topics[topic]
	if !ok || partition < 0 || int(partition) >= len(t.Partitions) {
		return nil, false
	}
	return &t.Partitions[partition], true
}

// Topics yields every topic in name order.
func (img *Image) Topics() iter.Seq[*Topic] {
	return slices.Values(img.sorted)
}

// NumTopics is the number of topics.
func (img *Image) NumTopics() int { return len(img.sorted) }

// FeatureLevel is a feature's finalized level (Kafka's
// metadata.version and others), 0 when the feature is not set.
func (img *Image) FeatureLevel(name string) int16 { return img.features[name] }

// Features returns the finalized features' names in order.
func (img *Image) Features() []string {
	return slices.Sorted(maps.Keys(img.features))
}

// ProducerIDs is the producer-id block.
func (img *Image) ProducerIDs() ProducerIDs { return img.producerIDs }
