package logdir

import (
	"errors"
	"path/filepath"
	"time"

	"github.com/varve/varve/segment"
)

// checkpointValue gives the offset a checkpoint file records for a log;
// ok false leaves the log out.
type checkpointValue func(e *entry) (offset int64, ok bool)

func recoveryPoint(e *entry) (int64, bool) { return e.Log.RecoveryPoint(), true }
func startOffset(e *entry) (int64, bool)   { return e.Log.StartOffset(), true }

// highWatermark asks the layer above, which owns high watermarks.
func (m *Manager) highWatermark(e *entry) (int64, bool) {
	if m.cfg.HighWatermark == nil {
		return 0, false
	}
	return m.cfg.HighWatermark(e.TP)
}

// checkpointLoop writes the three checkpoint files on their intervals
// until Close.
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
			err = m.writeCheckpoints(segment.ReplicationCheckpointFile, m.highWatermark)
		case <-rp.C:
			err = m.writeCheckpoints(segment.RecoveryPointCheckpointFile, recoveryPoint)
		case <-so.C:
			err = m.writeCheckpoints(segment.LogStartOffsetCheckpointFile, startOffset)
		}
		if err != nil {
			m.cfg.Logger.Error("checkpoint failed", "err", err)
		}
	}
}

// writeCheckpoints writes one checkpoint file in every online log dir.
// It reads the published logs without a lock; the file I/O holds none.
func (m *Manager) writeCheckpoints(name string, value checkpointValue) error {
	var err error
	for _, d := range m.dirs {
		if !d.isOffline() {
			err = errors.Join(err, m.writeCheckpoint(d, name, value))
		}
	}
	return err
}

// writeCheckpoint writes one checkpoint file of d, atomically. The
// future logs of moves into d are in it under their partition's name, as
// in Kafka: the next start applies them to the partition's directory
// once the move's swap renamed the future.
func (m *Manager) writeCheckpoint(d *logDir, name string, value checkpointValue) error {
	entries := map[segment.TopicPartition]int64{}
	for tp, e := range *m.logs.Load() {
		if e.dir != d {
			continue
		}
		if v, ok := value(e); ok {
			entries[tp] = v
		}
	}
	for _, e := range m.futuresIn(d) {
		if v, ok := value(e); ok {
			entries[e.TP] = v
		}
	}
	m.cpMu.Lock()
	defer m.cpMu.Unlock()
	return segment.WriteCheckpoint(d.fs, filepath.Join(d.path, name), entries)
}

// futuresIn are the future logs being moved into d, as entries.
func (m *Manager) futuresIn(d *logDir) []*entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*entry
	for tp, mv := range m.mu.moves {
		if l := mv.future.Load(); l != nil && mv.dst == d {
			out = append(out, &entry{PartitionLog: PartitionLog{TP: tp, TopicID: mv.topicID, Log: l}, dir: d})
		}
	}
	return out
}

// writeDirCheckpoints writes the three checkpoint files of d, in the
// order Kafka's LogManager.shutdown does.
func (m *Manager) writeDirCheckpoints(d *logDir) error {
	for _, c := range []struct {
		name  string
		value checkpointValue
	}{
		{segment.RecoveryPointCheckpointFile, recoveryPoint},
		{segment.LogStartOffsetCheckpointFile, startOffset},
		{segment.ReplicationCheckpointFile, m.highWatermark},
	} {
		if err := m.writeCheckpoint(d, c.name, c.value); err != nil {
			return err
		}
	}
	return nil
}
