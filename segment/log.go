package segment

import (
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/varve/varve/internal/invariants"
	"github.com/varve/varve/pagecache"
	"github.com/varve/varve/record"
)

// Log is the ordered segments of one partition: Kafka's UnifiedLog and
// LocalLog, without replication. See doc.go for its concurrency contract.
type Log struct {
	dir string
	tp  TopicPartition
	cfg Config

	// mu is the writer lock: appends, rolls, truncation, segment removal.
	mu sync.Mutex
	// flushMu serialises fsyncs and the closing of segment files, so that
	// a flush never meets a closed file. Lock order: mu, then flushMu.
	flushMu sync.Mutex
	// checkpointMu serialises the writes of the log's own checkpoint
	// files (writeCheckpointFile).
	checkpointMu sync.Mutex

	segs          atomic.Pointer[[]*Segment] // sorted by base offset; replaced, never mutated
	start         atomic.Int64               // log start offset
	end           atomic.Int64               // log end offset (LEO)
	recoveryPoint atomic.Int64               // every offset below it is fsynced
	lastFlush     atomic.Int64               // unix nanoseconds at which the last flush started
	dirDirty      atomic.Bool                // a segment was created since the directory was last fsynced
	werr          atomic.Pointer[error]      // sticky write error
	closed        atomic.Bool

	report RecoveryReport
	// txnRebuildFrom is the base of the first segment whose transaction
	// index recovery must rebuild from the log, -1 if none (Open only).
	txnRebuildFrom int64
	lso            lsoState               // what LastStableOffset reads without mu
	limits         atomic.Pointer[limits] // validation limits, read without mu

	producers *producerStateManager // idempotent-producer state; REQUIRES mu
	snaps     snapshotQueue         // producer snapshots awaiting the flusher

	sealed         chan *Segment // rolled segments for the flusher goroutine
	flushMsChanged chan time.Duration
	stop           chan struct{}
	done           sync.WaitGroup
	deleting       sync.WaitGroup // pending delayed file deletions
	pending        struct {
		sync.Mutex
		segs map[*Segment]*time.Timer
	}
}

// limits are the settings validation reads outside the writer lock.
type limits struct {
	segmentBytes    int64
	maxMessageBytes int
	fileDeleteDelay time.Duration // how long a Region's file stays open after Read
}

func (l *Log) setLimits() {
	l.limits.Store(&limits{segmentBytes: l.cfg.SegmentBytes, maxMessageBytes: l.cfg.MaxMessageBytes, fileDeleteDelay: l.cfg.FileDeleteDelay})
}

// AppendInfo describes what an append wrote.
type AppendInfo struct {
	FirstOffset  int64 // base offset of the first batch
	LastOffset   int64 // last offset of the last batch
	MaxTimestamp int64 // largest batch max timestamp, -1 when none
	Batches      int
	Bytes        int
	// Duplicate is set when the append repeated one of its producer's
	// last NumBatchesToRetain batches (a retry): nothing was written,
	// FirstOffset, LastOffset and MaxTimestamp are the original batch's,
	// and Batches and Bytes are 0 (Kafka answers success with those
	// offsets).
	Duplicate bool
}

// Dir is the log's directory.
func (l *Log) Dir() string { return l.dir }

// TopicPartition is the partition named by the log's directory.
func (l *Log) TopicPartition() TopicPartition { return l.tp }

// StartOffset is the first offset a reader may ask for.
func (l *Log) StartOffset() int64 { return l.start.Load() }

// EndOffset is the offset the next appended record will get (the log end
// offset, LEO).
func (l *Log) EndOffset() int64 { return l.end.Load() }

// RecoveryPoint is the offset below which every byte is fsynced.
func (l *Log) RecoveryPoint() int64 { return l.recoveryPoint.Load() }

// Recovery says what opening the log found and repaired.
func (l *Log) Recovery() RecoveryReport { return l.report }

// Config is the log's configuration with Kafka's defaults filled in.
func (l *Log) Config() Config { return l.cfg }

// Size is the total size in bytes of the log's segments.
func (l *Log) Size() int64 {
	var n int64
	for _, s := range *l.segs.Load() {
		n += s.Size()
	}
	return n
}

