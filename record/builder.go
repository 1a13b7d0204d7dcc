package record

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"sync"
	"time"
)

// BatchBuilder accumulates records into one v2 batch, the way Kafka's
// MemoryRecordsBuilder does for a producer: offset deltas 0, 1, 2, ...;
// BaseTimestamp is the first record's timestamp and MaxTimestamp the largest;
// CreateTime; producer id, epoch and sequence -1 unless SetProducer is
// called; PartitionLeaderEpoch -1 (the leader stamps it). The built batch
// has BaseOffset 0, which the log replaces when it appends.
//
// A BatchBuilder reuses its buffers across Reset, so allocations per batch do
// not grow with the number of records. It is not safe for concurrent use.
type BatchBuilder struct {
	codec         Compression
	producerID    int64
	producerEpoch int16
	baseSequence  int32
	transactional bool

	count   int64 // records appended
	baseTS  int64
	maxTS   int64
	recs    []byte // encoded, uncompressed records
	scratch []byte // compressed records section
}

// NewBatchBuilder returns an empty builder for batches compressed with c.
func NewBatchBuilder(c Compression) *BatchBuilder {
	return &BatchBuilder{codec: c, producerID: NoProducerID, producerEpoch: NoProducerEpoch,
		baseSequence: NoSequence}
}

// SetProducer sets the idempotent producer fields of the batch (KIP-98).
func (b *BatchBuilder) SetProducer(id int64, epoch int16, baseSequence int32) {
	b.producerID, b.producerEpoch, b.baseSequence = id, epoch, baseSequence
}

// SetTransactional sets attribute bit 4.
func (b *BatchBuilder) SetTransactional(t bool) { b.transactional = t }

// Append adds a record. Its Offset is ignored (offsets are dense from 0); a
// Timestamp of 0 means now, in milliseconds since the epoch.
func (b *BatchBuilder) Append(r Record) {
	ts := r.Timestamp
	if ts == 0 {
		ts = time.Now().UnixMilli()
	}
	b.appendAt(r, ts)
}

// appendAt adds r with timestamp ts taken verbatim.
func (b *BatchBuilder) appendAt(r Record, ts int64) {
	if b.count == 0 {
		b.baseTS, b.maxTS = ts, ts
	}
	b.maxTS = max(b.maxTS, ts)
	b.recs = appendRecord(b.recs, int32(b.count), ts-b.baseTS, &r)
	b.count++
}

// Len is the number of records appended since the last Reset.
func (b *BatchBuilder) Len() int { return int(b.count) }

// UncompressedSize is the size the batch would have without compression.
func (b *BatchBuilder) UncompressedSize() int { return BatchHeaderSize + len(b.recs) }

// Reset forgets the records; the codec and producer settings stay.
func (b *BatchBuilder) Reset() {
	b.count, b.recs = 0, b.recs[:0]
}

// Build returns the batch in a newly allocated slice: a whole, valid v2
// batch with its CRC set. It fails if there are no records (Kafka rejects
// empty batches from producers) or the batch would exceed the int32 sizes
// of the format.
func (b *BatchBuilder) Build() ([]byte, error) {
	if b.codec == CompressionNone {
		return b.AppendTo(make([]byte, 0, BatchHeaderSize+len(b.recs)))
	}
	out, err := b.AppendTo(b.scratch[:0])
	if err != nil {
		return nil, err
	}
	b.scratch = out
	return append([]byte(nil), out...), nil
}

// AppendTo appends the batch to dst, as Build does but without allocating
// when dst has room.
func (b *BatchBuilder) AppendTo(dst []byte) ([]byte, error) {
	if b.count == 0 {
		return dst, fmt.Errorf("segment: build batch: %w: no records", ErrInvalidRecordCount)
	}
	if b.count > math.MaxInt32 {
		return dst, fmt.Errorf("segment: build batch: %w: %d records", ErrInvalidRecordCount, b.count)
	}
	h := BatchHeader{
		PartitionLeaderEpoch: NoPartitionLeaderEpoch,
		Magic:                MagicV2,
		Attributes:           int16(b.codec),
		LastOffsetDelta:      int32(b.count - 1),
		BaseTimestamp:        b.baseTS,
		MaxTimestamp:         b.maxTS,
		ProducerID:           b.producerID,
		ProducerEpoch:        b.producerEpoch,
		BaseSequence:         b.baseSequence,
		RecordCount:          int32(b.count),
	}
	if b.transactional {
		h.Attributes |= AttrTransactional
	}
	return appendBatch(dst, h, b.recs)
}

// appendBatch appends a batch with header h (Length and CRC computed here)
// and the uncompressed records recs, compressed with h's codec.
func appendBatch(dst []byte, h BatchHeader, recs []byte) ([]byte, error) {
	start := len(dst)
	dst = h.AppendTo(dst)
	dst, err := compress(h.Compression(), dst, recs)
	if err != nil {
		return dst[:start], fmt.Errorf("segment: build batch: %w", err)
	}
	size := len(dst) - start
	if size > math.MaxInt32 {
		return dst[:start], fmt.Errorf("segment: build batch: %w: %d bytes", ErrBatchTooLarge, size)
	}
	b := dst[start:]
	binary.BigEndian.PutUint32(b[LengthPos:], uint32(size-LogOverhead))
	binary.BigEndian.PutUint32(b[CRCPos:], crc32.Checksum(b[AttributesPos:], castagnoli))
	return dst, nil
}

