package index

import (
	"encoding/binary"
	"fmt"
	"math"
)

// TimeEntrySize is the size of a time index entry: timestamp (int64,
// big-endian), then relative offset (int32, big-endian). Part of the on-disk
// format.
const TimeEntrySize = 12

// NoTimestamp is Kafka's RecordBatch.NO_TIMESTAMP: the timestamp of the
// not-found value of TimeIndex.Lookup and of LastEntry on an empty index.
const NoTimestamp = -1

// TimestampOffset is a time index entry: a timestamp and an absolute offset.
// It means every record with a timestamp greater than Timestamp is at an
// offset after Offset.
type TimestampOffset struct {
	Timestamp int64
	Offset    int64
}

// TimeIndex maps timestamps to offsets in a segment (Kafka's TimeIndex, file
// <baseOffset>.timeindex). See doc.go for the format and the concurrency
// contract.
type TimeIndex struct {
	mappedIndex
}

// OpenTimeIndex opens the time index at path, or creates it preallocated to
// roundDown(maxIndexSize, TimeEntrySize) bytes. An existing file is taken as
// Kafka takes it: every whole entry in it is assumed valid. Call SanityCheck
// to find out whether it can be trusted.
func OpenTimeIndex(path string, baseOffset int64, maxIndexSize int) (*TimeIndex, error) {
	ix := &TimeIndex{}
	if err := ix.open(path, baseOffset, maxIndexSize, TimeEntrySize, 8, "time index"); err != nil {
		return nil, err
	}
	return ix, nil
}

// MaybeAppend appends (timestamp, offset) if timestamp is greater than the
// last entry's timestamp and does nothing otherwise (Kafka:
// TimeIndex.maybeAppend). Unless skipFullCheck, an index that IsFull returns
// ErrIndexFull; the segment passes skipFullCheck only for the final entry it
// writes on roll or close, which uses the reserved last slot. On a non-empty
// index, an offset below the last entry's is ErrInvalidOffset and a timestamp
// below the last entry's is ErrInvalidTimestamp. An offset outside
// [BaseOffset(), BaseOffset()+MaxInt32] is ErrInvalidOffset.
func (ix *TimeIndex) MaybeAppend(timestamp, offset int64, skipFullCheck bool) error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	if err := ix.writable("append"); err != nil {
		return err
	}
	mm, n := ix.view()
	if !skipFullCheck && ix.IsFull() {
		return ix.errorf("append timestamp %d: %d of %d entries used, last reserved: %w", timestamp, n, ix.capacity.Load(), ErrIndexFull)
	}
	last := ix.last(mm, n)
	if err := ix.checkOrder(n, last, timestamp, offset); err != nil {
		return err
	}
	if timestamp <= last.Timestamp {
		return nil // Kafka: same as the last entry (roll, close) or no timestamp
	}
	return ix.appendAt(n, timestamp, offset)
}

// checkOrder rejects an entry that goes backwards. REQUIRES: wmu held.
func (ix *TimeIndex) checkOrder(n int, last TimestampOffset, timestamp, offset int64) error {
	if n > 0 && offset < last.Offset {
		return ix.errorf("append offset %d at slot %d: below the last offset %d: %w", offset, n, last.Offset, ErrInvalidOffset)
	}
	if n > 0 && timestamp < last.Timestamp {
		return ix.errorf("append timestamp %d at slot %d: below the last timestamp %d: %w", timestamp, n, last.Timestamp, ErrInvalidTimestamp)
	}
	return nil
}

// appendAt writes the entry into slot n and publishes it. REQUIRES: wmu held.
func (ix *TimeIndex) appendAt(n int, timestamp, offset int64) error {
	if int64(n) >= ix.capacity.Load() {
		return ix.errorf("append timestamp %d: all %d slots used: %w", timestamp, n, ErrIndexFull)
	}
	rel := offset - ix.baseOffset
	if rel < 0 || rel > math.MaxInt32 {
		return ix.errorf("append offset %d: outside [%d, %d]: %w",
			offset, ix.baseOffset, ix.baseOffset+math.MaxInt32, ErrInvalidOffset)
	}
	if err := ix.ensureMapped(n + 1); err != nil {
		return err
	}
	p := ix.mu.mm[n*TimeEntrySize:]
	binary.BigEndian.PutUint64(p, uint64(timestamp))
	binary.BigEndian.PutUint32(p[8:], uint32(rel))
	ix.publish(n + 1)
	return nil
}

