package replica

// Offset lookups by time, for ListOffsets.

// OffsetForTime is Kafka's lookup for a ListOffsets timestamp: the first
// committed offset whose batch's max timestamp is at least ts, with that
// timestamp; found false when no committed record is that recent.
func (p *Partition) OffsetForTime(ts int64) (offset, timestamp int64, found bool, err error) {
	l, err := p.current()
	if err != nil {
		return -1, -1, false, err
	}
	off, rts, found, err := l.OffsetForTime(ts)
	if err != nil || !found || off >= p.HighWatermark() {
		return -1, -1, false, err
	}
	return off, rts, true, nil
}

// MaxTimestampOffset is KIP-734: the offset and timestamp of the record
// with the largest timestamp; found false in an empty log.
func (p *Partition) MaxTimestampOffset() (offset, timestamp int64, found bool, err error) {
	l, err := p.current()
	if err != nil {
		return -1, -1, false, err
	}
	var best int64 = -1
	for _, s := range l.Segments() {
		best = max(best, s.MaxTimestamp)
	}
	if best < 0 {
		return -1, -1, false, nil
	}
	off, rts, found, err := l.OffsetForTime(best)
	if err != nil || !found {
		return -1, -1, false, err
	}
	return off, rts, true, nil
}