func (l *Log) segments() []*Segment { return *l.segs.Load() }

func (l *Log) active() *Segment {
	segs := l.segments()
	return segs[len(segs)-1]
}

func (l *Log) setSegments(segs []*Segment) { l.segs.Store(&segs) }

// checkWritable returns the sticky error or ErrClosed. REQUIRES mu.
func (l *Log) checkWritable() error {
	if l.closed.Load() {
		return fmt.Errorf("%s: %w", l.dir, ErrClosed)
	}
	if p := l.werr.Load(); p != nil {
		return fmt.Errorf("%s: %w: %w", l.dir, ErrLogFailed, *p)
	}
	return nil
}

// fail records a write error; the log refuses appends from then on.
func (l *Log) fail(err error) error {
	l.werr.CompareAndSwap(nil, &err)
	return err
}

// Append appends one or more producer batches as the leader: each batch
// is validated by its header and CRC, given the next offsets by writing
// its base offset in place (b is modified), and stored verbatim. A batch
// that fails validation rejects the whole append and nothing is written.
// Batches with a producer id are checked against the producer's state
// under the same lock (producer_state.go): a retry of one of its last
// NumBatchesToRetain batches returns the original offsets with
// AppendInfo.Duplicate set and writes nothing; an older epoch or a
// sequence that does not follow rejects the whole append
// (ErrInvalidProducerEpoch, ErrOutOfOrderSequence).
func (l *Log) Append(b []byte) (AppendInfo, error) { return l.appendLeader(b, false, 0, originClient) }

// AppendWithEpoch is Append for a partition leader: each batch is also
// stamped with the leader's epoch (bytes 12-15, outside the CRC), as
// Kafka's leader does while it assigns offsets.
func (l *Log) AppendWithEpoch(b []byte, leaderEpoch int32) (AppendInfo, error) {
	return l.appendLeader(b, true, leaderEpoch, originClient)
}

func (l *Log) appendLeader(b []byte, stamp bool, epoch int32, origin appendOrigin) (AppendInfo, error) {
	check := record.ValidateClientBatch
	if origin == originCoordinator {
		check = record.ValidateBatch
	}
	info, err := l.validate(b, check)
	if err != nil {
		return info, err
	}
	l.mu.Lock()
	if err := l.checkWritable(); err != nil {
		l.mu.Unlock()
		return info, err
	}
	next := l.end.Load()
	if info, done, err := l.checkProducers(b, next, info, origin); done {
		l.mu.Unlock()
		return info, err
	}
	info.FirstOffset = next
	for p := 0; p < len(b); {
		h, _ := record.ParseHeader(b[p:])
		record.SetBaseOffset(b[p:], next)
		if stamp {
			record.SetPartitionLeaderEpoch(b[p:], epoch)
		}
		next += int64(h.LastOffsetDelta) + 1
		p += int(h.Size())
	}
	info.LastOffset = next - 1
	err = l.appendLocked(b, info)
	if err == nil {
		err = l.commitProducers(next)
	}
	flushMessages := l.cfg.flushEvery()
	l.mu.Unlock()
	if err != nil {
		return info, err
	}
	return info, l.maybeFlush(next, flushMessages)
}

// AppendReplicated appends batches that already carry their offsets, as
// a follower does with what it fetched from the leader. The first batch
// must start at or after the log end offset and offsets must increase.
func (l *Log) AppendReplicated(b []byte) (AppendInfo, error) {
	info, err := l.validate(b, record.ValidateBatch)
	if err != nil {
		return info, err
	}
	l.mu.Lock()
	if err := l.checkWritable(); err != nil {
		l.mu.Unlock()
		return info, err
	}
	next := l.end.Load()
	for p := 0; p < len(b); {
		h, _ := record.ParseHeader(b[p:])
		if h.BaseOffset < next {
			l.mu.Unlock()
			return info, fmt.Errorf("%s: %w: batch at offset %d, log end offset %d", l.dir, ErrNonContiguous, h.BaseOffset, next)
		}
		if p == 0 {
			info.FirstOffset = h.BaseOffset
		}
		next = h.NextOffset()
		p += int(h.Size())
	}
	info.LastOffset = next - 1
	err = l.appendLocked(b, info)
	if err == nil {
		// Kafka: a follower updates producer state without checks.
		err = l.producers.applyReplicatedBatches(b, next)
		l.publishTxnState()
		if err != nil {
			err = l.fail(err)
		}
	}
	flushMessages := l.cfg.flushEvery()
	l.mu.Unlock()
	if err != nil {
		return info, err
	}
	return info, l.maybeFlush(next, flushMessages)
}

