package segment

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/varve/varve/index"
	"github.com/varve/varve/pagecache"
	"github.com/varve/varve/record"
)

// RecoveryReport says what Open found and repaired.
type RecoveryReport struct {
	CleanShutdown     bool          // the clean-shutdown marker was present: only index sanity checks ran
	SegmentsLoaded    int           // segments in the log after opening
	SegmentsRecovered int           // segments validated batch by batch
	BytesRecovered    int64         // bytes validated batch by batch
	IndexesRebuilt    int           // segments whose indexes were rebuilt from the log
	TruncatedBytes    int64         // bytes cut off the end of the first bad segment
	TruncatedAt       int64         // offset the log was truncated to, -1 if none
	SegmentsDropped   int           // whole segments removed after a truncation
	Reason            string        // why bytes were dropped, empty if none
	Duration          time.Duration // time spent opening
	// LostFrom and LostTo are the offsets [LostFrom, LostTo) that the
	// recovery point said were on disk and fsynced but that the log no
	// longer holds (a segment file deleted or cut under the broker, say):
	// acknowledged records that are gone, whose offsets the next appends
	// will reuse. Both are -1 when nothing was lost.
	LostFrom, LostTo int64
}

// LostOffsets is the number of offsets in [LostFrom, LostTo), 0 when
// nothing was lost.
func (r RecoveryReport) LostOffsets() int64 {
	if r.LostTo <= r.LostFrom {
		return 0
	}
	return r.LostTo - r.LostFrom
}

// Dropped says whether recovery removed any bytes.
func (r RecoveryReport) Dropped() bool { return r.TruncatedBytes > 0 || r.SegmentsDropped > 0 }

// Open opens the log in dir, creating the directory and an empty log if
// needed, and recovers it as doc.go describes.
func Open(dir string, cfg Config) (*Log, error) {
	began := time.Now()
	cfg, err := cfg.checked()
	if err != nil {
		return nil, err
	}
	if err := cfg.FS.MkdirAll(dir, 0o755); err != nil {
		return nil, ioErr("create log dir", dir, err)
	}
	l := &Log{
		dir: dir, tp: ParseTopicPartition(filepath.Base(dir)), cfg: cfg,
		sealed: make(chan *Segment, 64), stop: make(chan struct{}),
		flushMsChanged: make(chan time.Duration, 1),
	}
	l.snaps.wake = make(chan struct{}, 1)
	l.pending.segs = map[*Segment]*time.Timer{}
	l.setLimits()
	l.report.TruncatedAt = -1
	l.txnRebuildFrom = -1
	l.report.LostFrom, l.report.LostTo = -1, -1
	if err := l.load(); err != nil {
		for _, s := range *l.segsOrEmpty() {
			s.close()
		}
		return nil, err
	}
	l.report.SegmentsLoaded = len(l.segments())
	l.report.Duration = time.Since(began)
	l.logReport()
	l.lastFlush.Store(cfg.Now().UnixNano())
	l.done.Add(1)
	go l.flusher(cfg.FlushMs)
	return l, nil
}

func (l *Log) segsOrEmpty() *[]*Segment {
	if p := l.segs.Load(); p != nil {
		return p
	}
	return &[]*Segment{}
}

// recoveryState is what the checkpoints and the marker say.
type recoveryState struct {
	clean         bool
	recoveryPoint int64
	startOffset   int64
}

// load is the recovery procedure of doc.go, steps 1 to 7, then step 8:
// the idempotent-producer state from the latest snapshot and the log
// after it (producer_snapshot.go).
func (l *Log) load() error {
	st, err := l.readRecoveryState() // step 1
	if err != nil {
		return err
	}
	l.report.CleanShutdown = st.clean
	bases, err := l.cleanDirectory() // steps 2 and 3
	if err != nil {
		return err
	}
	segs, err := l.openSegments(bases)
	if err != nil {
		return err
	}
	l.setSegments(segs)
	if err := l.recoverSegments(st); err != nil { // steps 4 and 5
		return err
	}
	if err := l.finishLoad(st); err != nil { // steps 6 and 7
		return err
	}
	return l.loadProducerState(st.clean) // step 8
}

