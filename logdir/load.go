package logdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/varve/varve/segment"
)

// dirState is what a log directory's marker and checkpoints said at
// start.
type dirState struct {
	clean                   bool
	recovery, start, hwMark map[segment.TopicPartition]int64
}

// loadDirs loads every log directory at once, each with its own pool of
// recovery threads, as Kafka's LogManager.loadLogs.
func (m *Manager) loadDirs() ([]*entry, error) {
	var (
		mu     sync.Mutex
		all    []*entry
		errAll error
		wg     sync.WaitGroup
	)
	for _, d := range m.dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loaded, err := m.loadDir(d)
			mu.Lock()
			all, errAll = append(all, loaded...), errors.Join(errAll, err)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return all, errAll
}

// PreviousBrokerEpoch is the broker epoch the clean-shutdown markers
// held when the manager opened, as Kafka's
// LogManager.readBrokerEpochFromCleanShutdownFiles: -1 unless every log
// directory had a marker holding the same epoch. The broker sends it in
// its registration (KIP-966), so that the controller can tell a clean
// shutdown from an unclean one.
func (m *Manager) PreviousBrokerEpoch() int64 {
	epoch := int64(-1)
	for i, d := range m.dirs {
		if d.shutdownEpoch < 0 || (i > 0 && d.shutdownEpoch != epoch) {
			return -1
		}
		epoch = d.shutdownEpoch
	}
	return epoch
}

// loadDir reads a log directory's marker and checkpoints, then opens its
// partitions on num.recovery.threads.per.data.dir goroutines.
func (m *Manager) loadDir(d *logDir) ([]*entry, error) {
	if err := d.fs.MkdirAll(d.path, 0o755); err != nil {
		return nil, fmt.Errorf("log dir %s: %w", d.path, err)
	}
	st, err := m.readDirState(d)
	if err != nil {
		return nil, err
	}
	names, err := m.partitionDirs(d)
	if err != nil {
		return nil, err
	}
	began := time.Now()
	entries, err := m.openAll(d, names, st)
	m.cfg.Logger.Info("log dir loaded", "dir", d.path, "partitions", len(names), "clean_shutdown", st.clean, "took", time.Since(began))
	return entries, err
}

// openAll opens the named partitions of d in parallel.
func (m *Manager) openAll(d *logDir, names []string, st dirState) ([]*entry, error) {
	work := make(chan string)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		out    []*entry
		errAll error
	)
	for i := 0; i < m.cfg.RecoveryThreadsPerDataDir; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range work {
				e, err := m.loadPartition(d, name, st)
				mu.Lock()
				if err != nil {
					errAll = errors.Join(errAll, err)
				} else {
					out = append(out, e)
				}
				mu.Unlock()
			}
		}()
	}
	for _, n := range names {
		work <- n
	}
	close(work)
	wg.Wait()
	return out, errAll
}

// readDirState reads the clean-shutdown marker, deleting it at once (a
// crash while loading must count as unclean, KAFKA-10471), and the three
// checkpoint files. A torn checkpoint costs a longer recovery, never
// data.
func (m *Manager) readDirState(d *logDir) (dirState, error) {
	st := dirState{}
	marker := filepath.Join(d.path, segment.CleanShutdownFile)
	data, err := segment.ReadFile(d.fs, marker)
	if !errors.Is(err, os.ErrNotExist) {
		// A marker that does not read counts as none (the logs are
		// recovered), and goes too.
		st.clean = err == nil
		if err == nil {
			d.shutdownEpoch, err = segment.ParseCleanShutdown(data)
		}
		if err != nil {
			m.cfg.Logger.Info("clean-shutdown marker holds no broker epoch", "dir", d.path, "clean", st.clean, "err", err)
		}
		if err := d.fs.Remove(marker); err != nil {
			return st, fmt.Errorf("remove %s: %w", marker, err)
		}
		if err := d.fs.SyncDir(d.path); err != nil {
			return st, fmt.Errorf("fsync %s: %w", d.path, err)
		}
	}
	var errAll error
	read := func(name string) map[segment.TopicPartition]int64 {
		c, err := segment.ReadCheckpoint(d.fs, filepath.Join(d.path, name))
		if err != nil {
			errAll = errors.Join(errAll, err)
			st.clean = false
			return map[segment.TopicPartition]int64{}
		}
		return c
	}
	st.recovery = read(segment.RecoveryPointCheckpointFile)
	st.start = read(segment.LogStartOffsetCheckpointFile)
	st.hwMark = read(segment.ReplicationCheckpointFile)
	if errAll != nil {
		m.cfg.Logger.Warn("ignoring unreadable checkpoint; its logs are recovered in full", "dir", d.path, "err", errAll)
	}
	return st, nil
}

// MetadataTopic is KRaft's metadata log. Its directory may sit in a log
// dir (Kafka's default metadata.log.dir is the first log dir); it is the
// Raft layer's, not a partition this manager opens, checkpoints or
// writes into (Kafka's LogManager.loadLogs skips it too).
const MetadataTopic = "__cluster_metadata"

// partitionDirs lists the partition directories of a log dir, removing
// those left by a topic deletion and skipping the metadata log's.
func (m *Manager) partitionDirs(d *logDir) ([]string, error) {
	entries, err := d.fs.ReadDir(d.path)
	if err != nil {
		return nil, fmt.Errorf("list log dir %s: %w", d.path, err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		if strings.HasSuffix(name, "-delete") {
			if err := os.RemoveAll(filepath.Join(d.path, name)); err != nil {
				m.cfg.Logger.Warn("removing deleted partition failed", "dir", name, "err", err)
			}
			continue
		}
		if tp := segment.ParseTopicPartition(name); tp.String() == name && tp.Topic != MetadataTopic {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// loadPartition opens one partition directory with what the dir's
// checkpoints say about it.
func (m *Manager) loadPartition(d *logDir, name string, st dirState) (*entry, error) {
	tp := segment.ParseTopicPartition(name)
	managed := &segment.ManagedState{CleanShutdown: st.clean, RecoveryPoint: -1, LogStartOffset: -1}
	if v, ok := st.recovery[tp]; ok {
		managed.RecoveryPoint = v
	}
	if v, ok := st.start[tp]; ok {
		managed.LogStartOffset = v
	}
	hw, ok := st.hwMark[tp]
	if !ok {
		hw = -1
	}
	return m.openLog(d, tp, managed, hw)
}

// openLog opens the log of tp in d; it reads the topic id from
// partition.metadata.
func (m *Manager) openLog(d *logDir, tp segment.TopicPartition, managed *segment.ManagedState, hw int64) (*entry, error) {
	pdir := filepath.Join(d.path, tp.String())
	id, err := readPartitionMetadata(d.fs, pdir)
	if err != nil {
		m.cfg.Logger.Warn("partition without a readable partition.metadata", "dir", pdir, "err", err)
	}
	cfg := m.cfg.LogConfig(tp.Topic)
	cfg.Managed, cfg.FS = managed, d.fs
	if cfg.Logger == nil {
		cfg.Logger = m.cfg.Logger
	}
	l, err := segment.Open(pdir, cfg)
	if err != nil {
		return nil, fmt.Errorf("open partition %s: %w", tp, err)
	}
	return &entry{PartitionLog: PartitionLog{TP: tp, TopicID: id, Log: l, CheckpointedHW: hw}, dir: d}, nil
}
