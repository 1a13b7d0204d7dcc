package segment

import (
	"errors"
	"fmt"
)

// TruncateTo removes every batch at or after offset, as a follower does
// after a leader change (Kafka: UnifiedLog.truncateTo). Truncation works
// on batch boundaries: a batch that holds offset is removed whole, and
// the log end offset becomes the end of the last batch kept. Truncating
// below the log start offset empties the log and restarts it at offset.
func (l *Log) TruncateTo(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritable(); err != nil {
		return err
	}
	if offset >= l.end.Load() {
		return nil
	}
	if offset < l.start.Load() {
		return l.truncateFullyLocked(offset)
	}
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	segs := l.segments()
	keep := floorSegment(segs, offset)
	s := segs[keep]
	if err := s.pin(); err != nil { // it becomes the active segment
		return l.fail(err)
	}
	if _, err := s.truncateTo(offset); err != nil {
		return l.fail(err)
	}
	if err := s.files().offsets.Resize(l.cfg.SegmentIndexBytes); err != nil {
		return l.fail(err)
	}
	if err := s.files().times.Resize(l.cfg.SegmentIndexBytes); err != nil {
		return l.fail(err)
	}
	l.setSegments(append([]*Segment(nil), segs[:keep+1]...))
	// After readers moved off them. A segment truncated away that keeps
	// its name would come back at the next recovery with the records the
	// truncation removed (divergent data, for a follower): the log stops.
	var renameErr error
	for _, gone := range segs[keep+1:] {
		renameErr = errors.Join(renameErr, l.scheduleDelete(gone))
	}
	if renameErr != nil {
		return l.fail(renameErr)
	}
	end := s.NextOffset()
	l.end.Store(end)
	if l.recoveryPoint.Load() > end {
		l.recoveryPoint.Store(end)
	}
	// Kafka: producer state is reloaded from a snapshot below the new end.
	if err := l.rebuildProducerState(end, false); err != nil {
		return l.fail(err)
	}
	return nil
}

// TruncateFullyAndStartAt removes every segment and restarts the log,
// empty, at offset (a follower whose leader's log starts past its own
// end). The log start offset, end offset and recovery point all become
// offset.
func (l *Log) TruncateFullyAndStartAt(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritable(); err != nil {
		return err
	}
	return l.truncateFullyLocked(offset)
}

// REQUIRES mu.
func (l *Log) truncateFullyLocked(offset int64) error {
	if offset < 0 {
		return fmt.Errorf("%s: %w: cannot restart at negative offset %d", l.dir, ErrOffsetOutOfRange, offset)
	}
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	old := l.segments()
	// Renamed first: the new segment may take one's name.
	for _, s := range old {
		if err := s.renameTo(DeletedSuffix); err != nil {
			// Kept under its name, it would come back at the next recovery.
			return l.fail(fmt.Errorf("rename removed segment %s: %w", s.Path(), err))
		}
	}
	s, err := createSegment(l.dir, offset, &l.cfg, "")
	if err != nil {
		return l.fail(err)
	}
	l.setSegments([]*Segment{s})
	for _, gone := range old {
		l.deleteLater(gone)
	}
	l.dirDirty.Store(true)
	l.start.Store(offset)
	l.end.Store(offset)
	l.recoveryPoint.Store(offset)
	if err := l.resetProducerState(offset); err != nil {
		return l.fail(err)
	}
	return l.checkpointStartLocked()
}

// checkpointStartLocked persists the log start offset when the log owns
// its checkpoints.
func (l *Log) checkpointStartLocked() error {
	if l.cfg.Managed != nil {
		return nil
	}
	return l.writeCheckpointFile(LogStartOffsetCheckpointFile, &l.start)
}

// SetStartOffset raises the log start offset (Kafka's DeleteRecords):
// offsets below it are no longer readable, and segments wholly below it
// become removable by DeleteSegmentsBefore. It never lowers the start
// offset and never raises it past the log end offset.
func (l *Log) SetStartOffset(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritable(); err != nil {
		return err
	}
	if offset > l.end.Load() {
		return fmt.Errorf("%s: %w: start offset %d past log end offset %d", l.dir, ErrOffsetOutOfRange, offset, l.end.Load())
	}
	if offset <= l.start.Load() {
		return nil
	}
	l.start.Store(offset)
	return l.checkpointStartLocked()
}

// DeleteSegmentsBefore removes every segment all of whose offsets are
// below offset, oldest first, and raises the log start offset to the
// base of the first segment kept. When that includes the active segment,
// a new empty active segment is rolled first (Kafka never leaves a log
// without one); an empty active segment is never removed. Removed
// segments' files are renamed *.deleted and deleted after
// file.delete.delay.ms. It returns what was removed.
func (l *Log) DeleteSegmentsBefore(offset int64) ([]SegmentInfo, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritable(); err != nil {
		return nil, err
	}
	segs := l.segments()
	n := 0
	for n < len(segs) && segs[n].NextOffset() <= offset && segs[n].Size() > 0 {
		n++
	}
	if n == 0 {
		return nil, nil
	}
	if n == len(segs) {
		if err := l.roll(l.end.Load()); err != nil {
			return nil, err
		}
		segs = l.segments()
	}
	removed := make([]SegmentInfo, n)
	for i, s := range segs[:n] {
		removed[i] = s.info(false)
	}
	l.setSegments(append([]*Segment(nil), segs[n:]...))
	l.start.Store(max(l.start.Load(), segs[n].base))
	for _, s := range segs[:n] { // after readers moved off them
		l.scheduleDelete(s) // were one to come back, the start offset hides it
	}
	l.deleteSegmentSnapshots(removed)
	return removed, l.checkpointStartLocked()
}
