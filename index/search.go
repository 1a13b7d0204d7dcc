package index

import "encoding/binary"

// warmSectionBytes is the size of the tail of an index that Kafka's
// cache-aware search looks in first (AbstractIndex.warmEntries). Kafka chose
// 8192 so that the warm section spans at most three 4 KiB pages, all of which
// every warm lookup touches, so they stay in the page cache.
const warmSectionBytes = 8192

// warmEntries is the number of entries in the warm section.
func warmEntries(entrySize int) int { return warmSectionBytes / entrySize }

// keyColumn reads one integer field of every entry of a mapped index as a
// search key. Narrow fields are signed 32-bit values to which base is added
// (relative offsets, positions); wide fields are signed 64-bit values
// (timestamps).
type keyColumn struct {
	buf    []byte // exactly the published entries
	stride int    // entry size
	off    int    // byte offset of the field inside an entry
	wide   bool   // int64 field rather than int32
	base   int64  // added to a narrow field
}

func (c keyColumn) at(i int) int64 {
	p := c.buf[i*c.stride+c.off:]
	if c.wide {
		return int64(binary.BigEndian.Uint64(p))
	}
	return c.base + int64(int32(binary.BigEndian.Uint32(p)))
}

// floorSlot returns the largest slot in [0, n) whose key is <= target, or -1
// if there is none. Keys must be non-decreasing for the answer to be the
// floor; on any other content it still returns a slot in [-1, n) and reads
// nothing outside the column.
//
// Kafka: AbstractIndex.indexSlotRangeFor(LARGEST_LOWER_BOUND). The warm
// section [n-1-warm, n) is tested first, so a tail lookup never reads the
// cold head.
func floorSlot(c keyColumn, n, warm int, target int64) int {
	if n == 0 {
		return -1
	}
	firstHot := max(0, n-1-warm)
	if c.at(firstHot) <= target {
		return floorIn(c, target, firstHot, n-1)
	}
	if c.at(0) > target {
		return -1
	}
	// c.at(0) <= target < c.at(firstHot), so firstHot > 0.
	return floorIn(c, target, 0, firstHot-1)
}

// floorIn is a binary search over [lo, hi] for the last key <= target.
// REQUIRES: c.at(lo) <= target.
func floorIn(c keyColumn, target int64, lo, hi int) int {
	for lo < hi {
		mid := int(uint(lo+hi+1) >> 1)
		if c.at(mid) <= target {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// ceilSlot returns the smallest slot in [0, n) whose key is >= target, or n if
// there is none. Keys must be non-decreasing.
func ceilSlot(c keyColumn, n int, target int64) int {
	lo, hi := 0, n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if c.at(mid) < target {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