// readRecoveryState reads the clean-shutdown marker and the checkpoints,
// or takes them from the log manager. A marker found is deleted at once,
// so that a crash while loading counts as unclean (KAFKA-10471).
func (l *Log) readRecoveryState() (recoveryState, error) {
	if m := l.cfg.Managed; m != nil {
		return recoveryState{clean: m.CleanShutdown, recoveryPoint: m.RecoveryPoint, startOffset: m.LogStartOffset}, nil
	}
	st := recoveryState{recoveryPoint: -1, startOffset: -1}
	marker := filepath.Join(l.dir, CleanShutdownFile)
	if _, err := os.Stat(marker); err == nil {
		st.clean = true
		if err := l.cfg.FS.Remove(marker); err != nil {
			return st, ioErr("remove clean-shutdown marker", marker, err)
		}
		if err := l.cfg.FS.SyncDir(l.dir); err != nil {
			return st, ioErr("fsync dir", l.dir, err)
		}
	}
	for _, c := range []struct {
		name string
		dst  *int64
	}{{RecoveryPointCheckpointFile, &st.recoveryPoint}, {LogStartOffsetCheckpointFile, &st.startOffset}} {
		m, err := ReadCheckpoint(l.cfg.FS, filepath.Join(l.dir, c.name))
		if err != nil {
			// A torn checkpoint costs a longer recovery, never data.
			l.cfg.Logger.Warn("ignoring unreadable checkpoint", "file", c.name, "dir", l.dir, "err", err)
			st.clean = false
			continue
		}
		if off, ok := m[l.tp]; ok {
			*c.dst = off
		}
	}
	return st, nil
}

