package cluster

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/replica"
)

// MetadataFile holds a single node's cluster metadata (topics, their ids,
// partition counts and configuration overrides, the producer-id block)
// until the Raft controller takes that role. It is JSON, replaced
// atomically (write temp, fsync, rename, fsync dir) on every change.
const MetadataFile = "varve-metadata.json"

// producerIDBlock is how many producer ids are reserved per metadata
// write, as Kafka's controller hands out blocks of 1000.
const producerIDBlock = 1000

type topicMeta struct {
	Name       string            `json:"name"`
	ID         replica.TopicID   `json:"id"`
	Partitions int32             `json:"partitions"`
	Configs    map[string]string `json:"configs,omitempty"`
}

type metaFile struct {
	Version        int                   `json:"version"`
	ClusterID      string                `json:"cluster_id"`
	NodeID         int32                 `json:"node_id"`
	ProducerIDNext int64                 `json:"producer_id_block_end"`
	Topics         map[string]*topicMeta `json:"topics"`
}

// metaStore is the topic catalogue. Safe for concurrent use.
type metaStore struct {
	path string

	version atomic.Uint64 // bumped after every change, for caches of what it holds

	mu     sync.RWMutex
	f      metaFile
	byID   map[replica.TopicID]*topicMeta
	nextID int64 // next producer id to hand out; < f.ProducerIDNext
}

func openMetaStore(dir, clusterID string, nodeID int32) (*metaStore, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &metaStore{path: filepath.Join(dir, MetadataFile), byID: map[replica.TopicID]*topicMeta{}}
	data, err := os.ReadFile(s.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		s.f = metaFile{Version: 1, ClusterID: clusterID, NodeID: nodeID, Topics: map[string]*topicMeta{}}
		if s.f.ClusterID == "" {
			s.f.ClusterID = randomClusterID()
		}
	case err != nil:
		return nil, err
	default:
		if err := json.Unmarshal(data, &s.f); err != nil {
			return nil, fmt.Errorf("%s: %w", s.path, err)
		}
		if clusterID != "" && clusterID != s.f.ClusterID {
			return nil, fmt.Errorf("cluster.id %s does not match the data directory's %s", clusterID, s.f.ClusterID)
		}
		if s.f.Topics == nil {
			s.f.Topics = map[string]*topicMeta{}
		}
	}
	for _, t := range s.f.Topics {
		s.byID[t.ID] = t
	}
	// Ids handed out before a restart may be in use: start a new block.
	s.nextID = s.f.ProducerIDNext
	s.f.ProducerIDNext = s.nextID
	return s, s.save()
}

// randomClusterID makes a cluster id the way Kafka's storage tool does:
// a random UUID in URL-safe base64.
func randomClusterID() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func newTopicID() replica.TopicID {
	var id replica.TopicID
	for id == (replica.TopicID{}) {
		rand.Read(id[:])
	}
	return id
}

// save writes the file. REQUIRES s.mu held for writing (or exclusive
// access at open).
func (s *metaStore) save() error {
	data, err := json.MarshalIndent(&s.f, "", "  ")
	if err != nil {
		return err
	}
	return logdir.WriteFileAtomic(nil, s.path, data)
}

func (s *metaStore) clusterID() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.f.ClusterID
}

func (s *metaStore) topic(name string) (topicMeta, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.f.Topics[name]
	if !ok {
		return topicMeta{}, false
	}
	return t.copy(), true
}

func (s *metaStore) topicByID(id replica.TopicID) (topicMeta, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.byID[id]
	if !ok {
		return topicMeta{}, false
	}
	return t.copy(), true
}

func (t *topicMeta) copy() topicMeta {
	c := *t
	c.Configs = make(map[string]string, len(t.Configs))
	for k, v := range t.Configs {
		c.Configs[k] = v
	}
	return c
}

// topics returns every topic, sorted by name.
func (s *metaStore) topics() []topicMeta {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]topicMeta, 0, len(s.f.Topics))
	for _, t := range s.f.Topics {
		out = append(out, t.copy())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// update runs fn on the catalogue and saves it if fn succeeds.
func (s *metaStore) update(fn func(f *metaFile) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := fn(&s.f); err != nil {
		return err
	}
	defer s.version.Add(1)
	s.byID = map[replica.TopicID]*topicMeta{}
	for _, t := range s.f.Topics {
		s.byID[t.ID] = t
	}
	return s.save()
}

// nextProducerID hands out a producer id, reserving a new block on disk
// first when the current one is used up, so that no id is ever reused
// after a restart.
func (s *metaStore) nextProducerID() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nextID >= s.f.ProducerIDNext {
		s.f.ProducerIDNext = s.nextID + producerIDBlock
		if err := s.save(); err != nil {
			s.f.ProducerIDNext = s.nextID
			return 0, err
		}
	}
	id := s.nextID
	s.nextID++
	return id, nil
}
