package replica

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/varve/varve/segment"
)

// Kafka's defaults for the manager's settings.
const (
	DefaultCheckpointInterval   = 60 * time.Second // log.flush.offset.checkpoint.interval.ms, log.flush.start.offset.checkpoint.interval.ms
	DefaultHWCheckpointInterval = 5 * time.Second  // replica.high.watermark.checkpoint.interval.ms
)

// ErrUnknownPartition: the node holds no replica of the partition.
var ErrUnknownPartition = errors.New("unknown topic or partition")

// ErrPartitionExists: the partition was already created.
var ErrPartitionExists = errors.New("partition already exists")

// Config is what the manager needs from the broker's configuration.
type Config struct {
	LogDirs                    []string      // log.dirs
	RecoveryThreadsPerDataDir  int           // num.recovery.threads.per.data.dir, default 1
	RecoveryCheckpointInterval time.Duration // log.flush.offset.checkpoint.interval.ms
	StartOffsetCheckpoint      time.Duration // log.flush.start.offset.checkpoint.interval.ms
	HWCheckpointInterval       time.Duration // replica.high.watermark.checkpoint.interval.ms
	Logger                     *slog.Logger
	// LogConfig gives a topic's log configuration.
	LogConfig func(topic string) segment.Config
}

// Manager owns the partitions of one node.
type Manager struct {
	cfg Config

	mu    sync.RWMutex
	parts map[segment.TopicPartition]*Partition
	dirOf map[segment.TopicPartition]string

	stop chan struct{}
	done sync.WaitGroup
}

// dirState is what a log directory's checkpoints said at start.
type dirState struct {
	clean                   bool
	recovery, start, hwMark map[segment.TopicPartition]int64
}

// Open loads every partition found in the log directories, recovering
// them in parallel (num.recovery.threads.per.data.dir per directory).
func Open(cfg Config) (*Manager, error) {
	if len(cfg.LogDirs) == 0 {
		return nil, errors.New("replica: no log.dirs")
	}
	cfg.RecoveryThreadsPerDataDir = max(cfg.RecoveryThreadsPerDataDir, 1)
	if cfg.RecoveryCheckpointInterval <= 0 {
		cfg.RecoveryCheckpointInterval = DefaultCheckpointInterval
	}
	if cfg.StartOffsetCheckpoint <= 0 {
		cfg.StartOffsetCheckpoint = DefaultCheckpointInterval
	}
	if cfg.HWCheckpointInterval <= 0 {
		cfg.HWCheckpointInterval = DefaultHWCheckpointInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	m := &Manager{cfg: cfg, parts: map[segment.TopicPartition]*Partition{},
		dirOf: map[segment.TopicPartition]string{}, stop: make(chan struct{})}
	for _, dir := range cfg.LogDirs {
		if err := m.loadDir(dir); err != nil {
			m.closeLogs()
			return nil, err
		}
	}
	m.done.Add(1)
	go m.checkpointLoop()
	return m, nil
}

// loadDir reads a log directory's marker and checkpoints, then opens its
// partitions.
func (m *Manager) loadDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("log dir %s: %w", dir, err)
	}
	st, err := readDirState(dir)
	if err != nil {
		return err
	}
	names, err := partitionDirs(dir, m.cfg.Logger)
	if err != nil {
		return err
	}
	start := time.Now()
	work := make(chan string)
	var wg sync.WaitGroup
	var firstErr error
	var errMu sync.Mutex
	for i := 0; i < m.cfg.RecoveryThreadsPerDataDir; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range work {
				if err := m.loadPartition(dir, name, st); err != nil {
					errMu.Lock()
					firstErr = errors.Join(firstErr, err)
					errMu.Unlock()
				}
			}
		}()
	}
	for _, n := range names {
		work <- n
	}
	close(work)
	wg.Wait()
	m.cfg.Logger.Info("log dir loaded", "dir", dir, "partitions", len(names), "clean_shutdown", st.clean, "took", time.Since(start))
	return firstErr
}

func readDirState(dir string) (dirState, error) {
	st := dirState{}
	marker := filepath.Join(dir, segment.CleanShutdownFile)
	if _, err := os.Stat(marker); err == nil {
		st.clean = true
		// Deleted at once: a crash while loading must count as unclean.
		if err := os.Remove(marker); err != nil {
			return st, fmt.Errorf("remove %s: %w", marker, err)
		}
		if err := (segment.OSFS{}).SyncDir(dir); err != nil {
			return st, fmt.Errorf("fsync %s: %w", dir, err)
		}
	}
	var err error
	read := func(name string) map[segment.TopicPartition]int64 {
		c, e := segment.ReadCheckpoint(nil, filepath.Join(dir, name))
		if e != nil {
			err = errors.Join(err, e)
			st.clean = false // a torn checkpoint costs a longer recovery, never data
			return map[segment.TopicPartition]int64{}
		}
		return c
	}
	st.recovery = read(segment.RecoveryPointCheckpointFile)
	st.start = read(segment.LogStartOffsetCheckpointFile)
	st.hwMark = read(segment.ReplicationCheckpointFile)
	if err != nil {
		slog.Warn("ignoring unreadable checkpoint", "dir", dir, "err", err)
	}
	return st, nil
}