// Lookup returns the entry with the largest timestamp <= timestamp, or
// {NoTimestamp, BaseOffset()} when there is none (Kafka: TimeIndex.lookup).
// To find the first record with a timestamp >= T, the segment looks up T,
// floors the returned offset in the offset index and scans forward.
func (ix *TimeIndex) Lookup(timestamp int64) TimestampOffset {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	mm, n := ix.view()
	slot := floorSlot(ix.timestamps(mm), n, warmEntries(TimeEntrySize), timestamp)
	if slot < 0 {
		return TimestampOffset{Timestamp: NoTimestamp, Offset: ix.baseOffset}
	}
	return ix.entryAt(mm, slot)
}

// Entry returns entry i. It panics if i is outside [0, Entries()).
func (ix *TimeIndex) Entry(i int) TimestampOffset {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	mm, n := ix.view()
	if i < 0 || i >= n {
		panic(fmt.Sprintf("index: entry %d out of range [0, %d) in time index %s", i, n, ix.mu.path))
	}
	return ix.entryAt(mm, i)
}

// LastEntry returns the last entry, or {NoTimestamp, BaseOffset()} when the
// index is empty.
func (ix *TimeIndex) LastEntry() TimestampOffset {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	mm, n := ix.view()
	return ix.last(mm, n)
}

// IsFull reports whether only the slot reserved for the roll entry is left
// (Kafka: entries >= maxEntries - 1).
func (ix *TimeIndex) IsFull() bool { return ix.entries.Load() >= ix.capacity.Load()-1 }

// SanityCheck verifies the whole index against a log whose last offset is
// lastOffsetInLog: the file size found at open is a multiple of
// TimeEntrySize; timestamps are strictly increasing; offsets are
// non-decreasing, >= BaseOffset() and <= lastOffsetInLog. A failure is a
// *CorruptIndexError; the segment should then rebuild the index.
//
// Kafka's sanityCheck tests only the size, first-versus-last timestamp and
// last offset. Timestamps are checked strictly because MaybeAppend never
// writes an equal one, so a run of equal timestamps (above all, a
// preallocated file of zeros left by a crash) cannot be a real index.
func (ix *TimeIndex) SanityCheck(lastOffsetInLog int64) error {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.mu.closed {
		return ix.errorf("sanity check: %w", ErrClosed)
	}
	if ix.mu.oddSize != 0 {
		return ix.corrupt("found %d bytes, which is not a multiple of %d", ix.mu.oddSize, TimeEntrySize)
	}
	mm, n := ix.view()
	for i := range n {
		if err := ix.checkEntry(mm, i, lastOffsetInLog); err != nil {
			return err
		}
	}
	return nil
}

// checkEntry validates entry i against its predecessor. REQUIRES: mu held.
func (ix *TimeIndex) checkEntry(mm []byte, i int, lastOffsetInLog int64) error {
	e := ix.entryAt(mm, i)
	switch {
	case e.Offset < ix.baseOffset:
		return ix.corrupt("entry %d: offset %d below the base offset %d", i, e.Offset, ix.baseOffset)
	case e.Offset > lastOffsetInLog:
		return ix.corrupt("entry %d: offset %d past the last offset in the log %d", i, e.Offset, lastOffsetInLog)
	case i == 0:
		return nil
	}
	prev := ix.entryAt(mm, i-1)
	switch {
	case e.Timestamp <= prev.Timestamp:
		return ix.corrupt("entry %d: timestamp %d not above the previous timestamp %d", i, e.Timestamp, prev.Timestamp)
	case e.Offset < prev.Offset:
		return ix.corrupt("entry %d: offset %d below the previous offset %d", i, e.Offset, prev.Offset)
	}
	return nil
}

// last returns entry n-1 or the empty-index value.
func (ix *TimeIndex) last(mm []byte, n int) TimestampOffset {
	if n == 0 {
		return TimestampOffset{Timestamp: NoTimestamp, Offset: ix.baseOffset}
	}
	return ix.entryAt(mm, n-1)
}

// entryAt decodes entry i of mm; the relative offset is read as a signed
// 32-bit integer, as Kafka reads it.
func (ix *TimeIndex) entryAt(mm []byte, i int) TimestampOffset {
	p := mm[i*TimeEntrySize : (i+1)*TimeEntrySize]
	return TimestampOffset{
		Timestamp: int64(binary.BigEndian.Uint64(p)),
		Offset:    ix.baseOffset + int64(int32(binary.BigEndian.Uint32(p[8:]))),
	}
}

func (ix *TimeIndex) timestamps(mm []byte) keyColumn {
	return keyColumn{buf: mm, stride: TimeEntrySize, wide: true}
}

func (ix *TimeIndex) offsets(mm []byte) keyColumn { return ix.offsetColumn(mm) }