// appendRecord appends one record with the given deltas (DefaultRecord.writeTo).
func appendRecord(dst []byte, offDelta int32, tsDelta int64, r *Record) []byte {
	dst = appendVarint(dst, int32(recordBodySize(offDelta, tsDelta, r)))
	dst = append(dst, 0) // attributes: unused
	dst = appendVarlong(dst, tsDelta)
	dst = appendVarint(dst, offDelta)
	dst = appendVarBytes(dst, r.Key)
	dst = appendVarBytes(dst, r.Value)
	dst = appendVarint(dst, int32(len(r.Headers)))
	for i := range r.Headers {
		hd := &r.Headers[i]
		dst = appendVarint(dst, int32(len(hd.Key)))
		dst = append(dst, hd.Key...)
		dst = appendVarBytes(dst, hd.Value)
	}
	return dst
}

// recordBodySize is the encoded size of the record after its Length field.
func recordBodySize(offDelta int32, tsDelta int64, r *Record) int {
	n := 1 + sizeVarlong(tsDelta) + sizeVarint(offDelta) + sizeVarBytes(r.Key) + sizeVarBytes(r.Value)
	n += sizeVarint(int32(len(r.Headers)))
	for i := range r.Headers {
		hd := &r.Headers[i]
		n += sizeVarint(int32(len(hd.Key))) + len(hd.Key) + sizeVarBytes(hd.Value)
	}
	return n
}

// appendVarBytes appends a varint length and b; nil is length -1.
func appendVarBytes(dst, b []byte) []byte {
	if b == nil {
		return appendVarint(dst, -1)
	}
	return append(appendVarint(dst, int32(len(b))), b...)
}

// rebuildScratch holds uncompressed records for RebuildBatch.
var rebuildScratch = sync.Pool{New: func() any { return new([]byte) }}

// RebuildBatch builds a batch from a subset of the records of the batch
// whose header is h, as Kafka's log cleaner does (MemoryRecords.filterTo):
// the same BaseOffset, LastOffsetDelta, PartitionLeaderEpoch, producer
// fields, codec and attributes, and each record keeps its offset. recs must
// be in increasing offset order within [h.BaseOffset, h.LastOffset()].
//
// Timestamps follow MemoryRecordsBuilder: BaseTimestamp is the first
// record's timestamp and MaxTimestamp the largest, except that a batch with
// a delete horizon (attribute bit 6) keeps h.BaseTimestamp as its base, and
// a LogAppendTime batch uses h.MaxTimestamp for both. With no records the
// result is exactly DefaultRecordBatch.writeEmptyHeader's 61 bytes: no
// records section, codec none, no delete horizon, BaseTimestamp -1 and
// MaxTimestamp h.MaxTimestamp (RETAIN_EMPTY keeps producer state, C8).
//
// To start a delete horizon, set AttrDeleteHorizon in h.Attributes and the
// horizon in h.BaseTimestamp before calling.
func RebuildBatch(h BatchHeader, recs []Record) ([]byte, error) {
	return AppendRebuiltBatch(nil, h, recs)
}

// AppendRebuiltBatch is RebuildBatch appending to dst.
func AppendRebuiltBatch(dst []byte, h BatchHeader, recs []Record) ([]byte, error) {
	if err := checkRebuild(h, recs); err != nil {
		return dst, err
	}
	if len(recs) == 0 {
		h.Attributes &^= AttrCompressionMask | AttrDeleteHorizon
		h.BaseTimestamp, h.RecordCount, h.Magic = NoTimestamp, 0, MagicV2
		return appendBatch(dst, h, nil)
	}
	h.BaseTimestamp, h.MaxTimestamp = rebuiltTimestamps(h, recs)
	h.RecordCount = int32(len(recs))
	h.Magic = MagicV2
	buf := rebuildScratch.Get().(*[]byte)
	defer rebuildScratch.Put(buf)
	scratch := (*buf)[:0]
	for i := range recs {
		r := &recs[i]
		scratch = appendRecord(scratch, int32(r.Offset-h.BaseOffset), r.Timestamp-h.BaseTimestamp, r)
	}
	*buf = scratch
	if cap(scratch) > pooledScratchMax {
		*buf = nil
	}
	return appendBatch(dst, h, scratch)
}

func checkRebuild(h BatchHeader, recs []Record) error {
	if !h.Compression().valid() || h.LastOffsetDelta < 0 || len(recs) > int(h.LastOffsetDelta)+1 {
		return fmt.Errorf("segment: rebuild batch at offset %d: %w: codec %d, %d records, last offset delta %d",
			h.BaseOffset, ErrInvalidRecordCount, h.Compression(), len(recs), h.LastOffsetDelta)
	}
	prev := h.BaseOffset - 1
	for i := range recs {
		if o := recs[i].Offset; o <= prev || o > h.LastOffset() {
			return fmt.Errorf("segment: rebuild batch at offset %d: %w: record offset %d after %d, last offset %d",
				h.BaseOffset, ErrCorruptRecord, o, prev, h.LastOffset())
		}
		prev = recs[i].Offset
	}
	return nil
}

// rebuiltTimestamps returns the base and max timestamps of a rebuilt batch;
// REQUIRES len(recs) > 0.
func rebuiltTimestamps(h BatchHeader, recs []Record) (base, maxTS int64) {
	if h.TimestampType() == TimestampLogAppendTime {
		base, maxTS = h.MaxTimestamp, h.MaxTimestamp
	} else {
		base, maxTS = recs[0].Timestamp, recs[0].Timestamp
		for i := range recs {
			maxTS = max(maxTS, recs[i].Timestamp)
		}
	}
	if h.HasDeleteHorizon() {
		base = h.BaseTimestamp
	}
	return base, maxTS
}
