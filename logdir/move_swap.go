package logdir

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/varve/varve/compaction"
	"github.com/varve/varve/segment"
)

// MoveStep names the points between the steps of a move, in order (see
// doc.go). Tests stop a move at each to check what a restart makes of
// the directories it leaves.
type MoveStep int

// The steps of a move.
const (
	StepFutureCreated  MoveStep = iota + 1 // <tp>.<id>-future made, empty
	StepCopied                             // the future is close to the current log's end
	StepSourceClosed                       // the current log is closed; the partition is offline
	StepFutureComplete                     // the future holds every record, is closed, and the destination's checkpoints name it
	StepSourceRenamed                      // <tp> renamed <tp>.<id>-delete in the source dir
	StepFutureRenamed                      // <tp>.<id>-future renamed <tp> in the destination
	StepSwapped                            // the new log serves; the -delete dir is not removed yet
)

// errHookStop: a test's hook stopped the move, leaving its files as a
// crash would.
var errHookStop = errors.New("move stopped by a test hook")

// hook runs the test hook after step; it stops the move when the hook
// says so.
func (m *Manager) hook(mv *move, step MoveStep) error {
	if mv.hook != nil && !mv.hook(mv.tp, step) {
		return errHookStop
	}
	return nil
}

// swap replaces the current log with the future one, under the
// partition being offline for the layer above (Kafka holds the
// partition's lock for its replaceCurrentWithFutureLog):
//
//  1. unpublish the current log, tell the layer above (OnMoving: its
//     appends wait), close it: appends in flight end before the close;
//  2. reopen it and copy the last records into the future; the future
//     takes the current log's start offset and leader-epoch-checkpoint,
//     and is closed (flushed, producer snapshot at its end);
//  3. write the destination's checkpoint files, which name the future
//     under the partition's name, and carry the partition's entry of the
//     cleaner-offset-checkpoint there;
//  4. rename <tp> to <tp>.<id>-delete in the source dir, fsync it;
//  5. rename <tp>.<id>-future to <tp> in the destination, fsync it;
//  6. open and publish the moved log, hand it to the layer above
//     (OnMoved), rewrite the source's checkpoints and remove the entry of
//     its cleaner-offset-checkpoint, remove the -delete dir in the
//     background.
//
// A failure before step 4 reopens the current log where it was and
// removes the future. Step 4 before step 5 (Kafka renames the future
// first) means no instant has two directories named <tp>: the rules of
// settleMoves at the next start finish a swap cut between them.
func (m *Manager) swap(mv *move) error {
	mv.swapping.Store(true)
	e, ok := m.takeForSwap(mv)
	if !ok {
		m.discardFuture(mv)
		return fmt.Errorf("move %s: %w", mv.tp, ErrUnknownPartition)
	}
	switch {
	case m.cfg.OnMoving != nil:
		m.cfg.OnMoving(mv.tp)
	case m.cfg.OnOffline != nil:
		m.cfg.OnOffline([]segment.TopicPartition{mv.tp})
	}
	closeErr := e.Log.Close()
	if closeErr != nil {
		m.cfg.Logger.Warn("closing a moving partition's log", "partition", mv.tp, "err", closeErr)
	}
	if err := m.hook(mv, StepSourceClosed); err != nil {
		mv.future.Load().Close()
		return err
	}
	if err := m.completeFuture(mv, e, closeErr == nil); err != nil {
		m.discardFuture(mv)
		m.reopenSource(e)
		return err
	}
	if err := m.hook(mv, StepFutureComplete); err != nil {
		return err
	}
	return m.renameAndPublish(mv, e)
}

// takeForSwap unpublishes the current log of mv's partition, if it is
// still in the move's source dir.
func (m *Manager) takeForSwap(mv *move) (*entry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := (*m.logs.Load())[mv.tp]
	if !ok || e.dir != mv.src {
		return nil, false
	}
	m.publishLocked(func(lm logMap) { delete(lm, mv.tp) })
	return e, true
}

