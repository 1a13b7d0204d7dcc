package main

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/cespare/xxhash/v2"
	"github.com/varve/varve/pagecache"
)

// Segment files hold synthetic, incompressible bytes: the content of logical
// byte p (position in the whole log) is a function of p alone, so a
// consumer's expected hash is computed without reading the files (which
// would pull them into the page cache).
//
// Content: 1 MiB chunks. Chunk k is pool[k mod 16] (16 MiB of seeded random
// bytes) with its first 8 bytes replaced by k*chunkSize, big-endian, so a
// misplaced chunk changes the hash.
const (
	chunkSize  = 1 << 20
	poolChunks = 16
	alignBytes = 4096 // consumer slices start on page boundaries
)

var contentPool = func() []byte {
	r := rand.New(rand.NewPCG(0x76617276, 0x65)) // "varv", "e"
	b := make([]byte, poolChunks*chunkSize)
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	return b
}()

// chunk fills buf (chunkSize bytes) with chunk k of the log.
func chunk(k int64, buf []byte) {
	copy(buf, contentPool[(k%poolChunks)*chunkSize:][:chunkSize])
	binary.BigEndian.PutUint64(buf, uint64(k*chunkSize))
}

// hashRange returns the xxhash of the log's logical bytes [off, off+n).
func hashRange(h *xxhash.Digest, off, n int64, buf []byte) {
	for n > 0 {
		k, in := off/chunkSize, off%chunkSize
		chunk(k, buf)
		m := min(n, chunkSize-in)
		h.Write(buf[in : in+m])
		off, n = off+m, n-m
	}
}

// segment is one file of the log.
type segment struct {
	path string
	base int64 // logical position of its first byte
	size int64
	f    *os.File
}

// dataset is the log: segments covering [0, total).
type dataset struct {
	dir   string
	segs  []*segment
	total int64
}

// writeDataset writes total bytes as segments of segBytes under dir, each
// fdatasynced so later runs meet clean pages, and opens them for reading.
// progress is called with the bytes written so far.
func writeDataset(dir string, total, segBytes int64, progress func(int64)) (*dataset, error) {
	ds := &dataset{dir: dir, total: total}
	buf := make([]byte, chunkSize)
	for base := int64(0); base < total; base += segBytes {
		s := &segment{path: filepath.Join(dir, fmt.Sprintf("%020d.log", base)), base: base, size: min(segBytes, total-base)}
		if err := writeSegment(s, buf, progress); err != nil {
			ds.close()
			return nil, err
		}
		ds.segs = append(ds.segs, s)
	}
	return ds, nil
}

func writeSegment(s *segment, buf []byte, progress func(int64)) error {
	f, err := os.OpenFile(s.path, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("create segment: %w", err)
	}
	s.f = f
	for off := int64(0); off < s.size; off += chunkSize {
		pos := s.base + off
		chunk(pos/chunkSize, buf)
		in := pos % chunkSize
		n := min(chunkSize-in, s.size-off)
		if _, err := f.Write(buf[in : in+n]); err != nil {
			return fmt.Errorf("write segment %s at %d: %w", s.path, off, err)
		}
		progress(s.base + off + n)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync segment %s: %w", s.path, err)
	}
	return nil
}

func (ds *dataset) close() {
	for _, s := range ds.segs {
		if s.f != nil {
			s.f.Close()
		}
	}
}

// piece is a contiguous range inside one segment.
type piece struct {
	seg      *segment
	off, len int64 // within the segment
}

// stream is what one consumer reads: its pieces in order, repeated passes
// times, like a consumer of one partition.
type stream struct {
	pieces []piece
	bytes  int64 // one pass
	passes int
	hash   uint64 // expected xxhash of all passes
}

func (s stream) total() int64 { return s.bytes * int64(s.passes) }

// pieces maps the logical range [off, off+n) onto segments.
func (ds *dataset) pieces(off, n int64) []piece {
	var out []piece
	for _, s := range ds.segs {
		lo, hi := max(off, s.base), min(off+n, s.base+s.size)
		if lo < hi {
			out = append(out, piece{seg: s, off: lo - s.base, len: hi - lo})
		}
	}
	return out
}

// streams splits the logical range [start, end) into k contiguous slices,
// page-aligned, one per consumer (one partition each).
func (ds *dataset) streams(start, end int64, k, passes int, withHash bool) []stream {
	out := make([]stream, k)
	per := (end - start) / int64(k) / alignBytes * alignBytes
	buf := make([]byte, chunkSize)
	for i := range out {
		lo := start + int64(i)*per
		hi := lo + per
		if i == k-1 {
			hi = end
		}
		out[i] = stream{pieces: ds.pieces(lo, hi-lo), bytes: hi - lo, passes: passes}
		if withHash {
			h := xxhash.New()
			for range passes {
				hashRange(h, lo, hi-lo, buf)
			}
			out[i].hash = h.Sum64()
		}
	}
	return out
}

// residency returns the fraction of the logical range's pages in the OS
// page cache.
func (ds *dataset) residency(start, end int64) (float64, error) {
	var res, total int64
	for _, p := range ds.pieces(start, end-start) {
		r, t, err := pagecache.Residency(p.seg.f, p.off, p.len)
		if err != nil {
			return 0, err
		}
		res, total = res+r, total+t
	}
	if total == 0 {
		return 0, nil
	}
	return float64(res) / float64(total), nil
}

// evict drops the range from the page cache (a catch-up read).
func (ds *dataset) evict(start, end int64) error {
	for _, p := range ds.pieces(start, end-start) {
		if err := pagecache.DropCache(p.seg.f, p.off, p.len); err != nil {
			return err
		}
	}
	return nil
}

// warm makes the range resident (a tail read: the data was just written).
func (ds *dataset) warm(start, end int64) error {
	buf := make([]byte, chunkSize)
	for _, p := range ds.pieces(start, end-start) {
		for off := p.off; off < p.off+p.len; off += chunkSize {
			n := min(chunkSize, p.off+p.len-off)
			if _, err := p.seg.f.ReadAt(buf[:n], off); err != nil {
				return fmt.Errorf("warm %s at %d: %w", p.seg.path, off, err)
			}
		}
	}
	return nil
}

// advise applies a to every segment touching the range.
func (ds *dataset) advise(start, end int64, a pagecache.Advice) error {
	for _, p := range ds.pieces(start, end-start) {
		if err := pagecache.Advise(p.seg.f, p.off, p.len, a); err != nil {
			return err
		}
	}
	return nil
}
