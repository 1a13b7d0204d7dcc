package replica

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/segment"
)

// Errors of the log manager, under the names the broker has used.
var (
	// ErrUnknownPartition: the node holds no replica of the partition.
	ErrUnknownPartition = logdir.ErrUnknownPartition
	// ErrPartitionExists: the partition was already created.
	ErrPartitionExists = logdir.ErrPartitionExists
)

type partitionMap = map[segment.TopicPartition]*Partition

// Manager is Kafka's ReplicaManager: the node's Partitions over the log
// manager that holds their logs.
type Manager struct {
	logs *logdir.Manager
	fs   segment.FS // the log dirs' file system (nil: the OS's)
	rc   ManagerConfig
	bg   background // replication's goroutines, once started
	// leaderQuota and followerQuota are the node's replication quotas
	// (KIP-73, quota.go).
	leaderQuota, followerQuota *ReplicationQuota

	// parts is the published map, replaced whole under mu (copy on
	// write): Produce and Fetch look partitions up without a lock.
	parts atomic.Pointer[partitionMap]

	mu struct {
		sync.Mutex
		creating map[segment.TopicPartition]chan struct{}
	}
}

// Open opens the log manager over cfg's log dirs and makes a Partition of
// every log it loaded. It supplies the log manager's high watermarks and
// follows its log directories going offline and back.
func Open(cfg logdir.Config) (*Manager, error) { return OpenReplicated(cfg, ManagerConfig{}) }

// OpenReplicated is Open for a node of a replicated cluster: its
// partitions replicate as rc says once they are told their roles.
func OpenReplicated(cfg logdir.Config, rc ManagerConfig) (*Manager, error) {
	m := &Manager{fs: cfg.FS, rc: rc.withDefaults()}
	m.leaderQuota, m.followerQuota = NewReplicationQuota(rc.Quota), NewReplicationQuota(rc.Quota)
	m.bg.init(m)
	m.mu.creating = map[segment.TopicPartition]chan struct{}{}
	empty := partitionMap{}
	m.parts.Store(&empty)
	cfg.HighWatermark = m.highWatermark
	cfg.OnOffline = m.logsOffline
	cfg.OnOnline = m.logsOnline
	cfg.OnMoving = m.logMoving
	cfg.OnMoved = m.logMoved
	ld, err := logdir.Open(cfg)
	if err != nil {
		return nil, err
	}
	m.logs = ld
	m.addLoaded(ld.Logs())
	ld.ResumeMoves() // they end by handing over logs the partitions now hold
	return m, nil
}

// publish applies change to a copy of the partition map and publishes
// it. REQUIRES m.mu.
func (m *Manager) publishLocked(change func(partitionMap)) {
	next := maps.Clone(*m.parts.Load())
	change(next)
	m.parts.Store(&next)
}

// highWatermark gives the log manager a partition's high watermark for
// replication-offset-checkpoint.
func (m *Manager) highWatermark(tp segment.TopicPartition) (int64, bool) {
	p, ok := (*m.parts.Load())[tp]
	if !ok {
		return 0, false
	}
	return p.HighWatermark(), true
}

// logsOffline takes the partitions of a failed log directory offline:
// they answer KAFKA_STORAGE_ERROR until their logs come back.
func (m *Manager) logsOffline(tps []segment.TopicPartition) {
	parts := *m.parts.Load()
	for _, tp := range tps {
		if p, ok := parts[tp]; ok {
			p.setLog(nil, 0)
		}
	}
}

// logsOnline gives partitions of a log directory back online their
// reopened logs. A partition deleted meanwhile stays deleted.
func (m *Manager) logsOnline(logs []logdir.PartitionLog) {
	parts := *m.parts.Load()
	for _, pl := range logs {
		if p, ok := parts[pl.TP]; ok {
			p.setLog(pl.Log, p.HighWatermark())
		}
	}
}

// logMoving takes a partition's log away while it is swapped for its
// copy in another log dir; its appends wait for logMoved.
func (m *Manager) logMoving(tp segment.TopicPartition) {
	if p, ok := (*m.parts.Load())[tp]; ok {
		p.beginSwap()
	}
}

// logMoved gives a partition the log a move to another log dir left
// (AlterReplicaLogDirs), with its leader-epoch-checkpoint there.
func (m *Manager) logMoved(pl logdir.PartitionLog) {
	p, ok := (*m.parts.Load())[pl.TP]
	if !ok {
		return
	}
	p.moveEpochStore(epochFile{fs: m.fs, path: filepath.Join(pl.Log.Dir(), LeaderEpochCheckpointFile)})
	p.setLog(pl.Log, p.HighWatermark())
}

// LogDirs is the log manager under the partitions: AlterReplicaLogDirs
// moves their logs between log dirs with it.
func (m *Manager) LogDirs() *logdir.Manager { return m.logs }

