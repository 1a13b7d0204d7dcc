package segment

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/varve/varve/record"
)

// A CleanedSegment is a segment a cleaner writes beside the live ones:
// <base>.log.cleaned with its indexes. It becomes live only through
// Log.ReplaceSegments.
type CleanedSegment struct {
	s *Segment
	// rangeEnd is the base offset of a trailing empty batch written by
	// AppendRangeEnd, or -1.
	rangeEnd int64
}

// NewCleanedSegment starts a cleaned segment at base. Its batches must
// come in offset order, each carrying its final offsets.
func (l *Log) NewCleanedSegment(base int64) (*CleanedSegment, error) {
	s, err := createSegment(l.dir, base, &l.cfg, CleanedSuffix)
	if err != nil {
		return nil, err
	}
	return &CleanedSegment{s: s, rangeEnd: -1}, nil
}

// AppendRangeEnd appends b, an empty batch (no records) that is the last
// batch of the segments being replaced, kept only so that the cleaned
// segments end where the replaced ones do while the swap is in flight:
// Open completes an interrupted swap by deleting the old segments below
// the last *.swap segment's next offset. Once ReplaceSegments has swapped
// the segments in, it removes this batch, so the log holds what Kafka's
// cleaner writes (MemoryRecords.filterTo keeps an emptied batch only for
// its producer's state), and a consumer is not served a segment made of
// nothing but an empty batch (librdkafka 2.0 doubles its fetch size on
// each such response and gives up past 1 GiB). Nothing may follow it.
func (c *CleanedSegment) AppendRangeEnd(b []byte) error {
	h, err := record.ParseHeader(b)
	if err != nil || h.RecordCount != 0 || h.IsControl() {
		return fmt.Errorf("cleaned segment %s: range end at %d is not an empty data batch: %w", FilenamePrefix(c.s.base), h.BaseOffset, err)
	}
	if err := c.Append(b); err != nil {
		return err
	}
	c.rangeEnd = h.BaseOffset
	return nil
}

// dropRangeEnd removes the batch AppendRangeEnd wrote, after the swap.
// A crash before this leaves it in the live segment: an empty batch that
// readers skip over, as they do any other. REQUIRES the log's writer lock.
func (c *CleanedSegment) dropRangeEnd() error {
	if c.rangeEnd < 0 {
		return nil
	}
	if _, err := c.s.truncateTo(c.rangeEnd); err != nil {
		return fmt.Errorf("cleaned segment %s: drop range end at %d: %w", FilenamePrefix(c.s.base), c.rangeEnd, err)
	}
	c.rangeEnd = -1
	// The batch may have held the largest timestamp, whose time-index
	// entry went with it: seal again for the entry of the new largest.
	if err := c.s.files().times.Resize(c.s.cfg.SegmentIndexBytes); err != nil {
		return fmt.Errorf("cleaned segment %s: %w", FilenamePrefix(c.s.base), err)
	}
	if err := c.s.seal(); err != nil {
		return err
	}
	return c.s.flush()
}

// Append writes whole, valid batches that already carry their offsets.
func (c *CleanedSegment) Append(b []byte) error {
	for p := 0; p < len(b); {
		h, n, err := record.NextBatch(b[p:], len(b)-p)
		if err != nil {
			return fmt.Errorf("cleaned segment %s: %w", FilenamePrefix(c.s.base), err)
		}
		if c.rangeEnd >= 0 || h.BaseOffset < c.s.NextOffset() {
			return fmt.Errorf("cleaned segment %s: %w: batch at %d after %d", FilenamePrefix(c.s.base), ErrNonContiguous, h.BaseOffset, c.s.NextOffset())
		}
		if err := c.s.append(b[p:p+n], h); err != nil {
			return err
		}
		p += n
	}
	return nil
}

// AppendAbortedTxn adds an entry to the cleaned segment's transaction
// index (a cleaner keeps the entries of the aborted transactions whose
// markers it keeps). Entries must come in marker order.
func (c *CleanedSegment) AppendAbortedTxn(a AbortedTxn) error { return c.s.appendAbortedTxn(a) }

// Size is the number of bytes written so far.
func (c *CleanedSegment) Size() int64 { return c.s.Size() }

