package segment

import (
	"fmt"

	"github.com/varve/varve/record"
)

// OffsetForTime finds the first record whose timestamp is at least ts
// (Kafka's ListOffsets by timestamp). It returns the record's offset and
// timestamp, or found=false when every record is older.
//
// As in Kafka, the search uses each segment's largest timestamp to pick
// the segment, the time index to find where to start in it, and then
// decodes batches until a record qualifies.
func (l *Log) OffsetForTime(ts int64) (offset, timestamp int64, found bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkWritable(); err != nil {
		return 0, 0, false, err
	}
	start := l.start.Load()
	for _, s := range l.segments() {
		if s.maxTimestamp < ts || s.NextOffset() <= start {
			continue
		}
		off, rts, ok, err := s.findTimestamp(ts, start)
		if err != nil || ok {
			return off, rts, ok, err
		}
	}
	return 0, 0, false, nil
}

// findTimestamp scans s from its time index entry for ts. REQUIRES the
// writer lock.
func (s *Segment) findTimestamp(ts, startOffset int64) (int64, int64, bool, error) {
	fh, err := s.acquire()
	if err != nil {
		return 0, 0, false, err
	}
	defer fh.release()
	from := max(fh.times.Lookup(ts).Offset, startOffset)
	pos := fh.offsets.Lookup(from).Position
	size := s.size.Load()
	var hbuf [record.BatchHeaderSize]byte
	var recs []record.Record
	for pos < size {
		h, err := s.header(fh, pos, &hbuf)
		if err != nil {
			return 0, 0, false, err
		}
		if h.MaxTimestamp >= ts && h.LastOffset() >= startOffset {
			b := make([]byte, h.Size())
			if _, err := fh.f.ReadAt(b, pos); err != nil {
				return 0, 0, false, ioErr("read", s.Path(), err)
			}
			if recs, err = record.DecodeBatch(b, recs[:0]); err != nil {
				return 0, 0, false, fmt.Errorf("segment %s at %d: %w", FilenamePrefix(s.base), pos, err)
			}
			for _, r := range recs {
				if r.Timestamp >= ts && r.Offset >= startOffset {
					return r.Offset, r.Timestamp, true, nil
				}
			}
		}
		pos += h.Size()
	}
	return 0, 0, false, nil
}
