package compaction

import (
	"errors"
	"fmt"
	"os"

	"github.com/varve/varve/segment"
)

// lastOfProducer reports whether h is the last data batch of its producer
// in the log: Kafka keeps such a batch, even emptied, so that the
// producer's sequence state survives compaction (invariant C8). The log
// has no producer-state snapshots, so the first time a pass needs to know,
// it reads every batch header of the log (61 bytes per batch, no record
// data) and records each producer id's last data offset. Batches appended
// after the pass began are not seen, which can only keep a batch that
// Kafka would drop.
func (p *pass) lastOfProducer(h segment.BatchHeader) (bool, error) {
	if h.ProducerID < 0 {
		return false, nil
	}
	if p.producers == nil {
		p.producers = map[int64]int64{}
		for _, s := range p.c.segs {
			if err := p.scanProducers(s); err != nil {
				return false, err
			}
		}
	}
	return p.producers[h.ProducerID] == h.LastOffset(), nil
}

// scanProducers reads the batch headers of one segment.
func (p *pass) scanProducers(s segment.SegmentInfo) error {
	f, err := p.fs.OpenFile(s.Path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("segment %s: %w", s.Path, ErrSegmentsChanged)
	}
	if err != nil {
		return fmt.Errorf("open segment %s: %w", s.Path, err)
	}
	defer f.Close()
	var buf [segment.BatchHeaderSize]byte
	for pos := int64(0); pos+segment.BatchHeaderSize <= s.Size; {
		if _, err := f.ReadAt(buf[:], pos); err != nil {
			return fmt.Errorf("read segment %s at %d: %w", s.Path, pos, err)
		}
		h, err := segment.ParseHeader(buf[:])
		if err != nil || h.Size() < segment.BatchHeaderSize {
			return fmt.Errorf("%w: %s at byte %d: batch length %d", ErrCorruptSegment, s.Path, pos, h.Length)
		}
		if h.ProducerID >= 0 && !h.IsControl() {
			p.producers[h.ProducerID] = h.LastOffset()
		}
		pos += h.Size()
	}
	return nil
}