// validate checks every batch in b without decoding records and sums
// what the append will write. check is ValidateClientBatch for a
// producer's batches (one record per offset, as Kafka's LogValidator
// requires) and ValidateBatch for replicated ones (compaction may have
// removed records).
func (l *Log) validate(b []byte, check func([]byte) (record.BatchHeader, error)) (AppendInfo, error) {
	info := AppendInfo{MaxTimestamp: noTimestamp, Bytes: len(b)}
	if len(b) == 0 {
		return info, fmt.Errorf("%s: %w: empty append", l.dir, record.ErrCorruptBatch)
	}
	lim := l.limits.Load()
	if int64(len(b)) > lim.segmentBytes {
		return info, fmt.Errorf("%s: %w: %d bytes exceed segment.bytes=%d", l.dir, ErrRecordBatchTooLarge, len(b), lim.segmentBytes)
	}
	for p := 0; p < len(b); {
		_, n, err := record.NextBatch(b[p:], lim.maxMessageBytes)
		if err != nil {
			return info, fmt.Errorf("%s: batch %d at byte %d: %w", l.dir, info.Batches, p, err)
		}
		h, err := check(b[p : p+n])
		if err != nil {
			return info, fmt.Errorf("%s: batch %d at byte %d: %w", l.dir, info.Batches, p, err)
		}
		info.MaxTimestamp = max(info.MaxTimestamp, h.MaxTimestamp)
		info.Batches++
		p += n
	}
	return info, nil
}

// appendLocked rolls if needed and writes b, whose batches carry their
// final offsets, to the active segment. REQUIRES mu.
func (l *Log) appendLocked(b []byte, info AppendInfo) error {
	s := l.active()
	if s.shouldRoll(int64(len(b)), info.MaxTimestamp, info.LastOffset) {
		if err := l.roll(info.FirstOffset); err != nil {
			return err
		}
		s = l.active()
	}
	pos := s.size.Load()
	if _, err := s.files().f.WriteAt(b, pos); err != nil {
		return l.fail(ioErr("append", s.Path(), err))
	}
	var next int64
	for p := 0; p < len(b); {
		h, _ := record.ParseHeader(b[p:])
		s.track(h, pos+int64(p), int(h.Size()))
		if err := s.maybeIndex(h, pos+int64(p)); err != nil {
			return l.fail(err)
		}
		next = h.NextOffset()
		p += int(h.Size())
	}
	if invariants.Enabled {
		checkAppend(s, l.end.Load(), info.FirstOffset, next, pos+int64(len(b)))
	}
	s.size.Store(pos + int64(len(b)))
	s.next.Store(next)
	l.end.Store(next)
	return nil
}

// Roll seals the active segment and starts a new one at the log end
// offset. An empty active segment is left as it is.
func (l *Log) Roll() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritable(); err != nil {
		return err
	}
	if l.active().Size() == 0 {
		return nil
	}
	return l.roll(l.end.Load())
}

// roll seals the active segment and starts a new one at max(firstOffset,
// LEO); the sealed segment goes to the flusher goroutine, which fsyncs
// it off the append path. REQUIRES mu.
func (l *Log) roll(firstOffset int64) error {
	old := l.active()
	base := max(firstOffset, l.end.Load())
	if old.Size() == 0 && old.base == base {
		return nil
	}
	if err := old.seal(); err != nil {
		return l.fail(err)
	}
	s, err := createSegment(l.dir, base, &l.cfg, "")
	if err != nil {
		return l.fail(err)
	}
	segs := l.segments()
	next := make([]*Segment, 0, len(segs)+1)
	if old.Size() == 0 {
		// An empty segment would sit between offsets; replace it.
		next = append(next, segs[:len(segs)-1]...)
	} else {
		next = append(next, segs...)
	}
	l.setSegments(append(next, s))
	if old.Size() == 0 {
		l.scheduleDelete(old) // empty: were it to come back, recovery would drop it
	}
	l.dirDirty.Store(true)
	if old.Size() > 0 {
		l.sealed <- old
	}
	// Kafka: a producer state snapshot named after the new segment.
	l.producers.mapEnd = base
	if err := l.takeSnapshot(true); err != nil {
		return l.fail(err)
	}
	return nil
}

