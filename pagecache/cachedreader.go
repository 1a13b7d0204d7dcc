package pagecache

import (
	"fmt"
	"io"
	"os"
)

// CachedReader reads one file through a BlockCache. It is safe for
// concurrent use; like Region it never moves the file's own offset.
type CachedReader struct {
	cache *BlockCache
	f     *os.File
}

// NewCachedReader returns a reader of f through c. It does not own f.
func NewCachedReader(c *BlockCache, f *os.File) *CachedReader {
	return &CachedReader{cache: c, f: f}
}

// ReadAt implements io.ReaderAt through the cache: it stats the file once
// per call, then serves each block from the cache or reads and inserts it.
// It returns io.EOF when p reaches past the end of the file.
func (r *CachedReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("pagecache: cached read %s at %d: negative offset", name(r.f), off)
	}
	var n int
	err := r.walk(off, int64(len(p)), func(b []byte) error {
		n += copy(p[n:], b)
		return nil
	})
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}

// WriteRange writes the file's bytes [off, off+n) to w, block by block from
// the cache, without an intermediate copy. If the file ends before off+n it
// writes what exists and returns an error wrapping ErrTruncated.
func (r *CachedReader) WriteRange(w io.Writer, off, n int64) (int64, error) {
	var written int64
	err := r.walk(off, n, func(b []byte) error {
		m, err := w.Write(b)
		written += int64(m)
		if err != nil {
			return fmt.Errorf("pagecache: cached write %s at %d: %w", name(r.f), off+written, err)
		}
		return nil
	})
	if err == nil && written < n {
		err = fmt.Errorf("pagecache: cached write %s [%d,+%d): %w", name(r.f), off, n, ErrTruncated)
	}
	return written, err
}

// walk calls fn with consecutive cached slices covering [off, off+n),
// stopping early at the end of the file.
func (r *CachedReader) walk(off, n int64, fn func([]byte) error) error {
	if n <= 0 {
		return nil
	}
	v, err := r.cache.version(r.f)
	if err != nil {
		return fmt.Errorf("pagecache: cached read %s: %w", name(r.f), err)
	}
	end := min(off+n, v.size)
	bs := r.cache.blockSize
	for pos := off; pos < end; {
		b, err := r.cache.get(r.f, v, pos/bs)
		if err != nil {
			return err
		}
		lo := pos - (pos/bs)*bs
		hi := min(int64(len(b.data)), end-(pos/bs)*bs)
		if lo >= hi {
			return fmt.Errorf("pagecache: block %d of %s is short: %w", pos/bs, name(r.f), ErrTruncated)
		}
		if err := fn(b.data[lo:hi]); err != nil {
			return err
		}
		pos += hi - lo
	}
	return nil
}
