package index

import (
	"encoding/binary"
	"fmt"
	"math"
)

// OffsetEntrySize is the size of an offset index entry: relative offset
// (int32, big-endian), then position (int32, big-endian). Part of the on-disk
// format.
const OffsetEntrySize = 8

// OffsetPosition is an offset index entry: an absolute offset and the byte
// position in the .log file of the batch(es) it was recorded for.
type OffsetPosition struct {
	Offset   int64
	Position int64
}

// OffsetIndex maps offsets to byte positions in a segment's .log file
// (Kafka's OffsetIndex, file <baseOffset>.index). See doc.go for the format
// and the concurrency contract.
type OffsetIndex struct {
	mappedIndex
}

// OpenOffsetIndex opens the offset index at path, or creates it preallocated
// to roundDown(maxIndexSize, OffsetEntrySize) bytes. An existing file is taken
// as Kafka takes it: every whole entry in it is assumed valid. Call
// SanityCheck to find out whether it can be trusted.
func OpenOffsetIndex(path string, baseOffset int64, maxIndexSize int) (*OffsetIndex, error) {
	ix := &OffsetIndex{}
	if err := ix.open(path, baseOffset, maxIndexSize, OffsetEntrySize, 0, "offset index"); err != nil {
		return nil, err
	}
	return ix, nil
}

// Append adds the entry (offset, position). offset must be above the last
// entry's offset and within [BaseOffset(), BaseOffset()+MaxInt32]
// (ErrInvalidOffset); position must be in [0, MaxInt32] and above the last
// entry's position (ErrInvalidPosition). A full index returns ErrIndexFull:
// the caller must roll the segment.
//
// Kafka: OffsetIndex.append. Kafka checks the offset only; the position check
// is ours, and holds for every index Kafka writes.
func (ix *OffsetIndex) Append(offset, position int64) error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	if err := ix.writable("append"); err != nil {
		return err
	}
	mm, n := ix.view()
	if int64(n) >= ix.capacity.Load() {
		return ix.errorf("append offset %d: %d of %d entries used: %w", offset, n, ix.capacity.Load(), ErrIndexFull)
	}
	rel, err := ix.checkAppend(mm, n, offset, position)
	if err != nil {
		return err
	}
	if err := ix.ensureMapped(n + 1); err != nil {
		return err
	}
	p := ix.mu.mm[n*OffsetEntrySize:]
	binary.BigEndian.PutUint32(p, uint32(rel))
	binary.BigEndian.PutUint32(p[4:], uint32(position))
	ix.publish(n + 1)
	return nil
}

// checkAppend validates an append after n entries and returns the relative
// offset to store. REQUIRES: wmu held.
func (ix *OffsetIndex) checkAppend(mm []byte, n int, offset, position int64) (int32, error) {
	rel := offset - ix.baseOffset
	if rel < 0 || rel > math.MaxInt32 {
		return 0, ix.errorf("append offset %d: outside [%d, %d]: %w",
			offset, ix.baseOffset, ix.baseOffset+math.MaxInt32, ErrInvalidOffset)
	}
	if position < 0 || position > math.MaxInt32 {
		return 0, ix.errorf("append offset %d: position %d outside [0, %d]: %w", offset, position, math.MaxInt32, ErrInvalidPosition)
	}
	if n == 0 {
		return int32(rel), nil
	}
	last := ix.entryAt(mm, n-1)
	if offset <= last.Offset {
		return 0, ix.errorf("append offset %d at slot %d: not above the last offset %d: %w", offset, n, last.Offset, ErrInvalidOffset)
	}
	if position <= last.Position {
		return 0, ix.errorf("append offset %d at slot %d: position %d not above the last position %d: %w",
			offset, n, position, last.Position, ErrInvalidPosition)
	}
	return int32(rel), nil
}

// Lookup returns the entry with the largest offset <= offset, or
// {BaseOffset(), 0} when there is none (Kafka: OffsetIndex.lookup). The
// segment then scans the log forward from the returned position.
func (ix *OffsetIndex) Lookup(offset int64) OffsetPosition {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	mm, n := ix.view()
	slot := floorSlot(ix.offsets(mm), n, warmEntries(OffsetEntrySize), offset)
	if slot < 0 {
		return OffsetPosition{Offset: ix.baseOffset}
	}
	return ix.entryAt(mm, slot)
}