// BaseOffset is the cleaned segment's base offset.
func (c *CleanedSegment) BaseOffset() int64 { return c.s.base }

// IndexFull says whether another index entry may not fit: the cleaner
// then starts a new group.
func (c *CleanedSegment) IndexFull() bool { return c.s.indexFull() }

// Abort closes and deletes the cleaned segment.
func (c *CleanedSegment) Abort() error { return c.s.remove() }

// ReplaceSegments swaps cleaned segments in for the live segments whose
// base offsets are olds, crash-safely, as Kafka's replaceSegments does:
//
//  1. fsync and seal the cleaned segments;
//  2. rename each *.cleaned file to *.swap, highest offset first, and
//     fsync the directory;
//  3. rename the old segments' files to *.deleted (deleted after
//     file.delete.delay.ms; reads in progress keep their files);
//  4. rename each *.swap file to its live name and fsync the directory;
//  5. delete the producer state snapshots at the old segments' base
//     offsets that no cleaned segment starts at (Kafka's
//     deleteProducerSnapshots; one a crash leaves behind still holds
//     the right producer state for its offset).
//
// A crash at any point leaves, after Open, either the old segments or the
// new ones (see completeSwaps), never a mix and never neither. The old
// segments must be contiguous, sealed (not the active segment) and cover
// every offset of the cleaned ones.
func (l *Log) ReplaceSegments(cleaned []*CleanedSegment, olds []int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritable(); err != nil {
		return err
	}
	segs := l.segments()
	first, err := l.findContiguous(segs, olds)
	if err != nil {
		return err
	}
	for _, c := range cleaned {
		if err := c.s.flush(); err != nil {
			return err
		}
		if err := c.s.seal(); err != nil {
			return err
		}
		l.setModTime(c.s, segs[first+len(olds)-1])
	}
	if err := l.swap(cleaned, segs[first:first+len(olds)]); err != nil {
		return l.fail(err)
	}
	var dropErr error
	for _, c := range cleaned { // before readers can see them
		if dropErr == nil && c.rangeEnd >= 0 {
			dropErr = c.dropRangeEnd()
			l.setModTime(c.s, segs[first+len(olds)-1]) // the truncation touched it
		}
	}
	next := make([]*Segment, 0, len(segs)-len(olds)+len(cleaned))
	next = append(next, segs[:first]...)
	for _, c := range cleaned {
		next = append(next, c.s)
	}
	l.setSegments(append(next, segs[first+len(olds):]...))
	// Only now, with readers pointed at the new segments, may the old
	// files start their file.delete.delay.ms countdown.
	for _, s := range segs[first : first+len(olds)] {
		l.deleteLater(s)
	}
	l.deleteSegmentSnapshots(replacedOnly(segs[first:first+len(olds)], cleaned))
	for _, c := range cleaned {
		c.s.unpin() // fsynced and sealed above: the file cache may close it
	}
	if dropErr != nil {
		// The swap is done and published; the segment's tail may not be.
		return l.fail(dropErr)
	}
	return nil
}

// replacedOnly lists the old segments whose base offset no cleaned
// segment takes: Kafka (UnifiedLog.replaceSegments) deletes the producer
// state snapshots at those offsets, and keeps the others.
func replacedOnly(olds []*Segment, cleaned []*CleanedSegment) []SegmentInfo {
	bases := make(map[int64]bool, len(cleaned))
	for _, c := range cleaned {
		bases[c.s.base] = true
	}
	var gone []SegmentInfo
	for _, s := range olds {
		if !bases[s.base] {
			gone = append(gone, SegmentInfo{BaseOffset: s.base})
		}
	}
	return gone
}

// findContiguous returns the position of olds in segs, checking they
// are contiguous and sealed. REQUIRES mu.
func (l *Log) findContiguous(segs []*Segment, olds []int64) (int, error) {
	if len(olds) == 0 {
		return 0, fmt.Errorf("%s: replace segments: no segment to replace", l.dir)
	}
	first := sort.Search(len(segs), func(i int) bool { return segs[i].base >= olds[0] })
	if first+len(olds) >= len(segs) {
		return 0, fmt.Errorf("%s: replace segments: %v includes the active segment or is missing", l.dir, olds)
	}
	for i, b := range olds {
		if segs[first+i].base != b {
			return 0, fmt.Errorf("%s: replace segments: %d is not a live segment in order", l.dir, b)
		}
	}
	return first, nil
}

