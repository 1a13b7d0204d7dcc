package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/varve/varve/record"
)

// A producer-state snapshot, <offset:%020d>.snapshot in the log
// directory, is Kafka's producer snapshot version 1
// (ProducerStateManager.PID_SNAPSHOT_MAP_SCHEMA). Its offset says that
// the state it holds reflects every batch below that offset. All
// integers are big-endian.
//
//	pos  size  field
//	  0     2  Version       1
//	  2     4  CRC           CRC-32C (Castagnoli) of bytes [6, end)
//	  6     4  EntryCount    entries that follow (Kafka's ArrayOf: an int32 count)
//	 10  46×n  Entries, each:
//	             0   8  ProducerId
//	             8   2  ProducerEpoch
//	            10   4  LastSequence           of the producer's last batch, -1 if none
//	            14   8  LastOffset             last offset of that batch, -1 if none
//	            22   4  OffsetDelta            that batch's last offset - first offset
//	            26   8  Timestamp              that batch's max timestamp (expiry counts from it)
//	            34   4  CoordinatorEpoch       of the last transaction marker, -1 if none
//	            38   8  CurrentTxnFirstOffset  first offset of the open transaction, -1 if none
//
// As in Kafka, a snapshot keeps only the last batch of each producer: a
// log reopened from a snapshot recognises a retry of that batch, and of
// any batch it replays from the log after the snapshot's offset, but not
// of the four before it. These constants are part of Kafka's on-disk
// format and must not change.
// castagnoli is the CRC-32C table of a snapshot's checksum.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const (
	SnapshotSuffix = ".snapshot" // LogFileUtils.PRODUCER_SNAPSHOT_FILE_SUFFIX

	producerSnapshotVersion = 1
	snapshotCRCPos          = 2
	snapshotCountPos        = 6
	snapshotEntriesPos      = 10
	snapshotEntrySize       = 46
)

// snapshotPath is the snapshot file of offset in dir.
func snapshotPath(dir string, offset int64) string {
	return filepath.Join(dir, FilenamePrefix(offset)+SnapshotSuffix)
}

// encodeSnapshot is the snapshot of entries (ordered by producer id, so
// that equal states give equal files).
func encodeSnapshot(entries []*producerEntry) []byte {
	b := make([]byte, snapshotEntriesPos, snapshotEntriesPos+snapshotEntrySize*len(entries))
	binary.BigEndian.PutUint16(b, producerSnapshotVersion)
	binary.BigEndian.PutUint32(b[snapshotCountPos:], uint32(len(entries)))
	for _, e := range entries {
		b = binary.BigEndian.AppendUint64(b, uint64(e.producerID))
		b = binary.BigEndian.AppendUint16(b, uint16(e.epoch))
		b = binary.BigEndian.AppendUint32(b, uint32(e.lastSeq()))
		b = binary.BigEndian.AppendUint64(b, uint64(e.lastDataOffset()))
		b = binary.BigEndian.AppendUint32(b, uint32(e.lastOffsetDelta()))
		b = binary.BigEndian.AppendUint64(b, uint64(e.lastTimestamp))
		b = binary.BigEndian.AppendUint32(b, uint32(e.coordinatorEpoch))
		b = binary.BigEndian.AppendUint64(b, uint64(e.txnFirstOffset))
	}
	binary.BigEndian.PutUint32(b[snapshotCRCPos:], crc32.Checksum(b[snapshotCountPos:], castagnoli))
	return b
}

