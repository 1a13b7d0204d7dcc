package segment

import (
	"container/list"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/varve/varve/index"
)

// DefaultMaxOpenSegments bounds, per process, the sealed segments whose
// files are open at once (DefaultFileCache). Each costs one descriptor
// and two index mappings; the active segment of every log is open on top
// of this and never counted.
const DefaultMaxOpenSegments = 1024

// ErrSegmentRemoved: a removed segment's files were asked for after they
// were closed. Reads turn it into ErrOffsetOutOfRange.
var ErrSegmentRemoved = errors.New("segment removed")

// A FileCache bounds the sealed segments whose files (the .log
// descriptor and the mappings of both indexes, Kafka's LazyIndex) are
// open. A sealed segment is cold until a read needs it; its files are
// then opened and it joins the cache, and when more than the cache's
// bound are open the least recently used ones are closed again. Recency
// is approximated as CLOCK does (second chance): a read sets the
// segment's reference bit without a lock, and eviction passes over a
// segment whose bit is set once, clearing it. Active segments, segments
// rolled but not yet fsynced, and cleaner output are pinned open and not
// counted. One cache serves every log that names it (Config.Files); the
// default is process-wide.
//
// A reader holds a reference on the files it uses (a handle), so a
// segment closed as cold under a read finishes that read; a Region that
// Log.Read handed out keeps its descriptor open for file.delete.delay.ms
// after the read, as a removed segment's files are kept.
type FileCache struct {
	max   atomic.Int64
	mu    sync.Mutex
	lru   list.List // of *Segment, front = most recently opened. REQUIRES mu.
	opens atomic.Int64
}

// NewFileCache returns a cache keeping at most maxOpen sealed segments
// open (at least 1).
func NewFileCache(maxOpen int) *FileCache {
	c := &FileCache{}
	c.SetMaxOpen(maxOpen)
	return c
}

var defaultFiles = NewFileCache(DefaultMaxOpenSegments)

// DefaultFileCache is the process-wide cache logs use when Config.Files
// is nil.
func DefaultFileCache() *FileCache { return defaultFiles }

// SetMaxOpen changes the bound; extra segments are closed at the next
// open.
func (c *FileCache) SetMaxOpen(n int) { c.max.Store(int64(max(n, 1))) }

// MaxOpen is the bound.
func (c *FileCache) MaxOpen() int { return int(c.max.Load()) }

// Open is the number of sealed segments open in the cache now.
func (c *FileCache) Open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Opens counts the times a cold segment's files were opened.
func (c *FileCache) Opens() int64 { return c.opens.Load() }

// insert adds s as most recent. REQUIRES s.openMu.
func (c *FileCache) insert(s *Segment) {
	c.mu.Lock()
	if s.elem == nil {
		s.elem = c.lru.PushFront(s)
	}
	c.mu.Unlock()
}

// remove takes s out of the cache. REQUIRES s.openMu.
func (c *FileCache) remove(s *Segment) {
	c.mu.Lock()
	if s.elem != nil {
		c.lru.Remove(s.elem)
		s.elem = nil
	}
	c.mu.Unlock()
}

// inCache says whether s is in the cache. REQUIRES s.openMu.
func (c *FileCache) inCache(s *Segment) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return s.elem != nil
}

// shrink closes the least recently used segments beyond the bound. It
// must be called without any segment's openMu held.
func (c *FileCache) shrink() {
	for {
		victim := c.pickVictim()
		if victim == nil {
			return
		}
		victim.evict()
	}
}

// pickVictim removes and returns the segment to close, or nil when the
// cache is within its bound.
func (c *FileCache) pickVictim() *Segment {
	c.mu.Lock()
	defer c.mu.Unlock()
	for int64(c.lru.Len()) > c.max.Load() {
		e := c.lru.Back()
		s := e.Value.(*Segment)
		if s.used.Swap(false) {
			c.lru.MoveToFront(e) // second chance
			continue
		}
		c.lru.Remove(e)
		s.elem = nil
		return s
	}
	return nil
}

// handle is one opening of a segment's files. refs counts the segment's
// own reference (dropped when the segment closes them) and every reader
// inside a call; the files close when it reaches zero, but not before
// lease (unix nanoseconds) when they were closed as cold.
type handle struct {
	f       File
	offsets *index.OffsetIndex
	times   *index.TimeIndex
	refs    atomic.Int64
	lease   atomic.Int64
	cold    atomic.Bool // dropped by eviction: honour the lease
	closeMu sync.Mutex
	err     error // REQUIRES closeMu: the error of closing
}