// Segments describes the log's segments, oldest first, for retention,
// compaction and tools.
func (l *Log) Segments() []SegmentInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	segs := l.segments()
	out := make([]SegmentInfo, len(segs))
	for i, s := range segs {
		out[i] = s.info(i == len(segs)-1)
	}
	return out
}

// SegmentInfo describes one segment.
type SegmentInfo struct {
	BaseOffset       int64
	NextOffset       int64
	Size             int64
	MaxTimestamp     int64 // largest batch timestamp, -1 if none
	LargestTimestamp int64 // MaxTimestamp, or the file's mtime when none (what retention uses)
	FirstTimestamp   int64 // first batch's max timestamp, -1 if none
	Path             string
	Active           bool
}

func (s *Segment) info(active bool) SegmentInfo {
	return SegmentInfo{
		BaseOffset: s.base, NextOffset: s.NextOffset(), Size: s.Size(),
		MaxTimestamp: s.maxTimestamp, LargestTimestamp: s.LargestTimestamp(),
		FirstTimestamp: s.rollingBase, Path: s.Path(), Active: active,
	}
}

// floorSegment returns the index of the segment that holds offset: the
// last one whose base is at most offset, or 0.
func floorSegment(segs []*Segment, offset int64) int {
	i := sort.Search(len(segs), func(i int) bool { return segs[i].base > offset })
	return max(i-1, 0)
}

// Read returns the bytes from the batch holding offset onwards, up to
// maxBytes (at least one whole batch), as a file region that a caller
// can send with sendfile. Reading at the log end offset returns an empty
// region. As in Kafka, the region may end inside a batch; Records and
// ReadBytes drop such a partial tail.
func (l *Log) Read(offset int64, maxBytes int) (pagecache.Region, error) {
	return l.ReadBounded(offset, maxBytes, l.end.Load(), true)
}

// ReadBounded is Read with an exclusive upper bound upTo (a high
// watermark, say): no batch at or past upTo is returned. With
// minOneBatch false, a first batch larger than maxBytes yields an empty
// region instead. The region's file stays open for at least
// file.delete.delay.ms, even if its segment goes cold or is removed.
func (l *Log) ReadBounded(offset int64, maxBytes int, upTo int64, minOneBatch bool) (pagecache.Region, error) {
	r, fh, err := l.readHeld(offset, maxBytes, upTo, minOneBatch)
	if fh != nil {
		fh.lend(l.limits.Load().fileDeleteDelay)
		fh.release()
	}
	return r, err
}

// readHeld is ReadBounded returning, with a non-empty region, a
// reference on its segment's files that the caller must release.
func (l *Log) readHeld(offset int64, maxBytes int, upTo int64, minOneBatch bool) (pagecache.Region, *handle, error) {
	start, end := l.start.Load(), l.end.Load()
	if offset < start || offset > end {
		return pagecache.Region{}, nil, fmt.Errorf("%s: %w: offset %d, log has [%d, %d)", l.dir, ErrOffsetOutOfRange, offset, start, end)
	}
	upTo = min(upTo, end)
	if offset >= upTo || maxBytes <= 0 && !minOneBatch {
		return pagecache.Region{}, nil, nil
	}
	for attempt := 0; ; attempt++ {
		segs := l.segs.Load()
		r, fh, err := l.readSegments(*segs, offset, maxBytes, upTo, minOneBatch)
		// A segment replaced (compaction) or removed under the read may
		// have had its file closed: read again from the live segments.
		if err != nil && attempt < 3 && l.segs.Load() != segs {
			continue
		}
		return r, fh, err
	}
}

