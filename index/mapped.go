package index

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"

	"github.com/edsrzf/mmap-go"
)

// DefaultMaxIndexSize is Kafka's default for segment.index.bytes
// (log.index.size.max.bytes): 10 MiB per index file.
const DefaultMaxIndexSize = 10 << 20

// mappedIndex is the entry-format-agnostic part of both indexes (Kafka's
// AbstractIndex): the file, its mapping, the published entry count and the
// lifecycle. OffsetIndex and TimeIndex embed it.
type mappedIndex struct {
	kind        string // "offset index" or "time index", for messages
	entrySize   int
	offsetField int // byte position of the relative offset inside an entry
	baseOffset  int64

	// entries is the published entry count: bytes [0, entries*entrySize) of
	// the mapping hold complete entries. Stored after the bytes are written.
	entries atomic.Int64
	// capacity is MaxEntries().
	capacity atomic.Int64

	// wmu serialises mutators. The fields after it are owned by the writer.
	wmu          sync.Mutex
	maxIndexSize int   // REQUIRES: wmu held. Fixed at open; Reset resizes to it.
	fileSize     int64 // REQUIRES: wmu held. Length of the file on disk.

	// mu guards the mapping. Readers hold it in read mode; replacing the
	// mapping or lowering the count needs it in write mode and wmu held, so
	// the writer may read these fields holding wmu alone.
	mu struct {
		sync.RWMutex
		mm      mmap.MMap // nil when the mapped length is 0 or the index is closed
		path    string
		closed  bool
		oddSize int64 // file size at open when not a multiple of entrySize, else 0
	}
}

// open opens or creates the file at path and maps it. See doc.go, "Size of the
// file", for what happens to an existing file.
func (ix *mappedIndex) open(path string, baseOffset int64, maxIndexSize, entrySize, offsetField int, kind string) (err error) {
	ix.offsetField = offsetField
	ix.kind, ix.entrySize, ix.baseOffset = kind, entrySize, baseOffset
	ix.maxIndexSize = maxIndexSize
	ix.mu.path = path
	if maxIndexSize < entrySize {
		return ix.errorf("open: max index size %d is below the entry size %d: %w", maxIndexSize, entrySize, ErrInvalidSize)
	}
	f, created, err := openOrCreate(path)
	if err != nil {
		return ix.errorf("open: %w", err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = ix.errorf("open: close: %w", cerr)
		}
	}()
	if created {
		if err = ix.preallocate(f); err != nil {
			_ = os.Remove(path) // best effort: do not leave a half-made index behind
		}
		return err
	}
	return ix.load(f)
}

func openOrCreate(path string) (f *os.File, created bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		return f, true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, false, err
	}
	f, err = os.OpenFile(path, os.O_RDWR, 0)
	return f, false, err
}

// preallocate sizes a new file to roundDown(maxIndexSize, entrySize) and maps
// it (Kafka: RandomAccessFile.setLength, a sparse file).
func (ix *mappedIndex) preallocate(f *os.File) error {
	size := int64(ix.roundDown(ix.maxIndexSize))
	if err := f.Truncate(size); err != nil {
		return ix.errorf("preallocate %d bytes: %w", size, err)
	}
	mm, err := mmap.MapRegion(f, int(size), mmap.RDWR, 0, 0)
	if err != nil {
		return ix.errorf("map %d bytes: %w", size, err)
	}
	ix.mu.mm, ix.fileSize = mm, size
	ix.capacity.Store(size / int64(ix.entrySize))
	return nil
}

// load maps an existing file at its current size, taking every whole entry in
// it as valid (Kafka: position = roundDown(limit, entrySize)). The file is not
// modified; MaxEntries is raised to the configured maximum and the file grows
// on the first Append that needs room.
func (ix *mappedIndex) load(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return ix.errorf("stat: %w", err)
	}
	size := st.Size()
	if size%int64(ix.entrySize) != 0 {
		ix.mu.oddSize = size
	}
	n := size / int64(ix.entrySize)
	if mapped := n * int64(ix.entrySize); mapped > 0 {
		mm, err := mmap.MapRegion(f, int(mapped), mmap.RDWR, 0, 0)
		if err != nil {
			return ix.errorf("map %d bytes: %w", mapped, err)
		}
		ix.mu.mm = mm
	}
	ix.fileSize = size
	ix.entries.Store(n)
	ix.capacity.Store(max(n, int64(ix.maxIndexSize/ix.entrySize)))
	return nil
}