// tryRef takes a reference unless the handle is already closing.
func (h *handle) tryRef() bool {
	for {
		n := h.refs.Load()
		if n <= 0 {
			return false
		}
		if h.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release drops a reference; the last one closes the files.
func (h *handle) release() {
	if h.refs.Add(-1) != 0 {
		return
	}
	if wait := time.Duration(h.lease.Load() - time.Now().UnixNano()); h.cold.Load() && wait > 0 {
		time.AfterFunc(wait, func() { h.closeFiles() })
		return
	}
	h.closeFiles()
}

// lend keeps the descriptor open for d after now, for a Region handed out.
func (h *handle) lend(d time.Duration) {
	until := time.Now().Add(d).UnixNano()
	for {
		old := h.lease.Load()
		if old >= until || h.lease.CompareAndSwap(old, until) {
			return
		}
	}
}

func (h *handle) closeFiles() error {
	h.closeMu.Lock()
	defer h.closeMu.Unlock()
	if h.f == nil {
		return h.err
	}
	err := h.offsets.Close()
	if e := h.times.Close(); err == nil {
		err = e
	}
	if e := h.f.Close(); err == nil && e != nil {
		err = ioErr("close", h.f.Name(), e)
	}
	h.f, h.err = nil, err
	return err
}

// openFiles opens the segment's .log and maps its indexes. A segment
// opened cold is sealed: its indexes take no more entries until a
// writer pinning it resizes them (TruncateTo), so the default
// segment.index.bytes serves (cfg's may change under the writer lock).
func (s *Segment) openFiles() (*handle, error) {
	n := s.names.Load()
	f, err := s.cfg.FS.OpenFile(n.log, os.O_RDWR, 0)
	if err != nil {
		return nil, ioErr("open segment", n.log, err)
	}
	h := &handle{f: f}
	if h.offsets, h.times, err = s.openIndexes(n.idx, n.tidx, DefaultSegmentIndexBytes); err != nil {
		f.Close()
		return nil, err
	}
	h.refs.Store(1)
	return h, nil
}

// acquire returns the segment's open files with a reference the caller
// must release, opening them when the segment is cold.
func (s *Segment) acquire() (*handle, error) {
	if h := s.h.Load(); h != nil && h.tryRef() {
		s.used.Store(true)
		return h, nil
	}
	s.openMu.Lock()
	h, inserted, err := s.openLocked()
	if err == nil && !h.tryRef() {
		err = fmt.Errorf("segment %s: %w", FilenamePrefix(s.base), ErrSegmentRemoved)
	}
	s.openMu.Unlock()
	if inserted {
		s.cfg.files().shrink()
	}
	return h, err
}

// openLocked returns the open handle, opening the files if needed; a
// segment opened here that is not pinned joins the cache. REQUIRES openMu.
func (s *Segment) openLocked() (h *handle, inserted bool, err error) {
	if h = s.h.Load(); h != nil {
		return h, false, nil
	}
	if s.retired {
		return nil, false, fmt.Errorf("segment %s: %w", FilenamePrefix(s.base), ErrSegmentRemoved)
	}
	if h, err = s.openFiles(); err != nil {
		return nil, false, err
	}
	s.cfg.files().opens.Add(1)
	s.h.Store(h)
	if !s.pinned {
		s.cfg.files().insert(s)
		return h, true, nil
	}
	return h, false, nil
}

// pin opens the segment's files if needed and keeps them open until
// unpin: the active segment, a rolled one until it is fsynced, one being
// loaded or truncated.
func (s *Segment) pin() error {
	s.openMu.Lock()
	defer s.openMu.Unlock()
	s.pinned = true
	s.cfg.files().remove(s)
	_, _, err := s.openLocked()
	return err
}

// unpin lets the cache close the segment's files when they go cold.
func (s *Segment) unpin() {
	s.openMu.Lock()
	s.pinned = false
	open := s.h.Load() != nil && !s.retired
	if open {
		s.cfg.files().insert(s)
	}
	s.openMu.Unlock()
	if open {
		s.cfg.files().shrink()
	}
}

// files returns the open handle of a pinned segment, for its writer.
// REQUIRES the segment pinned (and the writer lock, or load).
func (s *Segment) files() *handle { return s.h.Load() }

// evict closes a segment the cache let go, unless it was pinned or
// reopened meanwhile. Readers holding the handle finish first.
func (s *Segment) evict() {
	s.openMu.Lock()
	if s.pinned || s.cfg.files().inCache(s) {
		s.openMu.Unlock()
		return
	}
	h := s.h.Swap(nil)
	s.openMu.Unlock()
	if h != nil {
		h.cold.Store(true)
		h.release()
	}
}

// closeFiles closes the segment's files for good (Log.Close, removal):
// at once when no reader holds them, else when the last one releases.
func (s *Segment) closeFiles() error {
	s.openMu.Lock()
	s.retired = true
	s.cfg.files().remove(s)
	h := s.h.Swap(nil)
	s.openMu.Unlock()
	if h == nil {
		return nil
	}
	if h.refs.Add(-1) == 0 {
		return h.closeFiles()
	}
	return nil
}

// files returns the cache the log's segments use.
func (c *Config) files() *FileCache {
	if c.Files == nil {
		return defaultFiles
	}
	return c.Files
}