// addLoaded makes a Partition of every log loaded at start. A single
// replica's log is committed up to its end, so a log without a
// checkpointed high watermark gets its end.
func (m *Manager) addLoaded(logs []logdir.PartitionLog) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.publishLocked(func(pm partitionMap) {
		for _, pl := range logs {
			hw := max(pl.CheckpointedHW, pl.Log.EndOffset())
			p := NewPartition(pl.TP, pl.TopicID, pl.Log, hw)
			m.configure(p, pl.Log.Dir(), pl.CheckpointedHW)
			pm[pl.TP] = p
		}
	})
}

// Partition returns the node's replica of tp.
func (m *Manager) Partition(tp segment.TopicPartition) (*Partition, bool) {
	p, ok := (*m.parts.Load())[tp]
	return p, ok
}

// Partitions returns every partition the node holds, sorted.
func (m *Manager) Partitions() []*Partition {
	parts := *m.parts.Load()
	out := make([]*Partition, 0, len(parts))
	for _, p := range parts {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].TP.Topic != out[j].TP.Topic {
			return out[i].TP.Topic < out[j].TP.Topic
		}
		return out[i].TP.Partition < out[j].TP.Partition
	})
	return out
}

// Logs returns the online logs, for the cleaners (retention and
// compaction work on the log, below replication).
func (m *Manager) Logs() []*segment.Log {
	pls := m.logs.Logs()
	out := make([]*segment.Log, len(pls))
	for i, pl := range pls {
		out[i] = pl.Log
	}
	return out
}

// Dir is the directory of tp's log, "" when it has no online log.
func (m *Manager) Dir(tp segment.TopicPartition) string {
	if pl, ok := m.logs.Get(tp); ok {
		return pl.Log.Dir()
	}
	return ""
}

// OfflineDirs lists the log directories that are offline.
func (m *Manager) OfflineDirs() []string { return m.logs.OfflineDirs() }

// PreviousBrokerEpoch is the broker epoch the log dirs' clean-shutdown
// markers held at start, -1 if not all held the same one
// (logdir.Manager.PreviousBrokerEpoch).
func (m *Manager) PreviousBrokerEpoch() int64 { return m.logs.PreviousBrokerEpoch() }

// CreatePartition creates an empty partition (see logdir.Manager.Create).
// No lock is held during the file work; concurrent creators of one
// partition get one Partition, the others ErrPartitionExists once it is
// published.
func (m *Manager) CreatePartition(tp segment.TopicPartition, id TopicID) (*Partition, error) {
	for {
		wait, err := m.beginCreate(tp)
		if err != nil {
			return nil, err
		}
		if wait == nil {
			break
		}
		<-wait
	}
	pl, err := m.logs.Create(tp, id)
	m.mu.Lock()
	defer m.mu.Unlock()
	done := m.mu.creating[tp]
	delete(m.mu.creating, tp)
	close(done)
	if err != nil {
		return nil, err
	}
	p := NewPartition(tp, id, pl.Log, 0)
	m.configure(p, pl.Log.Dir(), 0)
	m.publishLocked(func(pm partitionMap) { pm[tp] = p })
	return p, nil
}

// beginCreate registers a creation of tp; a non-nil channel is one
// under way to wait for.
func (m *Manager) beginCreate(tp segment.TopicPartition) (chan struct{}, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := (*m.parts.Load())[tp]; ok {
		return nil, fmt.Errorf("%s: %w", tp, ErrPartitionExists)
	}
	if c, ok := m.mu.creating[tp]; ok {
		return c, nil
	}
	m.mu.creating[tp] = make(chan struct{})
	return nil, nil
}

// DeletePartition stops serving a partition and deletes its log (see
// logdir.Manager.Delete). Waiters wake and find it gone.
func (m *Manager) DeletePartition(tp segment.TopicPartition) error {
	m.mu.Lock()
	p, ok := (*m.parts.Load())[tp]
	if ok {
		m.publishLocked(func(pm partitionMap) { delete(pm, tp) })
	}
	m.mu.Unlock()
	if !ok {
		return fmt.Errorf("%s: %w", tp, ErrUnknownPartition)
	}
	m.bg.unfollow(tp)
	p.wake()
	err := m.logs.Delete(tp)
	if errors.Is(err, logdir.ErrUnknownPartition) {
		return nil // a partition whose log never came back
	}
	return err
}

// UpdateLogConfig applies a topic's new configuration to its logs.
func (m *Manager) UpdateLogConfig(topic string) error { return m.logs.UpdateLogConfig(topic) }

// Close shuts the logs down cleanly (see logdir.Manager.Close): the
// high watermarks are checkpointed from the partitions.
func (m *Manager) Close() error {
	m.bg.stop()
	return m.logs.Close()
}
