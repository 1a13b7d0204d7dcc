package compaction

import (
	"fmt"
	"path/filepath"
	"sync"

	"github.com/varve/varve/segment"
)

// The cleaner-offset-checkpoint file records, per partition, the first
// dirty offset: where the next pass starts building its offset map. It is
// Kafka's offset checkpoint text format (segment.EncodeCheckpoint):
//
//	0                      version
//	<n>                    number of entries
//	<topic> <partition> <first dirty offset>   one line per partition
//
// written to a temporary file, fsynced, renamed over the old one and its
// directory fsynced. A log that manages its own checkpoints
// (segment.Config.Managed == nil, the library case) keeps the file in its
// own directory with its one entry; a log under a log manager shares the
// file of its log dir (the parent directory) with the other partitions
// there, as in Kafka.

// checkpointLocks serialises the read-modify-write of each checkpoint
// file, which several partitions may share.
var checkpointLocks sync.Map // path -> *sync.Mutex

func checkpointPath(l *segment.Log) string {
	dir := l.Dir()
	if l.Config().Managed != nil {
		dir = filepath.Dir(dir)
	}
	return filepath.Join(dir, segment.CleanerOffsetCheckpointFile)
}

func lockCheckpoint(path string) func() {
	mu, _ := checkpointLocks.LoadOrStore(path, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	return mu.(*sync.Mutex).Unlock
}

// readFirstDirty returns the checkpointed first dirty offset of l, and
// false when there is none. An unreadable file counts as empty: it costs
// a pass over the whole log, never data.
func readFirstDirty(l *segment.Log) (int64, bool) {
	path := checkpointPath(l)
	defer lockCheckpoint(path)()
	m, err := segment.ReadCheckpoint(l.Config().FS, path)
	if err != nil {
		l.Config().Logger.Warn("ignoring unreadable cleaner checkpoint", "file", path, "err", err)
		return 0, false
	}
	off, ok := m[l.TopicPartition()]
	return off, ok
}

// writeFirstDirty records offset as l's first dirty offset, keeping the
// other partitions' entries.
func writeFirstDirty(l *segment.Log, offset int64) error {
	path := checkpointPath(l)
	defer lockCheckpoint(path)()
	fs := l.Config().FS
	m, err := segment.ReadCheckpoint(fs, path)
	if err != nil {
		m = map[segment.TopicPartition]int64{}
	}
	m[l.TopicPartition()] = offset
	if err := segment.WriteCheckpoint(fs, path, m); err != nil {
		return fmt.Errorf("cleaner checkpoint %s: %w", path, err)
	}
	return nil
}

// FirstDirtyIn returns tp's first dirty offset in the
// cleaner-offset-checkpoint of log dir dir, and false when it holds
// none. A log manager moving tp between log dirs carries it with this
// and SetFirstDirtyIn; both take the lock a pass on a log of dir takes.
func FirstDirtyIn(fs segment.FS, dir string, tp segment.TopicPartition) (int64, bool, error) {
	path := filepath.Join(dir, segment.CleanerOffsetCheckpointFile)
	defer lockCheckpoint(path)()
	m, err := segment.ReadCheckpoint(fs, path)
	if err != nil {
		return 0, false, fmt.Errorf("cleaner checkpoint %s: %w", path, err)
	}
	off, ok := m[tp]
	return off, ok, nil
}

// SetFirstDirtyIn sets tp's entry in the cleaner-offset-checkpoint of
// log dir dir to offset, or removes it when ok is false, keeping the
// other partitions' entries (Kafka's LogCleanerManager.updateCheckpoints).
// An unreadable file is replaced.
func SetFirstDirtyIn(fs segment.FS, dir string, tp segment.TopicPartition, offset int64, ok bool) error {
	path := filepath.Join(dir, segment.CleanerOffsetCheckpointFile)
	defer lockCheckpoint(path)()
	m, err := segment.ReadCheckpoint(fs, path)
	if err != nil {
		m = map[segment.TopicPartition]int64{}
	}
	if cur, had := m[tp]; !ok && !had || ok && had && cur == offset {
		return nil // as it is: no write
	}
	if ok {
		m[tp] = offset
	} else {
		delete(m, tp)
	}
	if err := segment.WriteCheckpoint(fs, path, m); err != nil {
		return fmt.Errorf("cleaner checkpoint %s: %w", path, err)
	}
	return nil
}