// partitionDirs lists the partition directories of a log dir, removing
// those left by a topic deletion.
func partitionDirs(dir string, logger *slog.Logger) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list log dir %s: %w", dir, err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		if strings.HasSuffix(name, "-delete") {
			if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
				logger.Warn("removing deleted partition failed", "dir", name, "err", err)
			}
			continue
		}
		if tp := segment.ParseTopicPartition(name); tp.String() == name {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (m *Manager) loadPartition(dir, name string, st dirState) error {
	tp := segment.ParseTopicPartition(name)
	pdir := filepath.Join(dir, name)
	id, err := readPartitionMetadata(pdir)
	if err != nil {
		m.cfg.Logger.Warn("partition without a readable partition.metadata", "dir", pdir, "err", err)
	}
	managed := &segment.ManagedState{CleanShutdown: st.clean, RecoveryPoint: -1, LogStartOffset: -1}
	if v, ok := st.recovery[tp]; ok {
		managed.RecoveryPoint = v
	}
	if v, ok := st.start[tp]; ok {
		managed.LogStartOffset = v
	}
	cfg := m.cfg.LogConfig(tp.Topic)
	cfg.Managed = managed
	cfg.Logger = m.cfg.Logger
	l, err := segment.Open(pdir, cfg)
	if err != nil {
		return fmt.Errorf("open partition %s: %w", tp, err)
	}
	hw, ok := st.hwMark[tp]
	if !ok {
		hw = l.EndOffset() // a single replica's log is committed up to its end
	}
	m.mu.Lock()
	m.parts[tp] = newPartition(tp, id, l, max(hw, l.EndOffset()))
	m.dirOf[tp] = dir
	m.mu.Unlock()
	return nil
}

// Partition returns the node's replica of tp.
func (m *Manager) Partition(tp segment.TopicPartition) (*Partition, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	p, ok := m.parts[tp]
	return p, ok
}

// Partitions returns every partition the node holds.
func (m *Manager) Partitions() []*Partition {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*Partition, 0, len(m.parts))
	for _, p := range m.parts {
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

// CreatePartition creates an empty partition in the log dir holding the
// fewest partitions (Kafka's choice), writing partition.metadata first.
func (m *Manager) CreatePartition(tp segment.TopicPartition, id TopicID) (*Partition, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.parts[tp]; ok {
		return nil, fmt.Errorf("%s: %w", tp, ErrPartitionExists)
	}
	dir := m.leastLoadedDir()
	pdir := filepath.Join(dir, tp.String())
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		return nil, err
	}
	if err := writePartitionMetadata(pdir, id); err != nil {
		return nil, err
	}
	cfg := m.cfg.LogConfig(tp.Topic)
	cfg.Managed = &segment.ManagedState{CleanShutdown: true, RecoveryPoint: 0, LogStartOffset: 0}
	cfg.Logger = m.cfg.Logger
	l, err := segment.Open(pdir, cfg)
	if err != nil {
		return nil, err
	}
	p := newPartition(tp, id, l, 0)
	m.parts[tp] = p
	m.dirOf[tp] = dir
	return p, nil
}

// REQUIRES m.mu.
func (m *Manager) leastLoadedDir() string {
	count := map[string]int{}
	for _, d := range m.dirOf {
		count[d]++
	}
	best := m.cfg.LogDirs[0]
	for _, d := range m.cfg.LogDirs[1:] {
		if count[d] < count[best] {
			best = d
		}
	}
	return best
}

// DeletePartition closes a partition's log and renames its directory to
// <topic>-<partition>.<id>-delete, which is removed in the background
// (and at the next start if the process dies first), as Kafka does.
func (m *Manager) DeletePartition(tp segment.TopicPartition) error {
	m.mu.Lock()
	p, ok := m.parts[tp]
	dir := m.dirOf[tp]
	delete(m.parts, tp)
	delete(m.dirOf, tp)
	m.mu.Unlock()
	if !ok {
		return fmt.Errorf("%s: %w", tp, ErrUnknownPartition)
	}
	p.wake()
	if err := p.Log.Close(); err != nil {
		m.cfg.Logger.Warn("closing deleted partition", "partition", tp, "err", err)
	}
	var suffix [16]byte
	rand.Read(suffix[:])
	gone := filepath.Join(dir, tp.String()+"."+hex.EncodeToString(suffix[:])+"-delete")
	if err := os.Rename(p.Log.Dir(), gone); err != nil {
		return fmt.Errorf("delete partition %s: %w", tp, err)
	}
	if err := (segment.OSFS{}).SyncDir(dir); err != nil {
		return err
	}
	m.done.Add(1)
	go func() {
		defer m.done.Done()
		if err := os.RemoveAll(gone); err != nil {
			m.cfg.Logger.Warn("removing deleted partition", "dir", gone, "err", err)
		}
	}()
	return nil
}

// UpdateLogConfig applies a topic's new configuration to its partitions.
func (m *Manager) UpdateLogConfig(topic string) error {
	cfg := m.cfg.LogConfig(topic)
	var err error
	for _, p := range m.Partitions() {
		if p.TP.Topic == topic {
			err = errors.Join(err, p.Log.UpdateConfig(cfg))
		}
	}
	return err
}

func (m *Manager) checkpointLoop() {
	defer m.done.Done()
	hw := time.NewTicker(m.cfg.HWCheckpointInterval)
	rp := time.NewTicker(m.cfg.RecoveryCheckpointInterval)
	so := time.NewTicker(m.cfg.StartOffsetCheckpoint)
	defer hw.Stop()
	defer rp.Stop()
	defer so.Stop()
	for {
		var err error
		select {
		case <-m.stop:
			return
		case <-hw.C:
			err = m.writeCheckpoints(segment.ReplicationCheckpointFile, (*Partition).HighWatermark)
		case <-rp.C:
			err = m.writeCheckpoints(segment.RecoveryPointCheckpointFile, func(p *Partition) int64 { return p.Log.RecoveryPoint() })
		case <-so.C:
			err = m.writeCheckpoints(segment.LogStartOffsetCheckpointFile, func(p *Partition) int64 { return p.Log.StartOffset() })
		}
		if err != nil {
			m.cfg.Logger.Error("checkpoint failed", "err", err)
		}
	}
}

// writeCheckpoints writes one checkpoint file in every log dir.
func (m *Manager) writeCheckpoints(name string, value func(*Partition) int64) error {
	byDir := map[string]map[segment.TopicPartition]int64{}
	for _, d := range m.cfg.LogDirs {
		byDir[d] = map[segment.TopicPartition]int64{}
	}
	m.mu.RLock()
	for tp, p := range m.parts {
		byDir[m.dirOf[tp]][tp] = value(p)
	}
	m.mu.RUnlock()
	var err error
	for d, entries := range byDir {
		err = errors.Join(err, segment.WriteCheckpoint(nil, filepath.Join(d, name), entries))
	}
	return err
}

// Flush fsyncs every partition and writes the recovery points.
func (m *Manager) Flush(ctx context.Context) error {
	var err error
	for _, p := range m.Partitions() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		err = errors.Join(err, p.Log.Flush())
	}
	return errors.Join(err, m.writeCheckpoints(segment.RecoveryPointCheckpointFile, func(p *Partition) int64 { return p.Log.RecoveryPoint() }))
}