// completeFuture copies what the closed current log holds past the
// future's end, gives the future its start offset and epoch checkpoint,
// closes it and writes the destination's checkpoints (step 2 and 3).
func (m *Manager) completeFuture(mv *move, e *entry, clean bool) error {
	fut := mv.future.Load()
	old, err := m.openIn(mv.src, filepath.Join(mv.src.path, mv.tp.String()), mv.tp.Topic,
		&segment.ManagedState{CleanShutdown: clean, RecoveryPoint: e.Log.RecoveryPoint(), LogStartOffset: e.Log.StartOffset()})
	if err != nil {
		return err
	}
	// Not throttled: the partition is offline until the swap ends. The
	// bytes count towards the rate all the same.
	n, err := catchUp(old, fut, math.MaxInt)
	m.moveQuota.record(int64(n), m.cfg.Clock.Now())
	if err == nil && fut.EndOffset() != old.EndOffset() {
		err = fmt.Errorf("move %s: future ends at %d, current log at %d", mv.tp, fut.EndOffset(), old.EndOffset())
	}
	if err == nil {
		err = fut.SetStartOffset(old.StartOffset())
	}
	if err == nil {
		err = m.copyEpochCheckpoint(mv)
	}
	err = errors.Join(err, old.Close())
	if err == nil {
		err = fut.Close()
	}
	if err != nil {
		return fmt.Errorf("move %s: complete the future log: %w", mv.tp, err)
	}
	if err := m.writeDirCheckpoints(mv.dst); err != nil {
		return err
	}
	return m.carryCleanerCheckpoint(mv)
}

// carryCleanerCheckpoint copies the partition's first dirty offset from
// the source's cleaner-offset-checkpoint into the destination's (Kafka's
// LogCleanerManager.alterCheckpointDir), or removes a stale entry there
// when the source has none, so that the moved log is not cleaned again
// from its start. It runs before the first rename: a swap that a crash
// cuts later finds it written. The source's entry goes once the moved
// log serves (forgetCleanerCheckpoint); until then both dirs hold it,
// and only the dir holding the partition's log is ever read for it.
func (m *Manager) carryCleanerCheckpoint(mv *move) error {
	off, ok, err := compaction.FirstDirtyIn(mv.src.fs, mv.src.path, mv.tp)
	if err != nil {
		// Kafka logs it and moves on: the moved log is cleaned from its
		// start, which costs a pass, never data.
		m.cfg.Logger.Warn("the cleaner checkpoint of a moved partition is not carried", "partition", mv.tp, "err", err)
		ok = false
	}
	if err := compaction.SetFirstDirtyIn(mv.dst.fs, mv.dst.path, mv.tp, off, ok); err != nil {
		return fmt.Errorf("move %s: %w", mv.tp, err)
	}
	return nil
}

// forgetCleanerCheckpoint removes a moved partition's entry from the
// cleaner-offset-checkpoint of the dir it left.
func (m *Manager) forgetCleanerCheckpoint(mv *move) {
	if err := compaction.SetFirstDirtyIn(mv.src.fs, mv.src.path, mv.tp, 0, false); err != nil {
		m.cfg.Logger.Warn("removing a moved partition from its old dir's cleaner checkpoint", "dir", mv.src.path, "err", err)
	}
}

// copyEpochCheckpoint copies the partition's leader-epoch-checkpoint
// into the future dir (the layer above writes it; the move carries it).
func (m *Manager) copyEpochCheckpoint(mv *move) error {
	src := filepath.Join(mv.src.path, mv.tp.String(), LeaderEpochCheckpointFile)
	data, err := segment.ReadFile(mv.src.fs, src)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return segment.WriteFileAtomic(mv.dst.fs, filepath.Join(mv.futurePath(), LeaderEpochCheckpointFile), data)
}

// renameAndPublish does steps 4 to 6 of swap.
func (m *Manager) renameAndPublish(mv *move, e *entry) error {
	srcPath := filepath.Join(mv.src.path, mv.tp.String())
	delPath := filepath.Join(mv.src.path, mv.deleteName())
	if err := mv.src.fs.Rename(srcPath, delPath); err != nil {
		m.discardFuture(mv)
		m.reopenSource(e)
		return fmt.Errorf("move %s: %w", mv.tp, err)
	}
	if err := mv.src.fs.SyncDir(mv.src.path); err != nil {
		// Whether the rename is durable is unknown: the future keeps its
		// name, and the next start settles the pair (settleMoves).
		if mv.src.fs.Rename(delPath, srcPath) == nil {
			m.reopenSource(e)
		}
		return fmt.Errorf("move %s: fsync %s: %w", mv.tp, mv.src.path, err)
	}
	if err := m.hook(mv, StepSourceRenamed); err != nil {
		return err
	}
	dstPath := filepath.Join(mv.dst.path, mv.tp.String())
	if err := mv.dst.fs.Rename(mv.futurePath(), dstPath); err != nil {
		if mv.src.fs.Rename(delPath, srcPath) == nil {
			m.discardFuture(mv)
			m.reopenSource(e)
		}
		return fmt.Errorf("move %s: %w", mv.tp, err)
	}
	synced := mv.dst.fs.SyncDir(mv.dst.path)
	if err := m.hook(mv, StepFutureRenamed); err != nil {
		return err
	}
	m.publishMoved(mv, e, synced)
	if err := m.hook(mv, StepSwapped); err != nil {
		return err
	}
	m.removeLater(delPath)
	return nil
}