// cleanDirectory removes what an interrupted operation left behind
// (*.deleted, *.cleaned, *.tmp, index files without a log), completes
// interrupted compaction swaps, and returns the base offsets of the
// segments present.
func (l *Log) cleanDirectory() ([]int64, error) {
	entries, err := l.cfg.FS.ReadDir(l.dir)
	if err != nil {
		return nil, ioErr("list log dir", l.dir, err)
	}
	var swaps []int64
	minCleaned := int64(math.MaxInt64)
	logs := map[int64]bool{}
	var indexes []string
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(l.dir, name)
		switch {
		case strings.HasSuffix(name, LogSuffix+CleanedSuffix):
			if base, ok := parseBase(name, LogSuffix+CleanedSuffix); ok {
				minCleaned = min(minCleaned, base)
			}
			if err := l.cfg.FS.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, ioErr("remove leftover", path, err)
			}
		case strings.HasSuffix(name, DeletedSuffix), strings.HasSuffix(name, CleanedSuffix), strings.HasSuffix(name, ".tmp"):
			if err := l.cfg.FS.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, ioErr("remove leftover", path, err)
			}
		case strings.HasSuffix(name, LogSuffix+SwapSuffix):
			if base, ok := parseBase(name, LogSuffix+SwapSuffix); ok {
				swaps = append(swaps, base)
			}
		case strings.HasSuffix(name, LogSuffix):
			if base, ok := parseBase(name, LogSuffix); ok {
				logs[base] = true
			}
		case strings.HasSuffix(name, IndexSuffix), strings.HasSuffix(name, TimeIndexSuffix), strings.HasSuffix(name, TxnIndexSuffix):
			indexes = append(indexes, name)
		}
	}
	if err := l.completeSwaps(swaps, minCleaned, logs); err != nil {
		return nil, err
	}
	for _, name := range indexes {
		base, ok := parseBase(name, filepath.Ext(name))
		if !ok || !logs[base] {
			if err := l.cfg.FS.Remove(filepath.Join(l.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, ioErr("remove orphan index", name, err)
			}
		}
	}
	bases := make([]int64, 0, len(logs))
	for b := range logs {
		bases = append(bases, b)
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	return bases, nil
}

func parseBase(name, suffix string) (int64, bool) {
	s := strings.TrimSuffix(name, suffix)
	if len(s) != 20 {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n >= 0
}

// openSegments returns the segments at bases, in order, cold: their
// files are opened one at a time as recoverSegments loads them, so that
// a log of many segments never holds all their descriptors.
func (l *Log) openSegments(bases []int64) ([]*Segment, error) {
	segs := make([]*Segment, 0, len(bases))
	for _, base := range bases {
		segs = append(segs, l.coldSegment(base, ""))
	}
	return segs, nil
}

// coldSegment describes an existing segment without opening its files.
func (l *Log) coldSegment(base int64, suffix string) *Segment {
	logPath, idxPath, tidxPath := segmentPaths(l.dir, base, suffix)
	s := newSegment(l.dir, base, &l.cfg, segNames{logPath, idxPath, tidxPath})
	if fi, err := os.Stat(logPath); err == nil {
		s.created = fi.ModTime()
	}
	_, errIdx := os.Stat(idxPath)
	_, errTidx := os.Stat(tidxPath)
	s.indexesMissing = errIdx != nil || errTidx != nil
	return s
}

// pinForLoad opens a cold segment's files, without trusting them, and
// keeps them open while it is loaded.
func (l *Log) pinForLoad(s *Segment) error {
	if err := s.pin(); err != nil {
		return err
	}
	size, err := s.files().f.Size()
	if err != nil {
		return ioErr("stat segment", s.Path(), err)
	}
	s.size.Store(size)
	return nil
}

// recoverSegments validates the segments the recovery point does not
// cover (all from the one holding it, after an unclean shutdown), checks
// the indexes of the others, and truncates at the first bad byte.
func (l *Log) recoverSegments(st recoveryState) error {
	segs := l.segments()
	from := len(segs) // first segment to validate batch by batch
	if !st.clean {
		from = 0
		if st.recoveryPoint >= 0 {
			from = floorSegment(segs, st.recoveryPoint)
		}
	}
	for i, s := range segs {
		if err := l.pinForLoad(s); err != nil {
			return err
		}
		dropped, err := l.loadSegment(s, i >= from)
		if err != nil {
			return err
		}
		if err := l.loadSegmentTxnIndex(s, i >= from); err != nil {
			return err
		}
		if dropped > 0 {
			return l.dropAfter(i) // s stays pinned: it is the active segment
		}
		if i < len(segs)-1 {
			// Sealed: trimmed, then left to the file cache.
			if err := s.seal(); err != nil {
				return err
			}
			s.unpin()
		}
	}
	return nil
}

// loadSegment validates s batch by batch (validate) or, for a segment
// below the recovery point, checks its indexes and rebuilds them from
// the log when they do not match it. It returns the bytes truncated.
func (l *Log) loadSegment(s *Segment, validate bool) (int64, error) {
	if !validate {
		if reason := s.sanityCheck(); reason == "" {
			return 0, nil
		} else {
			l.cfg.Logger.Warn("rebuilding segment indexes", "segment", s.Path(), "reason", reason)
		}
	}
	res, err := s.recover()
	if err != nil {
		return 0, err
	}
	l.report.SegmentsRecovered++
	l.report.IndexesRebuilt++
	l.report.BytesRecovered += res.validBytes
	if res.truncated > 0 {
		l.report.TruncatedBytes += res.truncated
		l.report.TruncatedAt = s.NextOffset()
		l.report.Reason = fmt.Sprintf("segment %s at byte %d: %s", FilenamePrefix(s.base), res.validBytes, res.reason)
	}
	return res.truncated, nil
}

// loadSegmentTxnIndex loads s's transaction index. The index of a
// segment validated batch by batch is rebuilt (Kafka's recover resets
// it): emptied here when the segment holds a transaction marker, and
// filled again by the producer state replay of step 8, which then
// starts at or below its base. A corrupt index is rebuilt the same way.
func (l *Log) loadSegmentTxnIndex(s *Segment, validated bool) error {
	corrupt, err := s.loadTxnIndex()
	if err != nil {
		return err
	}
	if validated {
		if err := s.rewriteTxnIndex(nil); err != nil {
			return err
		}
	}
	if (validated && s.sawMarker) || corrupt {
		if l.txnRebuildFrom < 0 {
			l.txnRebuildFrom = s.base
		}
	}
	return s.truncateTxnIndex(s.NextOffset())
}

// dropAfter removes every segment after segs[i] (Kafka deletes all later
// segments once a segment was truncated).
func (l *Log) dropAfter(i int) error {
	segs := l.segments()
	for _, s := range segs[i+1:] {
		if err := s.remove(); err != nil {
			return err
		}
		l.report.SegmentsDropped++
	}
	l.setSegments(segs[:i+1])
	return nil
}

// sanityCheck says why a segment's indexes cannot be trusted, or "".
// It also loads the segment's next offset and timestamps, which fails on
// a log whose tail is not whole batches.
func (s *Segment) sanityCheck() string {
	if s.indexesMissing {
		return "index file missing"
	}
	size := s.size.Load()
	if err := s.files().offsets.SanityCheck(size); err != nil {
		return err.Error()
	}
	if err := s.reloadState(); err != nil {
		return err.Error()
	}
	if err := s.files().times.SanityCheck(s.NextOffset() - 1); err != nil {
		return err.Error()
	}
	return ""
}

// finishLoad applies the log start offset, creates an empty segment if
// none is left, sets the recovery point, and readies the active segment
// for appends.
func (l *Log) finishLoad(st recoveryState) error {
	segs := l.segments()
	if len(segs) > 0 && st.startOffset > segs[len(segs)-1].NextOffset() {
		// Everything is below the checkpointed start offset.
		for _, s := range segs {
			if err := s.remove(); err != nil {
				return err
			}
		}
		segs = nil
	}
	if len(segs) == 0 {
		s, err := createSegment(l.dir, max(st.startOffset, 0), &l.cfg, "")
		if err != nil {
			return err
		}
		segs = []*Segment{s}
		l.dirDirty.Store(true)
	}
	l.setSegments(segs)
	// Earlier segments were sealed as they were loaded; the active one
	// is pinned open.
	active := segs[len(segs)-1]
	if err := active.pin(); err != nil {
		return err
	}
	if err := active.files().offsets.Resize(l.cfg.SegmentIndexBytes); err != nil {
		return err
	}
	if err := active.files().times.Resize(l.cfg.SegmentIndexBytes); err != nil {
		return err
	}
	end := active.NextOffset()
	l.end.Store(end)
	l.start.Store(max(st.startOffset, segs[0].base))
	rp := end
	if !st.clean {
		rp = min(max(st.recoveryPoint, 0), end)
	}
	l.recoveryPoint.Store(rp)
	if st.recoveryPoint > end {
		// Everything below the recovery point was fsynced: a log that ends
		// before it lost acknowledged records, not a torn tail.
		l.report.LostFrom, l.report.LostTo = end, st.recoveryPoint
	}
	return nil
}

func (l *Log) logReport() {
	r := l.report
	if n := r.LostOffsets(); n > 0 {
		l.cfg.Logger.Error("log lost offsets below its recovery point: acknowledged records are gone and their offsets will be reused",
			"dir", l.dir, "partition", l.tp.String(), "lost_from", r.LostFrom, "lost_to", r.LostTo,
			"lost_offsets", n, "recovery_point", r.LostTo, "end", l.EndOffset())
	}
	attrs := []any{"dir", l.dir, "clean", r.CleanShutdown, "segments", r.SegmentsLoaded,
		"recovered_segments", r.SegmentsRecovered, "recovered_bytes", r.BytesRecovered,
		"start", l.StartOffset(), "end", l.EndOffset(), "took", r.Duration}
	if r.Dropped() {
		attrs = append(attrs, "truncated_bytes", r.TruncatedBytes, "truncated_at", r.TruncatedAt,
			"dropped_segments", r.SegmentsDropped, "reason", r.Reason)
		l.cfg.Logger.Warn("log recovered with data dropped", attrs...)
		return
	}
	if r.SegmentsRecovered > 0 {
		l.cfg.Logger.Info("log recovered", attrs...)
	}
}

// recoverResult is what validating one segment found.
type recoverResult struct {
	validBytes int64
	truncated  int64
	reason     string
}

// recover is Kafka's LogSegment.recover: reset both indexes, read every
// batch from the start, check its length, magic, CRC and offsets, rebuild
// the index entries at the same cadence as appends, and truncate the file
// at the first byte that is not part of a valid batch.
// REQUIRES the segment pinned.
func (s *Segment) recover() (recoverResult, error) {
	var res recoverResult
	fh := s.files()
	if err := fh.offsets.Reset(); err != nil {
		return res, err
	}
	if err := fh.times.Reset(); err != nil {
		return res, err
	}
	fileSize, err := fh.f.Size()
	if err != nil {
		return res, ioErr("stat", s.Path(), err)
	}
	s.resetState()
	s.sawMarker = false
	r := chunkReader{f: fh.f, size: fileSize}
	pos, expect := int64(0), s.base
	for pos < fileSize {
		b, h, reason, err := r.batch(pos, expect, s.base)
		if err != nil {
			return res, err
		}
		if reason != "" {
			res.reason = reason
			break
		}
		s.track(h, pos, len(b))
		s.sawMarker = s.sawMarker || h.IsControl()
		if err := s.maybeIndex(h, pos); err != nil {
			if errors.Is(err, index.ErrIndexFull) {
				res.reason = "index full"
				break
			}
			return res, err
		}
		pos += int64(len(b))
		expect = h.NextOffset()
		s.size.Store(pos)
		s.next.Store(expect)
	}
	res.validBytes = pos
	if pos < fileSize {
		if err := fh.f.Truncate(pos); err != nil {
			return res, ioErr("truncate", s.Path(), err)
		}
		res.truncated = fileSize - pos
	}
	s.size.Store(pos)
	s.indexesMissing = false
	return res, nil
}

// resetState forgets what the segment knew about its batches.
func (s *Segment) resetState() {
	s.size.Store(0)
	s.next.Store(s.base)
	s.bytesSinceIndex = 0
	s.maxTimestamp, s.offsetOfMaxTimestamp, s.rollingBase = noTimestamp, s.base, noTimestamp
}

// chunkReader reads a segment file sequentially through a large buffer,
// so that recovery reads at the speed of the disk, not of small preads.
type chunkReader struct {
	f          File
	size       int64
	buf        []byte
	start, end int64 // file range held in buf
}

const recoveryChunk = 4 << 20

// window returns the n bytes at pos, reading more of the file as needed.
func (r *chunkReader) window(pos int64, n int) ([]byte, error) {
	if pos >= r.start && pos+int64(n) <= r.end {
		return r.buf[pos-r.start : pos-r.start+int64(n)], nil
	}
	want := max(n, recoveryChunk)
	if cap(r.buf) < want {
		r.buf = make([]byte, want)
	}
	r.buf = r.buf[:want]
	m, err := r.f.ReadAt(r.buf, pos)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, ioErr("read", r.f.Name(), err)
	}
	r.start, r.end = pos, pos+int64(m)
	// Have the kernel read the next chunk while this one is checked, so
	// that reading and CRC checking overlap.
	if f := r.f.OS(); f != nil && r.end < r.size {
		_ = pagecache.Advise(f, r.end, int64(want), pagecache.WillNeed)
	}
	if m < n {
		return nil, io.ErrUnexpectedEOF
	}
	return r.buf[:n], nil
}

// batch returns the valid batch at pos, or a reason why the bytes at pos
// are not one. expect is the smallest base offset allowed.
func (r *chunkReader) batch(pos, expect, segBase int64) ([]byte, record.BatchHeader, string, error) {
	if r.size-pos < record.BatchHeaderSize {
		return nil, record.BatchHeader{}, fmt.Sprintf("torn batch: %d trailing bytes", r.size-pos), nil
	}
	hb, err := r.window(pos, record.BatchHeaderSize)
	if err != nil {
		return nil, record.BatchHeader{}, "", err
	}
	h, err := record.ParseHeader(hb)
	if err != nil {
		return nil, h, err.Error(), nil
	}
	size := h.Size()
	switch {
	case h.Length < record.BatchHeaderSize-record.LogOverhead:
		return nil, h, fmt.Sprintf("bad length %d", h.Length), nil
	case size > r.size-pos:
		return nil, h, fmt.Sprintf("torn batch: length %d, %d bytes left", size, r.size-pos), nil
	case size > math.MaxInt32:
		return nil, h, fmt.Sprintf("bad length %d", h.Length), nil
	}
	b, err := r.window(pos, int(size))
	if err != nil {
		return nil, h, "", err
	}
	if _, err := record.ValidateBatch(b); err != nil {
		return nil, h, err.Error(), nil
	}
	if h.BaseOffset < expect || h.LastOffset()-segBase > math.MaxInt32 {
		return nil, h, fmt.Sprintf("offset %d out of order (expected at least %d)", h.BaseOffset, expect), nil
	}
	return b, h, "", nil
}
