package compaction

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// output writes one group's cleaned segments (<base>.log.cleaned and its
// indexes) and swaps them in for the group.
type output struct {
	p    *pass
	base int64 // base of the first cleaned segment: the group's first base
	segs []*segment.CleanedSegment
}

// append writes one batch, starting a new cleaned segment when the
// current one would pass segment.bytes, its index is full, or the batch's
// offsets would not fit 32 bits relative to its base. rangeEnd says the
// batch is an emptied one kept only to end the group.
func (o *output) append(h record.BatchHeader, b []byte, rangeEnd bool) error {
	cur := o.current()
	if cur == nil || o.full(cur, h, len(b)) {
		base := o.base
		if cur != nil {
			base = h.BaseOffset
		}
		c, err := o.p.c.log.NewCleanedSegment(base)
		if err != nil {
			return fmt.Errorf("%s: new cleaned segment %d: %w", o.p.c.log.Dir(), base, err)
		}
		o.segs = append(o.segs, c)
		cur = c
	}
	write := cur.Append
	if rangeEnd {
		write = cur.AppendRangeEnd
	}
	if err := write(b); err != nil {
		return fmt.Errorf("%s: write cleaned segment %d: %w", o.p.c.log.Dir(), cur.BaseOffset(), err)
	}
	o.p.w.th.maybeThrottle(o.p.ctx, len(b))
	o.p.stats.BatchesWritten++
	o.p.stats.BytesWritten += int64(len(b))
	return nil
}

func (o *output) current() *segment.CleanedSegment {
	if len(o.segs) == 0 {
		return nil
	}
	return o.segs[len(o.segs)-1]
}

func (o *output) full(c *segment.CleanedSegment, h record.BatchHeader, n int) bool {
	return c.Size() > 0 && (c.Size()+int64(n) > o.p.segmentBytes ||
		c.IndexFull() ||
		h.LastOffset()-c.BaseOffset() > math.MaxInt32)
}

// swap replaces the group with the cleaned segments (Log.ReplaceSegments:
// .cleaned -> .swap, old -> .deleted, .swap -> live, directory fsyncs).
// When the swap fails before it renamed anything, the cleaned files are
// deleted; after that, the log refuses writes and reopening it completes
// or discards the swap, so the files must stay.
func (o *output) swap(group []segment.SegmentInfo) error {
	l := o.p.c.log
	if len(o.segs) == 0 {
		return nil // cannot happen: a group's last batch always stays
	}
	olds := make([]int64, len(group))
	for i, s := range group {
		olds[i] = s.BaseOffset
	}
	err := l.ReplaceSegments(o.segs, olds)
	if err == nil {
		o.p.stats.SegmentsWritten += len(o.segs)
		return nil
	}
	if o.untouched() {
		o.abort()
	}
	if !stillLive(l.Segments(), group) {
		return fmt.Errorf("%s: swap segments %v: %w (%w)", l.Dir(), olds, ErrSegmentsChanged, err)
	}
	return fmt.Errorf("%s: swap segments %v: %w", l.Dir(), olds, err)
}

// untouched reports whether every cleaned segment still has its .cleaned
// name: the swap renames them all to .swap before anything else.
func (o *output) untouched() bool {
	for _, c := range o.segs {
		name := segment.FilenamePrefix(c.BaseOffset()) + segment.LogSuffix + segment.CleanedSuffix
		if _, err := os.Stat(filepath.Join(o.p.c.log.Dir(), name)); err != nil {
			return false
		}
	}
	return true
}

// abort deletes the cleaned segments.
func (o *output) abort() {
	for _, c := range o.segs {
		if err := c.Abort(); err != nil && !errors.Is(err, os.ErrNotExist) {
			o.p.w.cfg.Logger.Warn("could not delete a cleaned segment", "dir", o.p.c.log.Dir(), "base", c.BaseOffset(), "err", err)
		}
	}
	o.segs = nil
}