// decodeSnapshot checks and decodes a snapshot file's content. Failures
// wrap ErrCorruptSnapshot.
func decodeSnapshot(b []byte) ([]producerEntry, error) {
	if len(b) < snapshotEntriesPos {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", ErrCorruptSnapshot, len(b), snapshotEntriesPos)
	}
	if v := int16(binary.BigEndian.Uint16(b)); v != producerSnapshotVersion {
		return nil, fmt.Errorf("%w: unknown file version %d", ErrCorruptSnapshot, v)
	}
	stored, computed := binary.BigEndian.Uint32(b[snapshotCRCPos:]), crc32.Checksum(b[snapshotCountPos:], castagnoli)
	if stored != computed {
		return nil, fmt.Errorf("%w: stored crc %d, computed crc %d", ErrCorruptSnapshot, stored, computed)
	}
	n := int64(int32(binary.BigEndian.Uint32(b[snapshotCountPos:])))
	if n < 0 || n*snapshotEntrySize != int64(len(b)-snapshotEntriesPos) {
		return nil, fmt.Errorf("%w: %d entries do not fill %d bytes", ErrCorruptSnapshot, n, len(b)-snapshotEntriesPos)
	}
	entries := make([]producerEntry, n)
	for i := range entries {
		entries[i] = decodeSnapshotEntry(b[snapshotEntriesPos+i*snapshotEntrySize:])
	}
	return entries, nil
}

// decodeSnapshotEntry decodes one 46-byte entry. A last offset below 0
// means no batch is remembered (Kafka's readSnapshot).
func decodeSnapshotEntry(b []byte) producerEntry {
	be := binary.BigEndian
	e := emptyEntry(int64(be.Uint64(b)))
	e.epoch = int16(be.Uint16(b[8:]))
	lastSeq, lastOffset := int32(be.Uint32(b[10:])), int64(be.Uint64(b[14:]))
	offsetDelta, ts := int32(be.Uint32(b[22:])), int64(be.Uint64(b[26:]))
	e.lastTimestamp = ts
	e.coordinatorEpoch = int32(be.Uint32(b[34:]))
	if txn := int64(be.Uint64(b[38:])); txn >= 0 {
		e.txnFirstOffset = txn
	}
	if lastOffset >= 0 {
		e.addBatchMetadata(batchMetadata{lastSeq: lastSeq, offsetDelta: offsetDelta, lastOffset: lastOffset, timestamp: ts})
	}
	return e
}

// DecodeProducerSnapshot decodes the content of a .snapshot file, for
// tools. Each state holds at most one batch, the producer's last.
func DecodeProducerSnapshot(b []byte) ([]ProducerState, error) {
	entries, err := decodeSnapshot(b)
	if err != nil {
		return nil, err
	}
	out := make([]ProducerState, len(entries))
	for i := range entries {
		out[i] = entries[i].export()
	}
	return out, nil
}

// snapshotQueue holds the snapshots taken at rolls. roll writes a
// snapshot to a temporary file under the writer lock without fsyncing
// it; the flusher goroutine fsyncs it, renames it to its final name and
// fsyncs the directory, so no fsync happens on the append path (Kafka
// moved this fsync off the append path too, KAFKA-15046). A crash before
// the rename leaves a *.tmp file that Open deletes, and the log then
// rebuilds from an older snapshot.
type snapshotQueue struct {
	// completing is held while the queue is worked through, by the
	// flusher or by a rebuild that needs every snapshot in place.
	completing sync.Mutex
	// mu guards pending and orders every rename and removal of snapshot
	// files, so that a snapshot another operation deleted is never
	// renamed into place afterwards. Lock order: Log.mu, Log.flushMu,
	// completing, mu.
	mu      sync.Mutex
	pending []*pendingSnapshot
	wake    chan struct{} // signals the flusher; capacity 1
	seq     int           // distinguishes temporary files; REQUIRES Log.mu
}

// pendingSnapshot is a snapshot written to tmp and not yet durable.
type pendingSnapshot struct {
	offset    int64
	tmp       string
	f         File
	cancelled bool // its offset's snapshot was deleted; REQUIRES snapshotQueue.mu
}