// setModTime gives the cleaned output the mtime of the newest segment it
// replaces, as Kafka does, so that time retention treats it the same.
func (l *Log) setModTime(c, last *Segment) {
	if fi, err := os.Stat(last.Path()); err == nil {
		_ = os.Chtimes(c.Path(), fi.ModTime(), fi.ModTime())
	}
}

// swap is steps 2 to 4 of ReplaceSegments. REQUIRES mu.
func (l *Log) swap(cleaned []*CleanedSegment, olds []*Segment) error {
	for i := len(cleaned) - 1; i >= 0; i-- {
		if err := cleaned[i].s.renameTo(SwapSuffix); err != nil {
			return err
		}
	}
	if err := l.cfg.FS.SyncDir(l.dir); err != nil {
		return ioErr("fsync dir", l.dir, err)
	}
	for _, s := range olds {
		if err := s.renameTo(DeletedSuffix); err != nil {
			return err
		}
	}
	for _, c := range cleaned {
		if err := c.s.renameTo(""); err != nil {
			return err
		}
	}
	return ioErr("fsync dir", l.dir, l.cfg.FS.SyncDir(l.dir))
}

// completeSwaps finishes, at Open, a ReplaceSegments that a crash
// interrupted (Kafka's LogLoader): a *.swap at or above the lowest
// *.cleaned base belongs to a swap whose step 2 had not finished and is
// deleted (the old segments are still all there); otherwise the swap
// finished step 2, so the old segments it covers are deleted and each
// *.swap takes its live name.
func (l *Log) completeSwaps(swaps []int64, minCleaned int64, logs map[int64]bool) error {
	sort.Slice(swaps, func(i, j int) bool { return swaps[i] < swaps[j] })
	var live []int64
	for _, base := range swaps {
		if base >= minCleaned {
			if err := l.removeFiles(base, SwapSuffix); err != nil {
				return err
			}
			continue
		}
		live = append(live, base)
	}
	if len(live) == 0 {
		return nil
	}
	end, err := l.swapEnd(live[len(live)-1])
	if err != nil {
		return err
	}
	for base := range logs {
		if base >= live[0] && base < end {
			if err := l.removeFiles(base, ""); err != nil {
				return err
			}
			delete(logs, base)
		}
	}
	for _, base := range live {
		for _, suf := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix} {
			p := filepath.Join(l.dir, FilenamePrefix(base)+suf)
			if err := l.cfg.FS.Rename(p+SwapSuffix, p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return ioErr("rename swap", p, err)
			}
		}
		txn := filepath.Join(l.dir, FilenamePrefix(base)+TxnIndexSuffix)
		if err := os.Rename(txn+SwapSuffix, txn); err != nil && !errors.Is(err, os.ErrNotExist) {
			return ioErr("rename swap", txn, err)
		}
		logs[base] = true
	}
	l.cfg.Logger.Info("completed an interrupted segment swap", "dir", l.dir, "segments", len(live))
	return ioErr("fsync dir", l.dir, l.cfg.FS.SyncDir(l.dir))
}

// swapEnd reads the offset after the last batch of a *.swap segment.
func (l *Log) swapEnd(base int64) (int64, error) {
	s := l.coldSegment(base, SwapSuffix)
	defer s.close()
	if err := l.pinForLoad(s); err != nil {
		return 0, err
	}
	if _, err := s.recover(); err != nil {
		return 0, err
	}
	return s.NextOffset(), nil
}

// removeFiles deletes a segment's three files with the given suffix.
func (l *Log) removeFiles(base int64, suffix string) error {
	for _, suf := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix} {
		p := filepath.Join(l.dir, FilenamePrefix(base)+suf+suffix)
		if err := l.cfg.FS.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return ioErr("remove", p, err)
		}
	}
	txn := filepath.Join(l.dir, FilenamePrefix(base)+TxnIndexSuffix+suffix)
	if err := os.Remove(txn); err != nil && !errors.Is(err, os.ErrNotExist) {
		return ioErr("remove", txn, err)
	}
	return nil
}
