package compaction

import (
	"math"

	"github.com/varve/varve/segment"
)

// toRewrite returns the segments a pass rewrites: every sealed segment
// with offsets below endOffset, except those wholly below the log start
// offset (unreadable, and about to be deleted by the log-start-offset
// retention rule, so rewriting them would be wasted work).
func toRewrite(segs []segment.SegmentInfo, startOffset, endOffset int64) []segment.SegmentInfo {
	var out []segment.SegmentInfo
	for _, s := range segs[:len(segs)-1] {
		if s.BaseOffset >= endOffset {
			break
		}
		if s.NextOffset > startOffset {
			out = append(out, s)
		}
	}
	return out
}

// groupSegments is Kafka's Cleaner.groupSegmentsBySize: consecutive
// segments are merged into one group while the group's total size stays
// within maxBytes (segment.bytes) and its offsets within 2^31-1 of the
// group's base, so that segments do not shrink forever as they are
// cleaned. Each group becomes one cleaned segment, or more if the
// output's index fills (see output.append), so Kafka's index-size bound
// on groups is not needed.
func groupSegments(segs []segment.SegmentInfo, maxBytes int64) [][]segment.SegmentInfo {
	var groups [][]segment.SegmentInfo
	for len(segs) > 0 {
		n, size := 1, segs[0].Size
		for n < len(segs) &&
			size+segs[n].Size <= maxBytes &&
			segs[n].NextOffset-1-segs[0].BaseOffset <= math.MaxInt32 {
			size += segs[n].Size
			n++
		}
		groups = append(groups, segs[:n:n])
		segs = segs[n:]
	}
	return groups
}

// lastNonEmpty is the index of the group's last segment holding bytes,
// whose last batch always stays; -1 if none does.
func lastNonEmpty(group []segment.SegmentInfo) int {
	for i := len(group) - 1; i >= 0; i-- {
		if group[i].Size > 0 {
			return i
		}
	}
	return -1
}

// stillLive reports whether group, listed from an earlier snapshot, is
// still a run of consecutive live segments in now, none of them active.
func stillLive(now []segment.SegmentInfo, group []segment.SegmentInfo) bool {
	for i, s := range now {
		if s.BaseOffset != group[0].BaseOffset {
			continue
		}
		if i+len(group) >= len(now) {
			return false
		}
		for j, g := range group {
			if now[i+j].BaseOffset != g.BaseOffset {
				return false
			}
		}
		return true
	}
	return false
}