// remap sets the file's length to size and replaces the mapping with one of
// that length. On failure the previous mapping stays in place.
// REQUIRES: wmu held; size >= Entries()*entrySize.
func (ix *mappedIndex) remap(size int64) (err error) {
	f, err := os.OpenFile(ix.mu.path, os.O_RDWR, 0)
	if err != nil {
		return ix.errorf("resize to %d bytes: %w", size, err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = ix.errorf("resize: close: %w", cerr)
		}
	}()
	if size > ix.fileSize {
		if err := f.Truncate(size); err != nil {
			return ix.errorf("grow to %d bytes: %w", size, err)
		}
		ix.fileSize = size
	}
	var mm mmap.MMap
	if size > 0 {
		if mm, err = mmap.MapRegion(f, int(size), mmap.RDWR, 0, 0); err != nil {
			return ix.errorf("map %d bytes: %w", size, err)
		}
	}
	return ix.swapMapping(f, mm, size)
}

// swapMapping installs mm and, when shrinking, cuts the file, with readers
// excluded: no reader may touch the old mapping past the new end of file.
// REQUIRES: wmu held.
func (ix *mappedIndex) swapMapping(f *os.File, mm mmap.MMap, size int64) error {
	ix.mu.Lock()
	if size < ix.fileSize {
		if err := f.Truncate(size); err != nil {
			ix.mu.Unlock()
			return errors.Join(ix.errorf("shrink to %d bytes: %w", size, err), unmap(mm))
		}
		ix.fileSize = size
	}
	old := ix.mu.mm
	ix.mu.mm = mm
	ix.mu.Unlock()
	if err := unmap(old); err != nil {
		return ix.errorf("unmap old mapping: %w", err)
	}
	return nil
}

func unmap(mm mmap.MMap) error {
	if mm == nil {
		return nil
	}
	return mm.Unmap()
}

// ensureMapped grows the file and the mapping to the full capacity when slot
// need-1 lies past the current mapping. REQUIRES: wmu held; need <= capacity.
func (ix *mappedIndex) ensureMapped(need int) error {
	if need*ix.entrySize <= len(ix.mu.mm) {
		return nil
	}
	return ix.remap(ix.capacity.Load() * int64(ix.entrySize))
}

// resizeLocked is Kafka's AbstractIndex.resize, except that it never drops
// entries: a size below Entries()*entrySize is raised to it.
// REQUIRES: wmu held; not closed.
func (ix *mappedIndex) resizeLocked(newSize int) error {
	size := max(int64(ix.roundDown(max(newSize, 0))), ix.entries.Load()*int64(ix.entrySize))
	if size != ix.fileSize || size != int64(len(ix.mu.mm)) {
		if err := ix.remap(size); err != nil {
			return err
		}
	}
	ix.capacity.Store(size / int64(ix.entrySize))
	return nil
}

// setEntries lowers the published count with readers excluded, so no reader
// is still reading a slot the writer is about to overwrite.
// REQUIRES: wmu held; n <= Entries().
func (ix *mappedIndex) setEntries(n int) {
	ix.mu.Lock()
	ix.entries.Store(int64(n))
	ix.mu.Unlock()
}

// publish makes slot n-1, already written, visible to readers.
// REQUIRES: wmu held.
func (ix *mappedIndex) publish(n int) { ix.entries.Store(int64(n)) }

// view returns the published entries' bytes and their count.
// REQUIRES: mu held in read mode, or wmu held.
func (ix *mappedIndex) view() ([]byte, int) {
	n := int(ix.entries.Load())
	return ix.mu.mm[:n*ix.entrySize], n
}

// writable returns ErrClosed, with location, after Close or Delete.
// REQUIRES: wmu held.
func (ix *mappedIndex) writable(op string) error {
	if ix.mu.closed {
		return ix.errorf("%s: %w", op, ErrClosed)
	}
	return nil
}

func (ix *mappedIndex) roundDown(size int) int { return size / ix.entrySize * ix.entrySize }

// errorf prefixes the index kind and path. REQUIRES: wmu or mu held.
func (ix *mappedIndex) errorf(format string, args ...any) error {
	return fmt.Errorf("%s %s: %w", ix.kind, ix.mu.path, fmt.Errorf(format, args...))
}

// corrupt builds a *CorruptIndexError. REQUIRES: wmu or mu held.
func (ix *mappedIndex) corrupt(format string, args ...any) error {
	return &CorruptIndexError{Path: ix.mu.path, Reason: ix.kind + ": " + fmt.Sprintf(format, args...)}
}
