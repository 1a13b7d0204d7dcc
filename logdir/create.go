package logdir

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/varve/varve/segment"
)

// creation is a partition being created: other creators of the same
// partition wait for done instead of creating it twice.
type creation struct {
	dir  *logDir
	done chan struct{}
}

// Create creates an empty partition in the online log dir holding the
// fewest partitions (Kafka's choice), writing partition.metadata before
// the log's first file. The directory work (mkdir, fsyncs, segment
// creation) runs without the manager's lock; only the publication of
// the new log takes it, so lookups of other partitions never wait for a
// disk. Concurrent creators of one partition get one log: the first
// creates it, the others wait for it and get ErrPartitionExists.
func (m *Manager) Create(tp segment.TopicPartition, id TopicID) (PartitionLog, error) {
	for {
		c, mine, err := m.beginCreate(tp)
		if err != nil {
			return PartitionLog{}, err
		}
		if !mine {
			<-c.done // then ask again: created, or failed and free to retry
			continue
		}
		e, err := m.createIn(c.dir, tp, id)
		m.finishCreate(tp, c, e)
		if err != nil {
			return PartitionLog{}, err
		}
		return e.PartitionLog, nil
	}
}

// beginCreate registers the creation of tp, or returns the one under
// way (mine false).
func (m *Manager) beginCreate(tp segment.TopicPartition) (*creation, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := (*m.logs.Load())[tp]; ok {
		return nil, false, fmt.Errorf("%s: %w", tp, ErrPartitionExists)
	}
	if c, ok := m.mu.creating[tp]; ok {
		return c, false, nil
	}
	for _, d := range m.dirs {
		if _, ok := d.offlineParts[tp]; ok {
			return nil, false, fmt.Errorf("%s: %w: in %s", tp, ErrPartitionExists, d.offlineErr())
		}
	}
	d := m.leastLoadedDirLocked()
	if pref, ok := m.mu.preferred[tp]; ok && !pref.isOffline() {
		d = pref
	}
	if d == nil {
		return nil, false, fmt.Errorf("create %s: %w: every log dir is offline", tp, ErrOffline)
	}
	c := &creation{dir: d, done: make(chan struct{})}
	m.mu.creating[tp] = c
	return c, true, nil
}

// finishCreate publishes a created log (e nil: the creation failed) and
// releases those waiting for it.
func (m *Manager) finishCreate(tp segment.TopicPartition, c *creation, e *entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e != nil {
		m.publishLocked(func(lm logMap) { lm[tp] = e })
		delete(m.mu.preferred, tp) // satisfied, as Kafka's getOrCreateLog
	}
	delete(m.mu.creating, tp)
	close(c.done)
}

// createIn does the file work of Create. No lock is held.
func (m *Manager) createIn(d *logDir, tp segment.TopicPartition, id TopicID) (*entry, error) {
	pdir := filepath.Join(d.path, tp.String())
	if err := d.fs.MkdirAll(pdir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", pdir, err)
	}
	if err := writePartitionMetadata(d.fs, pdir, id); err != nil {
		return nil, fmt.Errorf("create %s: %w", tp, err)
	}
	if err := d.fs.SyncDir(d.path); err != nil {
		return nil, fmt.Errorf("create %s: fsync %s: %w", tp, d.path, err)
	}
	managed := &segment.ManagedState{CleanShutdown: true, RecoveryPoint: 0, LogStartOffset: 0}
	return m.openLog(d, tp, managed, 0)
}

// leastLoadedDirLocked picks the online dir with the fewest partitions,
// counting those being created. REQUIRES m.mu.
func (m *Manager) leastLoadedDirLocked() *logDir {
	count := map[*logDir]int{}
	for _, e := range *m.logs.Load() {
		count[e.dir]++
	}
	for _, c := range m.mu.creating {
		count[c.dir]++
	}
	var best *logDir
	for _, d := range m.dirs {
		if !d.isOffline() && (best == nil || count[d] < count[best]) {
			best = d
		}
	}
	return best
}

// Delete closes a partition's log and renames its directory to
// <topic>-<partition>.<id>-delete, which is removed in the background
// (and at the next start if the process dies first), as Kafka does. A
// partition whose dir is offline is deleted the same way when the dir
// allows it.
func (m *Manager) Delete(tp segment.TopicPartition) error {
	m.stopMoveOf(tp) // a move in its swap finishes first
	d, l, ok := m.unpublish(tp)
	if !ok {
		return fmt.Errorf("%s: %w", tp, ErrUnknownPartition)
	}
	if l != nil {
		if err := l.Close(); err != nil {
			m.cfg.Logger.Warn("closing deleted partition", "partition", tp, "err", err)
		}
	}
	var suffix [16]byte
	rand.Read(suffix[:])
	gone := filepath.Join(d.path, tp.String()+"."+hex.EncodeToString(suffix[:])+"-delete")
	if err := d.fs.Rename(filepath.Join(d.path, tp.String()), gone); err != nil {
		return fmt.Errorf("delete partition %s: %w", tp, err)
	}
	if err := d.fs.SyncDir(d.path); err != nil {
		return fmt.Errorf("delete partition %s: fsync %s: %w", tp, d.path, err)
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

// unpublish removes tp from the online logs (l is its log) or from its
// offline dir's list (l nil).
func (m *Manager) unpublish(tp segment.TopicPartition) (*logDir, *segment.Log, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := (*m.logs.Load())[tp]; ok {
		m.publishLocked(func(lm logMap) { delete(lm, tp) })
		return e.dir, e.Log, true
	}
	for _, d := range m.dirs {
		if _, ok := d.offlineParts[tp]; ok {
			delete(d.offlineParts, tp)
			return d, nil, true
		}
	}
	return nil, nil, false
}
