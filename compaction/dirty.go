package compaction

import (
	"math"
	"time"

	"github.com/varve/varve/segment"
)

// logToClean is Kafka's LogToClean: one log's cleanable range, read from
// a snapshot of its segments, and how dirty it is.
type logToClean struct {
	log  *segment.Log
	segs []segment.SegmentInfo // oldest first; the last is the active segment

	// firstDirty is where the offset map starts: the checkpointed first
	// dirty offset, or the log start offset when there is none or it is
	// out of [log start, log end] (LogCleanerManager.cleanableOffsets).
	firstDirty int64
	// firstUncleanable is where cleaning stops: the smallest of the
	// active segment's base, the base of the segment holding the upper
	// bound or the last stable offset, and the base of the first dirty segment newer than
	// min.compaction.lag.ms. Always a segment base.
	firstUncleanable int64

	cleanBytes     int64 // segments before firstDirty
	cleanableBytes int64 // segments in [firstDirty, firstUncleanable)
	needNow        bool  // max.compaction.lag.ms has passed for a dirty segment
}

// examine computes l's cleanable range at now, staying below upperBound.
func examine(l *segment.Log, t TopicConfig, upperBound int64, now time.Time) logToClean {
	c := logToClean{log: l}
	start, end := l.StartOffset(), l.EndOffset()
	c.segs = l.Segments()
	c.firstDirty = start
	if off, ok := readFirstDirty(l); ok && off >= start && off <= end {
		c.firstDirty = off
	}
	nowMs := now.UnixMilli()
	// Kafka: never clean past the last stable offset (ongoing transactions).
	c.firstUncleanable = firstUncleanable(c.segs, c.firstDirty, l.LastStableOffset(min(upperBound, end)), nowMs, t.MinCompactionLag)
	c.cleanBytes, c.cleanableBytes = c.bytes()
	c.needNow = c.compactionDelay(nowMs, t.MaxCompactionLag) > 0 && c.cleanableBytes > 0
	return c
}

// firstUncleanable is LogCleanerManager.cleanableOffsets'
// firstUncleanableDirtyOffset, rounded down to a segment base.
func firstUncleanable(segs []segment.SegmentInfo, firstDirty, upperBound, nowMs int64, minLag time.Duration) int64 {
	active := segs[len(segs)-1]
	fu := active.BaseOffset
	for _, s := range segs[:len(segs)-1] {
		if s.NextOffset > upperBound {
			fu = min(fu, s.BaseOffset)
			break
		}
	}
	if minLag > 0 {
		from := floorIndex(segs, firstDirty)
		for _, s := range segs[from : len(segs)-1] {
			// Kafka: s.largestTimestamp > now - minCompactionLagMs.
			if s.LargestTimestamp > nowMs-minLag.Milliseconds() {
				fu = min(fu, s.BaseOffset)
				break
			}
		}
	}
	return fu
}

// floorIndex is the index of the segment holding offset: the last whose
// base is at most offset, or 0.
func floorIndex(segs []segment.SegmentInfo, offset int64) int {
	i := 0
	for j, s := range segs {
		if s.BaseOffset > offset {
			break
		}
		i = j
	}
	return i
}

// bytes sums the clean and the cleanable segments' sizes as
// LogToClean does: clean = segments starting below firstDirty,
// cleanable = segments from the one holding firstDirty up to
// firstUncleanable.
func (c logToClean) bytes() (clean, cleanable int64) {
	from := floorIndex(c.segs, c.firstDirty)
	for i, s := range c.segs {
		if s.BaseOffset < c.firstDirty {
			clean += s.Size
		}
		if i >= from && s.BaseOffset < c.firstUncleanable && c.firstDirty < c.firstUncleanable {
			cleanable += s.Size
		}
	}
	return clean, cleanable
}

// compactionDelay is LogCleanerManager.maxCompactionDelay: how long past
// max.compaction.lag.ms the earliest first-batch timestamp of the dirty,
// sealed segments is, in milliseconds; 0 when it is not.
func (c logToClean) compactionDelay(nowMs int64, maxLag time.Duration) int64 {
	earliest := int64(math.MaxInt64)
	for _, s := range c.segs[floorIndex(c.segs, c.firstDirty) : len(c.segs)-1] {
		if s.FirstTimestamp > 0 {
			earliest = min(earliest, s.FirstTimestamp)
		}
	}
	cleanUntil := nowMs - maxLag.Milliseconds()
	if earliest < cleanUntil {
		return cleanUntil - earliest
	}
	return 0
}

// ratio is cleanable / (clean + cleanable), Kafka's cleanableRatio.
func (c logToClean) ratio() float64 {
	total := c.cleanBytes + c.cleanableBytes
	if total == 0 {
		return 0
	}
	return float64(c.cleanableBytes) / float64(total)
}

// eligible says whether the Cleaner should clean the log now
// (grabFilthiestCompactedLog): forced by max.compaction.lag.ms with
// cleanable bytes, or dirtier than min.cleanable.dirty.ratio.
func (c logToClean) eligible(minRatio float64) bool {
	return c.needNow || c.cleanableBytes > 0 && c.ratio() > minRatio
}
