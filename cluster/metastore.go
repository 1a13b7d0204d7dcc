package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/varve/varve/internal/kuuid"
	"github.com/varve/varve/metadata"
	"github.com/varve/varve/segment"
)

// MetadataFile holds a single node's cluster metadata (topics, their ids,
// partition counts and configuration overrides, the producer-id block,
// topics being deleted, SCRAM credentials, ACLs) until the Raft controller takes that role. It is
// JSON, replaced atomically (write temp, fsync, rename, fsync dir) on
// every change, and is the one source of the node's metadata images.
const MetadataFile = "varve-metadata.json"

// producerIDBlock is how many producer ids are reserved per metadata
// write, as Kafka's controller hands out blocks of 1000.
const producerIDBlock = 1000

// metaFile is the file's format. Files written before "deleting",
// "features" or "metadata_epoch" existed load unchanged (a file without
// features is at the bootstrap features, metadata.BootstrapRecords).
type metaFile struct {
	Version        int                   `json:"version"`
	ClusterID      string                `json:"cluster_id"`
	NodeID         int32                 `json:"node_id"`
	ProducerIDNext int64                 `json:"producer_id_block_end"`
	Topics         map[string]*topicMeta `json:"topics"`
	Deleting       []topicMeta           `json:"deleting,omitempty"`
	Scram          []scramMeta           `json:"scram_credentials,omitempty"`
	ACLs           []aclMeta             `json:"acls,omitempty"`
	Quotas         []quotaMeta           `json:"client_quotas,omitempty"`
	// BrokerConfigs are the dynamic broker settings by resource (a
	// node id, or "" for the cluster default).
	BrokerConfigs map[string]map[string]string `json:"broker_configs,omitempty"`
	// Features are the finalized feature levels (KIP-584), and
	// Epoch counts the file's writes: ApiVersions reports it as the
	// finalized features' epoch, where a cluster reports its metadata
	// offset.
	Features map[string]int16 `json:"features,omitempty"`
	Epoch    int64            `json:"metadata_epoch,omitempty"`
}

type topicMeta struct {
	Name       string            `json:"name"`
	ID         metadata.TopicID  `json:"id"`
	Partitions int32             `json:"partitions"`
	Configs    map[string]string `json:"configs,omitempty"`
}

// metaSource is the single node's source of metadata images: the
// metadata file. A change is applied to a copy of the current image,
// persisted, then published: never memory first and disk after. Readers
// take the current image from the publisher, without a lock.
type metaSource struct {
	path   string
	nodeID int32
	fs     segment.FS // nil: the operating system's
	pub    *metadata.Publisher
	writes atomic.Int64 // persists of the file since open
	epoch  atomic.Int64 // the file's metadata_epoch, moved by every persist

	// admin serialises admin operations (create, delete, grow topics)
	// across their metadata change and their partition directories.
	// Produce and Fetch never take it.
	admin sync.Mutex

	// mu serialises changes: copy, persist, publish. Produce and Fetch
	// never take it, so its file I/O stalls no data path.
	mu       sync.Mutex
	deleting []topicMeta // topics removed whose directories may remain; REQUIRES mu

	// crashPoint, when a test sets it, is called between the steps of an
	// admin operation; an error stops the operation there, as the death
	// of the process would.
	crashPoint func(step string) error

	pidMu   sync.Mutex
	nextPID int64 // next producer id to hand out; REQUIRES pidMu
}

// openMetaSource loads the metadata file of dir (or starts an empty one)
// into the first image, with self registered as a broker.
func openMetaSource(dir, clusterID string, self metadata.RegisterBrokerRecord, fs segment.FS) (*metaSource, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &metaSource{path: filepath.Join(dir, MetadataFile), nodeID: self.BrokerID, fs: fs}
	f, err := readMetaFile(s.path, clusterID)
	if err != nil {
		return nil, err
	}
	img, err := metadata.Apply(metadata.New(f.ClusterID), s.replay(f, self)...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	s.pub = metadata.NewPublisher(img)
	s.deleting = f.Deleting
	// Ids handed out before a restart may be in use: start a new block.
	s.nextPID = f.ProducerIDNext
	s.epoch.Store(f.Epoch)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s, s.persistLocked(img, s.deleting)
}

func readMetaFile(path, clusterID string) (metaFile, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if clusterID == "" {
			clusterID = randomClusterID()
		}
		return metaFile{ClusterID: clusterID}, nil
	}
	if err != nil {
		return metaFile{}, err
	}
	var f metaFile
	if err := json.Unmarshal(data, &f); err != nil {
		return metaFile{}, fmt.Errorf("%s: %w", path, err)
	}
	if clusterID != "" && clusterID != f.ClusterID {
		return metaFile{}, fmt.Errorf("cluster.id %s does not match the data directory's %s", clusterID, f.ClusterID)
	}
	return f, nil
}