// takeSnapshot writes the producer state as the snapshot of its map end
// offset, unless a snapshot at or past that offset was already taken
// (Kafka's takeSnapshot). later hands the fsync and rename to the
// flusher. REQUIRES mu.
func (l *Log) takeSnapshot(later bool) error {
	m := l.producers
	if m.mapEnd <= m.lastSnap {
		return nil
	}
	data := encodeSnapshot(m.sorted())
	var err error
	if later {
		err = l.writeSnapshotLater(m.mapEnd, data)
	} else {
		err = l.writeSnapshotNow(m.mapEnd, data)
	}
	if err != nil {
		return err
	}
	m.lastSnap = m.mapEnd
	return nil
}

// writeSnapshotNow writes a snapshot through temp, fsync, rename, fsync
// of the directory. REQUIRES mu.
func (l *Log) writeSnapshotNow(offset int64, data []byte) error {
	q := &l.snaps
	q.mu.Lock()
	defer q.mu.Unlock()
	return WriteFileAtomic(l.cfg.FS, snapshotPath(l.dir, offset), data)
}

// writeSnapshotLater writes a snapshot to a temporary file and queues it
// for the flusher. REQUIRES mu.
func (l *Log) writeSnapshotLater(offset int64, data []byte) error {
	q := &l.snaps
	q.seq++
	tmp := snapshotPath(l.dir, offset) + "." + strconv.Itoa(q.seq) + ".tmp"
	f, err := l.cfg.FS.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
	if err != nil {
		return ioErr("create snapshot", tmp, err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		f.Close()
		return ioErr("write snapshot", tmp, err)
	}
	q.mu.Lock()
	q.pending = append(q.pending, &pendingSnapshot{offset: offset, tmp: tmp, f: f})
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return nil
}

// completeSnapshots makes the queued snapshots durable, oldest first. It
// runs on the flusher goroutine, and before a rebuild of the producer
// state, which must see every snapshot taken.
func (l *Log) completeSnapshots() {
	q := &l.snaps
	q.completing.Lock()
	defer q.completing.Unlock()
	for {
		q.mu.Lock()
		if len(q.pending) == 0 {
			q.mu.Unlock()
			return
		}
		p := q.pending[0]
		q.mu.Unlock()
		err := l.completeSnapshot(p)
		q.mu.Lock()
		q.pending = q.pending[1:]
		q.mu.Unlock()
		if err != nil {
			l.fail(err)
			l.cfg.Logger.Error("producer state snapshot failed", "dir", l.dir, "offset", p.offset, "err", err)
		}
	}
}

// completeSnapshot fsyncs p's file, renames it into place unless its
// snapshot was deleted meanwhile, and fsyncs the directory.
func (l *Log) completeSnapshot(p *pendingSnapshot) error {
	err := ioErr("fsync snapshot", p.tmp, p.f.Sync())
	if e := p.f.Close(); err == nil {
		err = ioErr("close snapshot", p.tmp, e)
	}
	q := &l.snaps
	q.mu.Lock()
	renamed := false
	if err != nil || p.cancelled {
		_ = l.cfg.FS.Remove(p.tmp)
	} else if e := l.cfg.FS.Rename(p.tmp, snapshotPath(l.dir, p.offset)); e != nil {
		err = ioErr("rename snapshot", p.tmp, e)
	} else {
		renamed = true
	}
	q.mu.Unlock()
	if renamed {
		err = ioErr("fsync dir", l.dir, l.cfg.FS.SyncDir(l.dir))
	}
	return err
}

// listSnapshots returns the offsets of the log's snapshot files, ascending.
func (l *Log) listSnapshots() ([]int64, error) {
	entries, err := l.cfg.FS.ReadDir(l.dir)
	if err != nil {
		return nil, ioErr("list log dir", l.dir, err)
	}
	var offs []int64
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, SnapshotSuffix) && !e.IsDir() {
			if off, ok := parseBase(name, SnapshotSuffix); ok {
				offs = append(offs, off)
			}
		}
	}
	slices.Sort(offs)
	return offs, nil
}

