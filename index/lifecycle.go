package index

import (
	"errors"
	"io/fs"
	"os"
)

// Entries returns the number of entries in the index.
func (ix *mappedIndex) Entries() int { return int(ix.entries.Load()) }

// MaxEntries returns the number of entries the index can hold before it is
// full (Kafka: maxEntries).
func (ix *mappedIndex) MaxEntries() int { return int(ix.capacity.Load()) }

// SizeBytes returns the bytes used by entries, Entries()*entrySize (Kafka:
// sizeInBytes), which is what the file is trimmed to.
func (ix *mappedIndex) SizeBytes() int64 { return ix.entries.Load() * int64(ix.entrySize) }

// BaseOffset returns the base offset of the segment the index belongs to.
func (ix *mappedIndex) BaseOffset() int64 { return ix.baseOffset }

// Path returns the current path of the index file.
func (ix *mappedIndex) Path() string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.mu.path
}

// TrimToValidSize shrinks the file and the mapping to Entries()*entrySize,
// deleting the preallocated tail, and makes the index full. The segment calls
// it when it stops being the active segment (Kafka: trimToValidSize, on roll
// and on close).
func (ix *mappedIndex) TrimToValidSize() error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	if err := ix.writable("trim"); err != nil {
		return err
	}
	return ix.resizeLocked(int(ix.SizeBytes()))
}

// Resize sets the file length and MaxEntries to roundDown(maxIndexSize,
// entrySize), but never below Entries()*entrySize: it drops no entries (use
// TruncateTo for that). The segment calls it to re-grow the active segment's
// indexes after loading (Kafka: resizeIndexes(maxIndexSize)).
func (ix *mappedIndex) Resize(maxIndexSize int) error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	if err := ix.writable("resize"); err != nil {
		return err
	}
	return ix.resizeLocked(maxIndexSize)
}

// Reset removes every entry and resizes the file to the max index size given
// at open, as Kafka's reset() does before a segment's indexes are rebuilt by
// recovery. It also clears a wrong-size report from SanityCheck: the content
// that follows is rebuilt.
func (ix *mappedIndex) Reset() error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	if err := ix.writable("reset"); err != nil {
		return err
	}
	ix.mu.Lock()
	ix.entries.Store(0)
	ix.mu.oddSize = 0
	ix.mu.Unlock()
	return ix.resizeLocked(ix.maxIndexSize)
}

// Flush writes the mapping's dirty pages to the file (msync; Kafka:
// mmap.force()). It may run concurrently with the writer and with lookups.
func (ix *mappedIndex) Flush() error {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.mu.closed {
		return ix.errorf("flush: %w", ErrClosed)
	}
	if ix.mu.mm == nil {
		return nil
	}
	if err := ix.mu.mm.Flush(); err != nil {
		return ix.errorf("flush: %w", err)
	}
	return nil
}

// Close trims the file to its valid size and unmaps it (Kafka: close =
// trimToValidSize + forced unmap, KAFKA-4614). It does not flush. Afterwards
// the index is empty and mutators return ErrClosed. Close is idempotent; it
// unmaps even when trimming fails and then returns the trim error.
func (ix *mappedIndex) Close() error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	if ix.mu.closed {
		return nil
	}
	trimErr := ix.resizeLocked(int(ix.SizeBytes()))
	return errors.Join(trimErr, ix.unmapAndClose())
}

// Delete unmaps the index (if still open) and removes its file. A file that
// is already gone is not an error (Kafka: deleteIfExists).
func (ix *mappedIndex) Delete() error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	var err error
	if !ix.mu.closed {
		err = ix.unmapAndClose()
	}
	if rmErr := os.Remove(ix.mu.path); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
		err = errors.Join(err, ix.errorf("delete: %w", rmErr))
	}
	return err
}

// Rename moves the index file to newPath (for Kafka's .deleted, .cleaned and
// .swap suffixes). The mapping stays valid. Renaming a closed index is
// allowed.
func (ix *mappedIndex) Rename(newPath string) error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	if err := os.Rename(ix.mu.path, newPath); err != nil {
		return ix.errorf("rename: %w", err)
	}
	ix.mu.Lock()
	ix.mu.path = newPath
	ix.mu.Unlock()
	return nil
}

// unmapAndClose drops the mapping with readers excluded and marks the index
// closed and empty. REQUIRES: wmu held.
func (ix *mappedIndex) unmapAndClose() error {
	ix.mu.Lock()
	mm := ix.mu.mm
	ix.mu.mm = nil
	ix.mu.closed = true
	ix.entries.Store(0)
	ix.capacity.Store(0)
	ix.mu.Unlock()
	if err := unmap(mm); err != nil {
		return ix.errorf("unmap: %w", err)
	}
	return nil
}

// offsetColumn reads the entries' offsets (relative in the file, absolute
// here), the key both indexes truncate by.
func (ix *mappedIndex) offsetColumn(mm []byte) keyColumn {
	return keyColumn{buf: mm, stride: ix.entrySize, off: ix.offsetField, base: ix.baseOffset}
}

// TruncateTo removes every entry with an offset >= offset. Truncating to an
// offset above the last entry has no effect (Kafka: OffsetIndex.truncateTo,
// TimeIndex.truncateTo). It does not resize the file.
func (ix *mappedIndex) TruncateTo(offset int64) error {
	ix.wmu.Lock()
	defer ix.wmu.Unlock()
	if err := ix.writable("truncate"); err != nil {
		return err
	}
	mm, n := ix.view()
	ix.setEntries(ceilSlot(ix.offsetColumn(mm), n, offset))
	return nil
}