// WriteMetadataFile writes the metadata file of a single node with id
// nodeID into dir, holding img's topics (ids, partition counts,
// configs), producer-id block, features, SCRAM credentials and ACLs:
// what a node started on dir serves. It is for tools preparing a
// directory (a migration from Kafka); a running node writes its own.
func WriteMetadataFile(dir string, nodeID int32, img *metadata.Image) error {
	s := &metaSource{path: filepath.Join(dir, MetadataFile), nodeID: nodeID}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.persistLocked(img, nil)
}

// replay turns the file into the records of its image: this node's
// registration, then each topic with its partitions (one replica, on
// this node, leader, epochs 0) and overrides, then the producer-id
// block, then the SCRAM credentials.
func (s *metaSource) replay(f metaFile, self metadata.RegisterBrokerRecord) []metadata.Record {
	recs := featureRecords(f.Features)
	recs = append(recs, self)
	for _, name := range slices.Sorted(maps.Keys(f.Topics)) {
		t := f.Topics[name]
		recs = append(recs, s.topicRecords(t.Name, t.ID, 0, t.Partitions, t.Configs)...)
	}
	if f.ProducerIDNext > 0 {
		recs = append(recs, metadata.ProducerIdsRecord{BrokerID: s.nodeID, NextProducerID: f.ProducerIDNext})
	}
	recs = append(recs, scramRecords(f.Scram)...)
	recs = append(recs, quotaRecords(f.Quotas)...)
	recs = append(recs, brokerConfigRecords(f.BrokerConfigs)...)
	return append(recs, aclRecords(f.ACLs)...)
}

// featureRecords are the records of the file's features,
// metadata.version first, or the bootstrap features when it has none.
func featureRecords(features map[string]int16) []metadata.Record {
	if len(features) == 0 {
		return metadata.BootstrapRecords()
	}
	recs := []metadata.Record{metadata.FeatureLevelRecord{Name: metadata.MetadataVersionFeature, FeatureLevel: features[metadata.MetadataVersionFeature]}}
	for _, name := range slices.Sorted(maps.Keys(features)) {
		if name != metadata.MetadataVersionFeature {
			recs = append(recs, metadata.FeatureLevelRecord{Name: name, FeatureLevel: features[name]})
		}
	}
	return recs
}

// topicRecords describes a new topic (from > 0: new partitions of an
// existing one) placed on this node.
func (s *metaSource) topicRecords(name string, id metadata.TopicID, from, to int32, configs map[string]string) []metadata.Record {
	var recs []metadata.Record
	if from == 0 {
		recs = append(recs, metadata.TopicRecord{Name: name, TopicID: id})
	}
	for p := from; p < to; p++ {
		self := []int32{s.nodeID}
		recs = append(recs, metadata.PartitionRecord{TopicID: id, PartitionID: p, Replicas: self, ISR: self, Leader: s.nodeID})
	}
	if from == 0 {
		for _, k := range slices.Sorted(maps.Keys(configs)) {
			v := configs[k]
			recs = append(recs, metadata.ConfigRecord{ResourceType: metadata.ConfigResourceTopic, ResourceName: name, Name: k, Value: &v})
		}
	}
	return recs
}

// image is the current image.
func (s *metaSource) image() *metadata.Image { return s.pub.Image() }

// change runs plan on the current image, applies the records it
// returns, persists the result and publishes it. If plan, the apply or
// the write fails, the current image stays as it was. plan runs under
// s.mu: it sees no change made concurrently.
func (s *metaSource) change(plan func(cur *metadata.Image) ([]metadata.Record, error)) (*metadata.Image, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changeLocked(plan, s.deleting)
}

// REQUIRES s.mu.
func (s *metaSource) changeLocked(plan func(cur *metadata.Image) ([]metadata.Record, error), deleting []topicMeta) (*metadata.Image, error) {
	cur := s.pub.Image()
	recs, err := plan(cur)
	if err != nil {
		return cur, err
	}
	next := cur
	if len(recs) > 0 {
		if next, err = metadata.Apply(cur, recs...); err != nil {
			return cur, err
		}
	}
	if err := s.persistLocked(next, deleting); err != nil {
		return cur, err
	}
	s.deleting = deleting
	s.pub.Publish(next)
	return next, nil
}

// removeTopics removes topics from the image and queues their
// directories for deletion, in one write: after a crash the queue says
// which directories to finish deleting, so a half-deleted topic never
// comes back.
func (s *metaSource) removeTopics(topics []*metadata.Topic) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	deleting := slices.Clone(s.deleting)
	var recs []metadata.Record
	for _, t := range topics {
		deleting = append(deleting, topicMeta{Name: t.Name, ID: t.ID, Partitions: int32(len(t.Partitions))})
		recs = append(recs, metadata.RemoveTopicRecord{TopicID: t.ID})
	}
	_, err := s.changeLocked(func(*metadata.Image) ([]metadata.Record, error) { return recs, nil }, deleting)
	return err
}

