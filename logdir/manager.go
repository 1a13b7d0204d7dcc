package logdir

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/varve/varve/segment"
)

// Kafka's defaults for the manager's settings, and Varve's own probe
// interval.
const (
	DefaultCheckpointInterval   = 60 * time.Second // log.flush.offset.checkpoint.interval.ms, log.flush.start.offset.checkpoint.interval.ms
	DefaultHWCheckpointInterval = 5 * time.Second  // replica.high.watermark.checkpoint.interval.ms
	// DefaultProbeInterval is how often an offline log directory is
	// probed (write, fsync, remove a small file) to bring it back online.
	// Not a Kafka setting: Kafka keeps a failed directory offline until
	// the broker restarts.
	DefaultProbeInterval = 5 * time.Second
)

var (
	// ErrUnknownPartition: the node holds no log of the partition.
	ErrUnknownPartition = errors.New("unknown topic or partition")
	// ErrPartitionExists: the partition was already created.
	ErrPartitionExists = errors.New("partition already exists")
	// ErrOffline: the partition's log directory is offline after an I/O
	// error (Kafka's KAFKA_STORAGE_ERROR), or no log directory is online.
	ErrOffline = errors.New("log directory offline")
)

// Config is what the manager needs from the broker's configuration.
type Config struct {
	LogDirs                    []string      // log.dirs
	RecoveryThreadsPerDataDir  int           // num.recovery.threads.per.data.dir, default 1
	RecoveryCheckpointInterval time.Duration // log.flush.offset.checkpoint.interval.ms
	StartOffsetCheckpoint      time.Duration // log.flush.start.offset.checkpoint.interval.ms
	HWCheckpointInterval       time.Duration // replica.high.watermark.checkpoint.interval.ms
	// MoveRate bounds the bytes per second that the copies of moves
	// between log dirs read, all moves together
	// (replica.alter.log.dirs.io.max.bytes.per.second); 0 is the
	// default, DefaultMoveRate (unlimited), and a negative rate is
	// Kafka's 0 (a read only once the measured rate fell back to 0,
	// every MoveQuotaWindows windows). SetMoveRate changes it.
	MoveRate int64
	// MoveQuotaWindows and MoveQuotaWindowSize are the samples the rate
	// is measured over (alter.log.dirs.replication.quota.window.num and
	// .size.seconds); 0: DefaultMoveQuotaWindows, DefaultMoveQuotaWindowSize.
	MoveQuotaWindows    int
	MoveQuotaWindowSize time.Duration
	Logger              *slog.Logger
	// LogConfig gives a topic's log configuration. The manager calls it
	// without holding any lock of its own.
	LogConfig func(topic string) segment.Config

	// The fields below are not Kafka settings.

	// ProbeInterval is how often an offline log directory is probed;
	// default DefaultProbeInterval.
	ProbeInterval time.Duration
	// FS is the file system every file of the log dirs goes through
	// (segments, checkpoints, markers, partition.metadata); nil means the
	// operating system's. Tests wrap it to inject faults.
	FS segment.FS
	// HighWatermark supplies a partition's high watermark for
	// replication-offset-checkpoint (the layer above owns it); ok false
	// leaves the partition out. Nil writes no high watermarks.
	HighWatermark func(tp segment.TopicPartition) (hw int64, ok bool)
	// OnOffline is told which partitions lost their logs when a log
	// directory went offline (their logs are closed right after).
	OnOffline func(tps []segment.TopicPartition)
	// OnOnline is given the logs reopened when a directory came back.
	OnOnline func(logs []PartitionLog)
	// BrokerEpoch is the broker's epoch, written into each directory's
	// clean-shutdown marker at Close; nil (or a negative epoch) writes
	// -1, no epoch.
	BrokerEpoch func() int64
	// OnMoving is told that a partition's log is about to be closed and
	// swapped for its copy in another log dir (AlterLogDir); OnMoved, or
	// OnOffline if the swap fails and the log cannot be reopened, ends
	// it. Nil falls back to OnOffline.
	OnMoving func(tp segment.TopicPartition)
	// OnMoved is given a partition's log after a move to another log
	// dir swapped it in, or after a move that gave up reopened the
	// current one. Nil falls back to OnOnline.
	OnMoved func(pl PartitionLog)
	// Clock is what the throttle of the moves measures and waits by;
	// nil is the wall clock. Tests give a fake one.
	Clock Clock
}