// deleteSnapshots deletes every snapshot whose offset matches, including
// queued ones. REQUIRES mu.
func (l *Log) deleteSnapshots(match func(offset int64) bool) error {
	q := &l.snaps
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, p := range q.pending {
		if match(p.offset) {
			p.cancelled = true
		}
	}
	offs, err := l.listSnapshots()
	if err != nil {
		return err
	}
	for _, off := range offs {
		if !match(off) {
			continue
		}
		if err := l.cfg.FS.Remove(snapshotPath(l.dir, off)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return ioErr("remove snapshot", snapshotPath(l.dir, off), err)
		}
	}
	return nil
}

// deleteSegmentSnapshots deletes the snapshots at the base offsets of
// removed segments (Kafka's deleteProducerSnapshots). A failure costs a
// stray file, which the next Open removes, so it is only logged.
// REQUIRES mu.
func (l *Log) deleteSegmentSnapshots(removed []SegmentInfo) {
	bases := make(map[int64]bool, len(removed))
	for _, s := range removed {
		bases[s.BaseOffset] = true
	}
	if err := l.deleteSnapshots(func(off int64) bool { return bases[off] }); err != nil {
		l.cfg.Logger.Warn("delete of producer state snapshots failed", "dir", l.dir, "err", err)
	}
}