// deleted drops topics whose directories are gone from the queue.
func (s *metaSource) deleted(ids []metadata.TopicID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	deleting := slices.DeleteFunc(slices.Clone(s.deleting), func(t topicMeta) bool { return slices.Contains(ids, t.ID) })
	_, err := s.changeLocked(func(*metadata.Image) ([]metadata.Record, error) { return nil, nil }, deleting)
	return err
}

// pendingDeletions lists the topics whose directories may remain.
func (s *metaSource) pendingDeletions() []topicMeta {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.deleting)
}

// register publishes a re-registration of this node (its endpoint once
// a listener picked its port). Registrations are not in the file: the
// node registers itself at every start.
func (s *metaSource) register(r metadata.RegisterBrokerRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next, err := metadata.Apply(s.pub.Image(), r)
	if err != nil {
		return err
	}
	s.pub.Publish(next)
	return nil
}

// persistLocked writes img and the deletion queue to the file.
// REQUIRES s.mu.
func (s *metaSource) persistLocked(img *metadata.Image, deleting []topicMeta) error {
	f := metaFile{Version: 1, ClusterID: img.ClusterID(), NodeID: s.nodeID,
		ProducerIDNext: img.ProducerIDs().NextProducerID, Topics: map[string]*topicMeta{}, Deleting: deleting,
		Scram: scramMetas(img), Features: map[string]int16{}, Epoch: s.epoch.Load() + 1}
	for _, name := range img.Features() {
		f.Features[name] = img.FeatureLevel(name)
	}
	for t := range img.Topics() {
		f.Topics[t.Name] = &topicMeta{Name: t.Name, ID: t.ID, Partitions: int32(len(t.Partitions)), Configs: t.Configs}
	}
	f.ACLs = aclMetas(img)
	f.Quotas = quotaMetas(img)
	f.BrokerConfigs = brokerConfigMetas(img)
	data, err := json.MarshalIndent(&f, "", "  ")
	if err != nil {
		return err
	}
	s.writes.Add(1)
	if err := segment.WriteFileAtomic(s.fs, s.path, data); err != nil {
		return fmt.Errorf("write %s: %w", s.path, err)
	}
	s.epoch.Store(f.Epoch)
	return nil
}

// nextProducerID hands out a producer id, reserving a new block on disk
// first when the current one is used up, so that no id is ever reused
// after a restart.
func (s *metaSource) nextProducerID() (int64, error) {
	s.pidMu.Lock()
	defer s.pidMu.Unlock()
	if s.nextPID >= s.image().ProducerIDs().NextProducerID {
		_, err := s.change(func(*metadata.Image) ([]metadata.Record, error) {
			return []metadata.Record{metadata.ProducerIdsRecord{BrokerID: s.nodeID, NextProducerID: s.nextPID + producerIDBlock}}, nil
		})
		if err != nil {
			return 0, err
		}
	}
	id := s.nextPID
	s.nextPID++
	return id, nil
}

// raiseProducerIDFloor makes every producer id handed out from now on
// at least floor, persisting the block's end first when floor is past
// it, so that a restart starts there too. It reports whether it moved
// the next id.
func (s *metaSource) raiseProducerIDFloor(floor int64) (bool, error) {
	s.pidMu.Lock()
	defer s.pidMu.Unlock()
	if floor <= s.nextPID {
		return false, nil
	}
	if floor > s.image().ProducerIDs().NextProducerID {
		_, err := s.change(func(*metadata.Image) ([]metadata.Record, error) {
			return []metadata.Record{metadata.ProducerIdsRecord{BrokerID: s.nodeID, NextProducerID: floor}}, nil
		})
		if err != nil {
			return false, err
		}
	}
	s.nextPID = floor
	return true, nil
}

// step is a point between two steps of an admin operation.
func (s *metaSource) step(name string) error {
	if s.crashPoint == nil {
		return nil
	}
	return s.crashPoint(name)
}

// randomClusterID makes a cluster id the way Kafka's storage tool does:
// Uuid.randomUuid in its string form.
func randomClusterID() string { return kuuid.String(kuuid.Random()) }

func newTopicID() metadata.TopicID { return kuuid.Random() }

// registration is this node's broker registration: its advertised
// listeners, the first one at the host and port clients are told.
func (b *Broker) registration() metadata.RegisterBrokerRecord {
	r := metadata.RegisterBrokerRecord{BrokerID: b.nodeID}
	ls := b.cfg.AdvertisedListeners
	if len(ls) == 0 {
		ls = b.cfg.Listeners
	}
	// A broker registers its broker listeners only, as Kafka's do.
	for i, l := range brokerListeners(b.cfg, ls) {
		e := metadata.Endpoint{Listener: l.Name, Host: l.Host, Port: int32(l.Port)}
		e.SecurityProtocol, _ = b.cfg.SecurityProtocol(l.Name)
		if i == 0 {
			e.Host, e.Port = b.host, b.port
		}
		r.Endpoints = append(r.Endpoints, e)
	}
	return r
}