// Close shuts the node's logs down cleanly: every log is flushed and
// closed, all three checkpoints are written, and only then the
// clean-shutdown marker, as Kafka's LogManager.shutdown.
func (m *Manager) Close() error {
	close(m.stop)
	m.done.Wait()
	err := m.closeLogs()
	if err != nil {
		return err
	}
	for _, c := range []struct {
		name string
		v    func(*Partition) int64
	}{
		{segment.RecoveryPointCheckpointFile, func(p *Partition) int64 { return p.Log.RecoveryPoint() }},
		{segment.LogStartOffsetCheckpointFile, func(p *Partition) int64 { return p.Log.StartOffset() }},
		{segment.ReplicationCheckpointFile, (*Partition).HighWatermark},
	} {
		if err := m.writeCheckpoints(c.name, c.v); err != nil {
			return err
		}
	}
	for _, d := range m.cfg.LogDirs {
		if err := segment.WriteFileAtomic(nil, filepath.Join(d, segment.CleanShutdownFile), []byte(`{"version":0,"brokerEpoch":0}`)); err != nil {
			return err
		}
	}
	return nil
}

func (m *Manager) closeLogs() error {
	var err error
	for _, p := range m.Partitions() {
		err = errors.Join(err, p.Log.Close())
	}
	return err
}