// readSnapshot reads and decodes the snapshot at offset.
func (l *Log) readSnapshot(offset int64) ([]producerEntry, error) {
	path := snapshotPath(l.dir, offset)
	data, err := ReadFile(l.cfg.FS, path)
	if err != nil {
		return nil, ioErr("read snapshot", path, err)
	}
	entries, err := decodeSnapshot(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return entries, nil
}

// ReadProducerSnapshot reads and decodes a .snapshot file, for tools.
func ReadProducerSnapshot(fsys FS, path string) ([]ProducerState, error) {
	if fsys == nil {
		fsys = OSFS{}
	}
	data, err := ReadFile(fsys, path)
	if err != nil {
		return nil, ioErr("read snapshot", path, err)
	}
	states, err := DecodeProducerSnapshot(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return states, nil
}

// loadProducerState is step 8 of Open: remove stray snapshots, then
// rebuild the producer state from the latest snapshot and the log after
// it. REQUIRES mu (or exclusive use during Open).
func (l *Log) loadProducerState(clean bool) error {
	l.producers = newProducerStateManager(l.cfg.Now())
	l.producers.txns.onDone = l.txnDone
	segs := l.segments()
	bases := make([]int64, len(segs))
	for i, s := range segs {
		bases[i] = s.base
	}
	if err := l.removeStraySnapshots(bases); err != nil {
		return err
	}
	return l.rebuildProducerState(l.end.Load(), clean)
}

// removeStraySnapshots deletes the snapshots that are not at a segment's
// base offset, except the largest such one when it is past every base
// (the one Close writes at the log end): Kafka's removeStraySnapshots.
func (l *Log) removeStraySnapshots(bases []int64) error {
	offs, err := l.listSnapshots()
	if err != nil || len(offs) == 0 {
		return err
	}
	isBase := make(map[int64]bool, len(bases))
	for _, b := range bases {
		isBase[b] = true
	}
	stray := map[int64]bool{}
	latest := int64(-1)
	for _, off := range offs {
		if isBase[off] {
			continue
		}
		if latest >= 0 {
			stray[latest] = true
		}
		latest = off
	}
	if latest >= 0 && len(bases) > 0 && latest < slices.Max(bases) {
		stray[latest] = true
	}
	return l.deleteSnapshots(func(off int64) bool { return stray[off] })
}

// rebuildProducerState is Kafka's UnifiedLog.rebuildProducerState: load
// the latest snapshot at or below lastOffset (deleting those above it and
// those at or below the log start offset) and apply every batch from the
// snapshot's offset to lastOffset, taking snapshots at the last two
// segments' bases on the way and at lastOffset at the end. After a clean
// shutdown with no snapshot at all (a log written before snapshots
// existed) it writes empty snapshots instead of reading the log, as
// Kafka does after an upgrade. REQUIRES mu.
func (l *Log) rebuildProducerState(lastOffset int64, reloadFromCleanShutdown bool) error {
	defer l.publishTxnState()
	l.forgetUnreplicated()
	m := l.producers
	l.completeSnapshots()
	if from := l.txnRebuildFrom; from >= 0 {
		// A transaction index recovery emptied is rebuilt by replaying the
		// producer state over its segment: start at or below its base.
		l.txnRebuildFrom = -1
		if err := l.deleteSnapshots(func(off int64) bool { return off > from }); err != nil {
			return err
		}
		reloadFromCleanShutdown = false
	}
	points := snapshotPoints(l.segments(), lastOffset)
	offs, err := l.listSnapshots()
	if err != nil {
		return err
	}
	if len(offs) == 0 && reloadFromCleanShutdown {
		for _, off := range points {
			m.mapEnd = off
			if err := l.takeSnapshot(false); err != nil {
				return err
			}
		}
		return nil
	}
	emptyBefore := m.isEmpty() && m.mapEnd >= lastOffset
	if err := l.truncateAndReload(l.start.Load(), lastOffset); err != nil {
		return err
	}
	if lastOffset > m.mapEnd && !emptyBefore {
		if err := l.replayProducers(lastOffset, points); err != nil {
			return err
		}
	}
	m.mapEnd = lastOffset
	return l.takeSnapshot(false)
}

// snapshotPoints are the offsets rebuildProducerState snapshots at: the
// bases of the last two segments, then lastOffset.
func snapshotPoints(segs []*Segment, lastOffset int64) []int64 {
	var points []int64
	if n := len(segs); n >= 2 {
		points = append(points, segs[n-2].base)
	}
	if n := len(segs); n >= 1 {
		points = append(points, segs[n-1].base)
	}
	return append(points, lastOffset)
}

// truncateAndReload is Kafka's ProducerStateManager.truncateAndReload:
// delete the snapshots past end and those at or below start; unless the
// state already ends at end, reload it from the latest snapshot left.
// REQUIRES mu.
func (l *Log) truncateAndReload(start, end int64) error {
	m := l.producers
	if err := l.deleteSnapshots(func(off int64) bool { return off > end || off <= start }); err != nil {
		return err
	}
	if end != m.mapEnd {
		m.clear()
		return l.loadFromSnapshot(start)
	}
	m.mapEnd = max(m.mapEnd, start)
	offs, err := l.listSnapshots()
	if err != nil {
		return err
	}
	m.lastSnap = start
	if len(offs) > 0 {
		m.lastSnap = offs[len(offs)-1]
	}
	return nil
}

// loadFromSnapshot loads the latest readable snapshot, dropping expired
// producers. A corrupt snapshot is logged, deleted, and the next older
// one tried; with none left the state starts empty at start.
// REQUIRES mu.
func (l *Log) loadFromSnapshot(start int64) error {
	m := l.producers
	for {
		offs, err := l.listSnapshots()
		if err != nil {
			return err
		}
		if len(offs) == 0 {
			m.lastSnap, m.mapEnd = start, start
			return nil
		}
		off := offs[len(offs)-1]
		entries, err := l.readSnapshot(off)
		if errors.Is(err, ErrCorruptSnapshot) {
			l.cfg.Logger.Warn("ignoring corrupt producer state snapshot", "dir", l.dir, "offset", off, "err", err)
			if err := l.deleteSnapshots(func(o int64) bool { return o == off }); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		m.load(entries, l.cfg.Now().UnixMilli(), l.cfg.ProducerIDExpiration.Milliseconds())
		m.lastSnap, m.mapEnd = off, off
		return nil
	}
}

// replayProducers applies the batches from the state's map end offset
// up to lastOffset, reading batch headers only (and the one record of a
// transaction marker). REQUIRES mu.
func (l *Log) replayProducers(lastOffset int64, points []int64) error {
	m := l.producers
	segs := l.segments()
	for i := floorSegment(segs, m.mapEnd); i < len(segs) && segs[i].base < lastOffset; i++ {
		s := segs[i]
		from := max(s.base, m.mapEnd, l.start.Load())
		m.mapEnd = from
		if slices.Contains(points, s.base) {
			if err := l.takeSnapshot(false); err != nil {
				return err
			}
		}
		if err := l.replaySegment(s, from, lastOffset); err != nil {
			return err
		}
	}
	return nil
}

// replaySegment applies s's batches that end at or after from and
// before to.
func (l *Log) replaySegment(s *Segment, from, to int64) error {
	fh, err := s.acquire()
	if err != nil {
		return err
	}
	defer fh.release()
	pos, err := s.positionOf(fh, from)
	if err != nil {
		return err
	}
	r := headerReader{f: fh.f, size: s.Size()}
	for pos < r.size {
		h, err := r.header(pos)
		if err != nil {
			return fmt.Errorf("segment %s: producer state: %w", FilenamePrefix(s.base), err)
		}
		if h.LastOffset() >= to {
			break
		}
		var batch []byte
		if h.IsControl() && h.ProducerID >= 0 {
			if batch, err = r.whole(pos, h); err != nil {
				return fmt.Errorf("segment %s: producer state: %w", FilenamePrefix(s.base), err)
			}
		}
		if err := l.producers.applyReplicated(h, batch); err != nil {
			return err
		}
		pos += h.Size()
	}
	return nil
}

// headerReader reads the batch headers of a segment in order through a
// small window, so that a replay costs one read per window, not one per
// batch, and skips the records of large batches.
type headerReader struct {
	f          File
	size       int64
	buf        []byte
	start, end int64 // file range held in buf
}

const headerWindow = 64 << 10

// header returns the header of the batch at pos. It trusts the bytes:
// they were validated when written or recovered.
func (r *headerReader) header(pos int64) (record.BatchHeader, error) {
	if pos < r.start || pos+record.BatchHeaderSize > r.end {
		if r.buf == nil {
			r.buf = make([]byte, headerWindow)
		}
		n := int(min(int64(len(r.buf)), r.size-pos))
		if n < record.BatchHeaderSize {
			return record.BatchHeader{}, fmt.Errorf("%w: %d bytes at %d, less than a batch header", ErrCorruptLog, n, pos)
		}
		if _, err := r.f.ReadAt(r.buf[:n], pos); err != nil {
			return record.BatchHeader{}, ioErr("read", r.f.Name(), err)
		}
		r.start, r.end = pos, pos+int64(n)
	}
	h, _ := record.ParseHeader(r.buf[pos-r.start:]) // a short buffer gives a zero header, refused below
	if h.Size() < record.BatchHeaderSize || pos+h.Size() > r.size {
		return h, fmt.Errorf("%w: batch of %d bytes at %d overruns %d bytes", ErrCorruptLog, h.Size(), pos, r.size)
	}
	return h, nil
}

// maxMarkerBatch bounds what is read to decode a transaction marker;
// a marker batch holds one small record.
const maxMarkerBatch = 4096

// whole returns the whole batch at pos, or nil when it is too large to
// be a transaction marker worth decoding.
func (r *headerReader) whole(pos int64, h record.BatchHeader) ([]byte, error) {
	if h.Size() > maxMarkerBatch {
		return nil, nil
	}
	b := make([]byte, h.Size())
	if _, err := r.f.ReadAt(b, pos); err != nil {
		return nil, ioErr("read", r.f.Name(), err)
	}
	return b, nil
}

// resetProducerState forgets every producer and deletes every snapshot,
// for a log restarted empty at offset (Kafka's truncateFullyAndStartAt
// followed by rebuildProducerState). REQUIRES mu.
func (l *Log) resetProducerState(offset int64) error {
	m := l.producers
	m.clear()
	l.forgetUnreplicated()
	l.publishTxnState()
	m.lastSnap, m.mapEnd = offset, offset
	return l.deleteSnapshots(func(int64) bool { return true })
}