// PartitionLog is a partition's log as the manager holds it.
type PartitionLog struct {
	TP      segment.TopicPartition
	TopicID TopicID
	Log     *segment.Log
	// CheckpointedHW is the high watermark replication-offset-checkpoint
	// held for the partition when it was loaded, -1 if none.
	CheckpointedHW int64
}

// entry is a published partition log and the directory holding it.
type entry struct {
	PartitionLog
	dir *logDir
}

type logMap = map[segment.TopicPartition]*entry

// Manager owns the logs of one node's log directories (Kafka's
// LogManager).
type Manager struct {
	cfg  Config
	dirs []*logDir

	// logs is the published map of online logs, replaced whole under mu
	// (copy on write): lookups take no lock.
	logs atomic.Pointer[logMap]

	mu struct {
		sync.Mutex
		creating map[segment.TopicPartition]*creation
		// moves are the partitions being moved to another log dir.
		moves map[segment.TopicPartition]*move
		// preferred is the log dir AlterLogDir named for a partition the
		// node did not hold yet: Create puts it there (Kafka's
		// preferredLogDirs).
		preferred map[segment.TopicPartition]*logDir
		// resume are the futures Open found, for ResumeMoves.
		resume []movedDir
		// closing is set by Close: no move starts any more.
		closing bool
		// moveHook is SetMoveHook's function.
		moveHook func(tp segment.TopicPartition, step MoveStep) bool
	}

	// cpMu serialises the writing of checkpoint files (the loop, Flush,
	// a move's swap and Close write them).
	cpMu sync.Mutex

	// moveQuota throttles the copies of every move (MoveRate).
	moveQuota *moveQuota

	probeWake chan struct{} // buffered 1: a directory just failed
	stop      chan struct{}
	done      sync.WaitGroup
}

func (c *Config) setDefaults() error {
	if len(c.LogDirs) == 0 {
		return errors.New("logdir: no log.dirs")
	}
	if c.LogConfig == nil {
		c.LogConfig = func(string) segment.Config { return segment.DefaultConfig() }
	}
	c.RecoveryThreadsPerDataDir = max(c.RecoveryThreadsPerDataDir, 1)
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&c.RecoveryCheckpointInterval, DefaultCheckpointInterval},
		{&c.StartOffsetCheckpoint, DefaultCheckpointInterval},
		{&c.HWCheckpointInterval, DefaultHWCheckpointInterval},
		{&c.ProbeInterval, DefaultProbeInterval},
	} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.FS == nil {
		c.FS = segment.OSFS{}
	}
	if c.MoveRate == 0 {
		c.MoveRate = DefaultMoveRate
	}
	if c.MoveQuotaWindows <= 0 {
		c.MoveQuotaWindows = DefaultMoveQuotaWindows
	}
	if c.MoveQuotaWindowSize <= 0 {
		c.MoveQuotaWindowSize = DefaultMoveQuotaWindowSize
	}
	if c.Clock == nil {
		c.Clock = wallClock{}
	}
	return nil
}