// publishMoved opens the moved log in the destination and hands it to
// the layer above; the source's checkpoints then forget the partition.
// A destination that failed meanwhile gets the partition as one of its
// offline ones: the probe reopens it.
func (m *Manager) publishMoved(mv *move, e *entry, synced error) {
	fut := mv.future.Load()
	managed := &segment.ManagedState{CleanShutdown: true, RecoveryPoint: fut.EndOffset(), LogStartOffset: fut.StartOffset()}
	var ne *entry
	err := synced
	if err == nil {
		ne, err = m.openLog(mv.dst, mv.tp, managed, -1)
	}
	if err != nil {
		mv.dst.fail(err)
		m.setOffline(mv.dst, e, fut.EndOffset(), fut.StartOffset())
		m.cfg.Logger.Error("a moved partition's log did not open; it waits for its log dir's probe",
			"partition", mv.tp, "dir", mv.dst.path, "err", err)
		return
	}
	ne.TopicID = e.TopicID
	m.publish(func(lm logMap) { lm[mv.tp] = ne })
	m.handOver(ne.PartitionLog)
	if !mv.src.isOffline() {
		if err := m.writeDirCheckpoints(mv.src); err != nil {
			m.cfg.Logger.Warn("rewriting the checkpoints of a moved partition's source dir", "dir", mv.src.path, "err", err)
		}
		m.forgetCleanerCheckpoint(mv)
	}
}

// reopenSource reopens the current log where it was after a move that
// did not complete, and hands it back to the layer above. If it cannot
// be opened, the source dir is failed and the partition waits for its
// probe.
func (m *Manager) reopenSource(e *entry) {
	d := e.dir
	managed := &segment.ManagedState{RecoveryPoint: e.Log.RecoveryPoint(), LogStartOffset: e.Log.StartOffset()}
	var ne *entry
	err := d.offlineErr()
	if !d.isOffline() {
		ne, err = m.openLog(d, e.TP, managed, -1)
	}
	if err != nil {
		d.fail(err)
		m.setOffline(d, e, e.Log.RecoveryPoint(), e.Log.StartOffset())
		return
	}
	ne.TopicID = e.TopicID
	m.publish(func(lm logMap) { lm[e.TP] = ne })
	m.handOver(ne.PartitionLog)
}

// setOffline records e's partition among d's offline ones, and tells
// the layer above.
func (m *Manager) setOffline(d *logDir, e *entry, recoveryPoint, start int64) {
	m.mu.Lock()
	d.offlineParts[e.TP] = offlinePart{id: e.TopicID, recoveryPoint: recoveryPoint, startOffset: start}
	m.mu.Unlock()
	if m.cfg.OnOffline != nil {
		m.cfg.OnOffline([]segment.TopicPartition{e.TP})
	}
	m.wakeProbe()
}

// handOver gives the layer above a partition's log after a move (or
// after a move gave up and reopened the current log).
func (m *Manager) handOver(pl PartitionLog) {
	switch {
	case m.cfg.OnMoved != nil:
		m.cfg.OnMoved(pl)
	case m.cfg.OnOnline != nil:
		m.cfg.OnOnline([]PartitionLog{pl})
	}
}

// removeLater removes a -delete dir in the background (and the next
// start removes what is left of it).
func (m *Manager) removeLater(path string) {
	m.done.Add(1)
	go func() {
		defer m.done.Done()
		if err := os.RemoveAll(path); err != nil {
			m.cfg.Logger.Warn("removing a moved partition's old dir", "dir", path, "err", err)
		}
	}()
}

// SetMoveHook is a testing knob: every move started afterwards calls f
// after each of its steps, on the move's goroutine, and stops there,
// leaving its files as a crash would, when f returns false. f may block
// to hold a move at a step. Nil removes the hook.
func (m *Manager) SetMoveHook(f func(tp segment.TopicPartition, step MoveStep) bool) {
	m.mu.Lock()
	m.mu.moveHook = f
	m.mu.Unlock()
}