func (l *Log) readSegments(segs []*Segment, offset int64, maxBytes int, upTo int64, minOneBatch bool) (pagecache.Region, *handle, error) {
	for i := floorSegment(segs, offset); i < len(segs); i++ {
		r, fh, err := l.readSegment(segs[i], offset, maxBytes, upTo, minOneBatch)
		if err != nil || fh != nil {
			return r, fh, err
		}
		if upTo <= segs[i].NextOffset() {
			break
		}
	}
	return pagecache.Region{}, nil, nil
}

// readSegment returns the region of s holding offset with a reference
// on s's files, or no handle when s holds nothing at or after offset.
func (l *Log) readSegment(s *Segment, offset int64, maxBytes int, upTo int64, minOne bool) (pagecache.Region, *handle, error) {
	fh, err := s.acquire()
	if err != nil {
		return pagecache.Region{}, nil, l.readErr(offset, err)
	}
	maxPos := s.Size()
	if upTo < s.NextOffset() {
		if maxPos, err = s.positionOf(fh, upTo); err != nil {
			fh.release()
			return pagecache.Region{}, nil, l.readErr(offset, err)
		}
	}
	pos, n, found, err := s.read(fh, offset, maxBytes, maxPos, minOne)
	if err != nil || !found {
		fh.release()
		return pagecache.Region{}, nil, l.readErr(offset, err)
	}
	return pagecache.Region{File: fh.f.OS(), Off: pos, Len: n}, fh, nil
}

// readErr turns the failure of a read whose segment was removed under it
// into a clean out-of-range error.
func (l *Log) readErr(offset int64, err error) error {
	if err == nil {
		return nil
	}
	if offset < l.start.Load() || l.closed.Load() {
		return fmt.Errorf("%s: %w: offset %d was removed while being read", l.dir, ErrOffsetOutOfRange, offset)
	}
	return err
}

// ReadBytes is the copying variant of Read: it returns whole batches
// only, starting with the one holding offset, up to maxBytes (at least
// one batch).
func (l *Log) ReadBytes(offset int64, maxBytes int) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		segs := l.segs.Load()
		r, fh, err := l.readHeld(offset, maxBytes, l.end.Load(), true)
		if err != nil || fh == nil {
			return nil, err
		}
		buf, err := r.Bytes()
		fh.release()
		if err == nil {
			return buf[:wholeBatches(buf)], nil
		}
		// The segment was replaced (compaction) or removed under the read
		// and its file closed: read again from the segments now live.
		if attempt < 3 && l.segs.Load() != segs {
			continue
		}
		return nil, l.readErr(offset, err)
	}
}

// wholeBatches returns the length of the prefix of buf made of whole
// batches.
func wholeBatches(buf []byte) int {
	p := 0
	for len(buf)-p >= record.LogOverhead {
		h, err := record.ParseHeader(buf[p:])
		if err != nil && len(buf)-p >= record.BatchHeaderSize || h.Size() < record.BatchHeaderSize || int64(len(buf)-p) < h.Size() {
			break
		}
		p += int(h.Size())
	}
	return p
}

// Flush fsyncs everything appended so far and advances the recovery
// point to the log end offset.
func (l *Log) Flush() error {
	if err := l.flushTo(l.end.Load()); err != nil {
		return err
	}
	return l.checkpoint()
}

// maybeFlush applies flush.messages after an append that ended at next.
func (l *Log) maybeFlush(next, flushMessages int64) error {
	if next-l.recoveryPoint.Load() < flushMessages {
		return nil
	}
	return l.flushTo(next)
}