// Open loads every partition found in the log directories, recovering
// them in parallel (num.recovery.threads.per.data.dir per directory, all
// directories at once), then starts the checkpoint and probe loops.
func Open(cfg Config) (*Manager, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	m := &Manager{cfg: cfg, stop: make(chan struct{}), probeWake: make(chan struct{}, 1),
		moveQuota: newMoveQuota(kafkaRate(cfg.MoveRate), cfg.MoveQuotaWindows, cfg.MoveQuotaWindowSize)}
	m.mu.creating = map[segment.TopicPartition]*creation{}
	m.mu.moves = map[segment.TopicPartition]*move{}
	m.mu.preferred = map[segment.TopicPartition]*logDir{}
	for _, d := range cfg.LogDirs {
		m.dirs = append(m.dirs, newLogDir(d, m))
	}
	empty := logMap{}
	m.logs.Store(&empty)
	if err := m.settleMoves(); err != nil {
		return nil, err
	}
	loaded, err := m.loadDirs()
	if err != nil {
		for _, e := range loaded {
			e.Log.Close()
		}
		return nil, err
	}
	m.publish(func(lm logMap) {
		for _, e := range loaded {
			lm[e.TP] = e
		}
	})
	m.done.Add(2)
	go m.checkpointLoop()
	go m.probeLoop()
	return m, nil
}

// publish applies change to a copy of the log map and publishes it.
func (m *Manager) publish(change func(logMap)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.publishLocked(change)
}

// REQUIRES m.mu.
func (m *Manager) publishLocked(change func(logMap)) {
	next := maps.Clone(*m.logs.Load())
	change(next)
	m.logs.Store(&next)
}

// Get returns the online log of tp.
func (m *Manager) Get(tp segment.TopicPartition) (PartitionLog, bool) {
	e, ok := (*m.logs.Load())[tp]
	if !ok {
		return PartitionLog{}, false
	}
	return e.PartitionLog, true
}

// Logs returns every online log, sorted by topic and partition.
func (m *Manager) Logs() []PartitionLog {
	lm := *m.logs.Load()
	out := make([]PartitionLog, 0, len(lm))
	for _, e := range lm {
		out = append(out, e.PartitionLog)
	}
	sort.Slice(out, func(i, j int) bool { return lessTP(out[i].TP, out[j].TP) })
	return out
}

func lessTP(a, b segment.TopicPartition) bool {
	if a.Topic != b.Topic {
		return a.Topic < b.Topic
	}
	return a.Partition < b.Partition
}

// OfflineDirs lists the log directories that are offline (Kafka's
// OfflineLogDirectoryCount counts them).
func (m *Manager) OfflineDirs() []string {
	var out []string
	for _, d := range m.dirs {
		if d.isOffline() {
			out = append(out, d.path)
		}
	}
	return out
}

// UpdateLogConfig applies a topic's new configuration to its logs.
func (m *Manager) UpdateLogConfig(topic string) error {
	cfg := m.cfg.LogConfig(topic)
	var err error
	for _, e := range *m.logs.Load() {
		if e.TP.Topic == topic {
			err = errors.Join(err, e.Log.UpdateConfig(cfg))
		}
	}
	return err
}

// Flush fsyncs every log and writes the recovery points.
func (m *Manager) Flush(ctx context.Context) error {
	var err error
	for _, e := range *m.logs.Load() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		err = errors.Join(err, e.Log.Flush())
	}
	return errors.Join(err, m.writeCheckpoints(segment.RecoveryPointCheckpointFile, recoveryPoint))
}

// Close shuts the logs down cleanly, as Kafka's LogManager.shutdown: every
// log is flushed and closed, the three checkpoints are written, and only
// then the clean-shutdown marker of each online directory. A directory
// that is offline gets no marker: its logs are recovered at the next
// start, and Close reports it (ErrOffline): that shutdown was not clean.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.mu.closing = true
	m.mu.Unlock()
	m.stopMoves()
	close(m.stop)
	m.done.Wait()
	var err error
	for _, e := range *m.logs.Load() {
		err = errors.Join(err, e.Log.Close())
	}
	if err != nil {
		return err
	}
	for _, d := range m.dirs {
		if d.isOffline() { // perhaps since a log's close failed in it
			err = errors.Join(err, d.offlineErr())
			continue
		}
		if err := m.writeDirCheckpoints(d); err != nil {
			return err
		}
		if err := d.writeMarker(); err != nil {
			return err
		}
	}
	return err
}