// FetchUpperBoundOffset returns the first entry whose position is at or past
// fetchOffset.Position+fetchSize: an offset guaranteed to lie outside a read
// of fetchSize bytes from fetchOffset (Kafka: fetchUpperBoundOffset). ok is
// false when no entry is that far.
func (ix *OffsetIndex) FetchUpperBoundOffset(fetchOffset OffsetPosition, fetchSize int) (e OffsetPosition, ok bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	mm, n := ix.view()
	slot := ceilSlot(ix.positions(mm), n, fetchOffset.Position+int64(fetchSize))
	if slot == n {
		return OffsetPosition{}, false
	}
	return ix.entryAt(mm, slot), true
}

// Entry returns entry i. It panics if i is outside [0, Entries()).
func (ix *OffsetIndex) Entry(i int) OffsetPosition {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	mm, n := ix.view()
	if i < 0 || i >= n {
		panic(fmt.Sprintf("index: entry %d out of range [0, %d) in offset index %s", i, n, ix.mu.path))
	}
	return ix.entryAt(mm, i)
}

// LastOffset returns the offset of the last entry, or BaseOffset() when the
// index is empty.
func (ix *OffsetIndex) LastOffset() int64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	mm, n := ix.view()
	if n == 0 {
		return ix.baseOffset
	}
	return ix.entryAt(mm, n-1).Offset
}

// IsFull reports whether no slot is left (Kafka: entries >= maxEntries).
func (ix *OffsetIndex) IsFull() bool { return ix.entries.Load() >= ix.capacity.Load() }

// SanityCheck verifies the whole index against a .log file of logSize bytes:
// the file size found at open is a multiple of OffsetEntrySize; offsets are
// >= BaseOffset() and strictly increasing; positions are >= 0, strictly
// increasing, and below logSize (an entry pointing at or past the end of the
// log is corrupt). A failure is a *CorruptIndexError; the segment should then
// rebuild the index from the log.
//
// Kafka's sanityCheck tests only the size and the last offset; this check
// reads every entry so that a preallocated file left by a crash (valid
// entries followed by zeros) is caught.
func (ix *OffsetIndex) SanityCheck(logSize int64) error {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.mu.closed {
		return ix.errorf("sanity check: %w", ErrClosed)
	}
	if ix.mu.oddSize != 0 {
		return ix.corrupt("found %d bytes, which is not a multiple of %d", ix.mu.oddSize, OffsetEntrySize)
	}
	mm, n := ix.view()
	prev := OffsetPosition{Offset: ix.baseOffset - 1, Position: -1}
	for i := range n {
		e := ix.entryAt(mm, i)
		if err := ix.checkEntry(i, e, prev, logSize); err != nil {
			return err
		}
		prev = e
	}
	return nil
}

// checkEntry validates entry i against its predecessor. REQUIRES: mu held.
func (ix *OffsetIndex) checkEntry(i int, e, prev OffsetPosition, logSize int64) error {
	switch {
	case e.Offset < ix.baseOffset:
		return ix.corrupt("entry %d: offset %d below the base offset %d", i, e.Offset, ix.baseOffset)
	case e.Offset <= prev.Offset:
		return ix.corrupt("entry %d: offset %d not above the previous offset %d", i, e.Offset, prev.Offset)
	case e.Position < 0:
		return ix.corrupt("entry %d: negative position %d", i, e.Position)
	case e.Position <= prev.Position:
		return ix.corrupt("entry %d: position %d not above the previous position %d", i, e.Position, prev.Position)
	case e.Position >= logSize:
		return ix.corrupt("entry %d: position %d at or past the end of the log (%d bytes)", i, e.Position, logSize)
	}
	return nil
}

// entryAt decodes entry i of mm. Both fields are read as signed 32-bit
// integers, as Kafka reads them.
func (ix *OffsetIndex) entryAt(mm []byte, i int) OffsetPosition {
	p := mm[i*OffsetEntrySize : (i+1)*OffsetEntrySize]
	return OffsetPosition{
		Offset:   ix.baseOffset + int64(int32(binary.BigEndian.Uint32(p))),
		Position: int64(int32(binary.BigEndian.Uint32(p[4:]))),
	}
}

func (ix *OffsetIndex) offsets(mm []byte) keyColumn { return ix.offsetColumn(mm) }

func (ix *OffsetIndex) positions(mm []byte) keyColumn {
	return keyColumn{buf: mm, stride: OffsetEntrySize, off: 4}
}