// flushTo makes every offset below target durable. Appends that arrive
// while an fsync runs are covered by the next one, which any of them
// starts: concurrent appenders share fsyncs (group commit).
func (l *Log) flushTo(target int64) error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	if l.recoveryPoint.Load() >= target {
		return nil
	}
	if p := l.werr.Load(); p != nil {
		return fmt.Errorf("%s: %w: %w", l.dir, ErrLogFailed, *p)
	}
	began := time.Now()
	startedAt := l.cfg.Now().UnixNano()
	end := l.end.Load() // everything below end was written before this load
	rp := l.recoveryPoint.Load()
	dirty := l.dirDirty.Swap(false)
	segs := l.segments()
	for i, s := range segs {
		if s.NextOffset() <= rp || s.base >= end || s.closed {
			continue
		}
		// The active segment's indexes are not synced: the segment that
		// holds the recovery point is rebuilt from its log after a crash
		// anyway, so one fdatasync makes an append durable. Sealed
		// segments get their indexes synced too (their checks at Open are
		// only sanity checks).
		flush := s.flush
		if i == len(segs)-1 {
			flush = s.flushLog
		}
		if err := flush(); err != nil {
			return l.fail(err)
		}
	}
	if dirty {
		if err := l.cfg.FS.SyncDir(l.dir); err != nil {
			l.dirDirty.Store(true)
			return l.fail(ioErr("fsync dir", l.dir, err))
		}
	}
	l.advanceRecoveryPoint(end)
	l.lastFlush.Store(startedAt)
	if l.cfg.OnFlush != nil {
		l.cfg.OnFlush(time.Since(began))
	}
	return nil
}

// advanceRecoveryPoint raises the recovery point, never lowering it.
// REQUIRES flushMu.
func (l *Log) advanceRecoveryPoint(to int64) {
	if to > l.recoveryPoint.Load() {
		l.recoveryPoint.Store(to)
	}
}

// flusher fsyncs sealed segments handed over by roll, completes the
// producer snapshots roll queued, and applies flush.ms. It is the log's
// only long-lived goroutine.
func (l *Log) flusher(flushMs time.Duration) {
	defer l.done.Done()
	var tick <-chan time.Time
	var ticker *time.Ticker
	setTicker := func(d time.Duration) {
		if ticker != nil {
			ticker.Stop()
			ticker, tick = nil, nil
		}
		if flushTicks(d) {
			// Checked four times per flush.ms: a flush is due flush.ms after
			// the previous one started, and a tick of flush.ms itself would
			// find it just short of due and wait a second period.
			ticker = time.NewTicker(max(min(d/4, time.Second), time.Millisecond))
			tick = ticker.C
		}
	}
	setTicker(flushMs)
	defer setTicker(0)
	for {
		select {
		case s := <-l.sealed:
			l.flushSealed(s)
		case <-l.snaps.wake:
			l.completeSnapshots()
		case d := <-l.flushMsChanged:
			flushMs = d
			setTicker(d)
		case <-tick:
			if l.cfg.Now().UnixNano()-l.lastFlush.Load() >= int64(flushMs) {
				if err := l.flushTo(l.end.Load()); err != nil {
					l.cfg.Logger.Error("scheduled flush failed", "dir", l.dir, "err", err)
				}
			}
		case <-l.stop:
			for {
				select {
				case s := <-l.sealed:
					l.flushSealed(s)
				default:
					l.completeSnapshots()
					return
				}
			}
		}
	}
}

// flushSealed fsyncs a rolled segment and the directory, then advances
// the recovery point past it, as Kafka's one-shot flush after a roll.
func (l *Log) flushSealed(s *Segment) {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	if s.closed {
		return
	}
	// Even when an inline flush already moved the recovery point past it,
	// this syncs its indexes, which the inline flush left alone.
	began := time.Now()
	if err := s.flush(); err != nil {
		l.fail(err)
		l.cfg.Logger.Error("flush of rolled segment failed", "segment", s.Path(), "err", err)
		return
	}
	if l.dirDirty.Swap(false) {
		if err := l.cfg.FS.SyncDir(l.dir); err != nil {
			l.dirDirty.Store(true)
			l.fail(ioErr("fsync dir", l.dir, err))
			return
		}
	}
	if l.recoveryPoint.Load() >= s.base {
		l.advanceRecoveryPoint(s.NextOffset())
	}
	s.unpin() // durable: the file cache may close it when it goes cold
	if l.cfg.OnFlush != nil {
		l.cfg.OnFlush(time.Since(began))
	}
	if l.cfg.Managed == nil {
		if err := l.writeCheckpointFile(RecoveryPointCheckpointFile, &l.recoveryPoint); err != nil {
			l.cfg.Logger.Warn("recovery point checkpoint failed", "dir", l.dir, "err", err)
		}
	}
}

// scheduleDelete renames a removed segment's files to *.deleted and
// deletes them after file.delete.delay.ms, so that reads in progress on
// them finish. REQUIRES mu.
func (l *Log) scheduleDelete(s *Segment) error {
	err := s.renameTo(DeletedSuffix)
	if err != nil {
		l.cfg.Logger.Warn("rename of removed segment failed", "segment", s.Path(), "err", err)
	}
	l.deleteLater(s)
	return err
}

// deleteLater deletes s's files after file.delete.delay.ms.
func (l *Log) deleteLater(s *Segment) {
	l.pending.Lock()
	defer l.pending.Unlock()
	l.deleting.Add(1)
	l.pending.segs[s] = time.AfterFunc(l.cfg.FileDeleteDelay, func() { l.deleteNow(s) })
}

func (l *Log) deleteNow(s *Segment) {
	l.pending.Lock()
	_, ok := l.pending.segs[s]
	delete(l.pending.segs, s)
	l.pending.Unlock()
	if !ok {
		return
	}
	defer l.deleting.Done()
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	if err := s.remove(); err != nil {
		l.cfg.Logger.Warn("delete of removed segment failed", "segment", s.Path(), "err", err)
	}
}

// finishDeletes deletes every pending segment now (at close).
func (l *Log) finishDeletes() {
	l.pending.Lock()
	segs := make([]*Segment, 0, len(l.pending.segs))
	for s, t := range l.pending.segs {
		if t.Stop() {
			segs = append(segs, s)
		}
	}
	l.pending.Unlock()
	for _, s := range segs {
		l.deleteNow(s)
	}
	l.deleting.Wait()
}

// checkpoint writes the recovery point and log start offset files when
// the log manages them itself.
func (l *Log) checkpoint() error {
	if l.cfg.Managed != nil {
		return nil
	}
	if err := l.writeCheckpointFile(RecoveryPointCheckpointFile, &l.recoveryPoint); err != nil {
		return err
	}
	return l.writeCheckpointFile(LogStartOffsetCheckpointFile, &l.start)
}

// writeCheckpointFile writes one of the checkpoint files a log keeps
// itself (outside a log manager).
//
// Writers are serialised and read the offset once they hold the lock: a
// Flush and the flusher's checkpoint after a roll would otherwise share
// the file's .tmp (one rename finding it gone) and could leave the older
// offset last.
func (l *Log) writeCheckpointFile(name string, offset *atomic.Int64) error {
	l.checkpointMu.Lock()
	defer l.checkpointMu.Unlock()
	return WriteCheckpoint(l.cfg.FS, filepath.Join(l.dir, name), map[TopicPartition]int64{l.tp: offset.Load()})
}

// Close flushes the log, writes its checkpoints and, when it manages
// them itself, the clean-shutdown marker, then closes every file. A
// closed log refuses appends; reads in progress end with
// ErrOffsetOutOfRange.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Swap(true) {
		return nil
	}
	close(l.stop)
	l.done.Wait()
	var err error
	if l.werr.Load() == nil {
		if segs := l.segments(); len(segs) > 0 {
			err = segs[len(segs)-1].closeActive()
		}
		if err == nil {
			err = l.flushTo(l.end.Load())
		}
		if segs := l.segments(); err == nil && len(segs) > 0 {
			// flushTo syncs the active segment's .log only; after a clean
			// shutdown its transaction index is trusted as it is.
			err = segs[len(segs)-1].flushTxnIndex()
		}
		if err == nil {
			err = l.checkpoint()
		}
		if err == nil {
			// Kafka: a snapshot at the log end spares the next Open a replay.
			err = l.takeSnapshot(false)
		}
	}
	l.finishDeletes()
	l.flushMu.Lock()
	for _, s := range l.segments() {
		if e := s.close(); e != nil && err == nil {
			err = e
		}
	}
	l.flushMu.Unlock()
	if err == nil && l.werr.Load() == nil && l.cfg.Managed == nil {
		err = WriteCleanShutdown(l.cfg.FS, l.dir)
	}
	return err
}
