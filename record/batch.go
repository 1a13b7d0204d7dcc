package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// RecordBatch v2 (magic 2), exactly as Kafka stores it on disk and sends it on
// the wire (DefaultRecordBatch.java). All integers are big-endian.
//
//	pos  size  field                 notes
//	  0     8  BaseOffset            assigned by the leader; NOT covered by the CRC
//	  8     4  Length                bytes after this field; batch size = 12 + Length
//	 12     4  PartitionLeaderEpoch  stamped by the leader; NOT covered by the CRC
//	 16     1  Magic                 2
//	 17     4  CRC                   CRC-32C (Castagnoli) of bytes [21, 12+Length)
//	 21     2  Attributes            bits 0-2 compression, 3 timestamp type,
//	                                 4 transactional, 5 control, 6 delete horizon
//	 23     4  LastOffsetDelta       last offset = BaseOffset + LastOffsetDelta
//	 27     8  BaseTimestamp         delete horizon instead when attribute bit 6 is set
//	 35     8  MaxTimestamp          the LogAppendTime when attribute bit 3 is set
//	 43     8  ProducerId            -1 = none
//	 51     2  ProducerEpoch         -1 = none
//	 53     4  BaseSequence          -1 = none
//	 57     4  RecordsCount          number of records that follow
//	 61     -  Records               compressed as a whole when bits 0-2 != 0
//
// Each record (DefaultRecord.java), all varints zigzag-encoded (varint.go):
//
//	Length varint          bytes of the record after this field
//	Attributes int8        unused, 0
//	TimestampDelta varlong timestamp - BaseTimestamp
//	OffsetDelta varint     offset - BaseOffset
//	KeyLength varint       -1 = null key
//	Key bytes
//	ValueLength varint     -1 = null value (a tombstone)
//	Value bytes
//	HeadersCount varint
//	Headers                HeaderKeyLength varint (>= 0), HeaderKey (UTF-8),
//	                       HeaderValueLength varint (-1 = null), HeaderValue
//
// These constants are part of Kafka's on-disk and wire format and must not
// change.
const (
	BatchHeaderSize = 61 // RECORD_BATCH_OVERHEAD
	LogOverhead     = 12 // LOG_OVERHEAD: BaseOffset + Length

	// MinBatchLength is the smallest legal Length field (a batch of no records).
	MinBatchLength = BatchHeaderSize - LogOverhead

	// MagicV2 is the only magic value a stored batch may carry.
	MagicV2 = 2

	// Byte positions of the header fields within a batch.
	BaseOffsetPos           = 0
	LengthPos               = 8
	PartitionLeaderEpochPos = 12
	MagicPos                = 16
	CRCPos                  = 17
	AttributesPos           = 21
	LastOffsetDeltaPos      = 23
	BaseTimestampPos        = 27
	MaxTimestampPos         = 35
	ProducerIDPos           = 43
	ProducerEpochPos        = 51
	BaseSequencePos         = 53
	RecordCountPos          = 57
	RecordsPos              = 61

	// Attribute bits.
	AttrCompressionMask = 0x07
	AttrTimestampType   = 0x08 // set: LogAppendTime
	AttrTransactional   = 0x10
	AttrControl         = 0x20
	AttrDeleteHorizon   = 0x40 // BaseTimestamp holds the delete horizon (KIP-534)

	// Sentinels Kafka uses for absent values (RecordBatch.NO_*).
	NoTimestamp            = -1
	NoProducerID           = -1
	NoProducerEpoch        = -1
	NoSequence             = -1
	NoPartitionLeaderEpoch = -1

	// minRecordSize is the smallest encoded record: one byte each for Length,
	// Attributes, TimestampDelta, OffsetDelta, KeyLength, ValueLength and
	// HeadersCount.
	minRecordSize = 7
)

// castagnoli is the CRC-32C table; hash/crc32 uses SSE4.2 (amd64) or the
// CRC32 instructions (arm64) for it.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// TimestampType says what a batch's timestamps mean.
type TimestampType int8

// Kafka's timestamp types (TimestampType.java).
const (
	NoTimestampType        TimestampType = -1 // magic 0 messages
	TimestampCreateTime    TimestampType = 0
	TimestampLogAppendTime TimestampType = 1
)

func (t TimestampType) String() string {
	switch t {
	case TimestampCreateTime:
		return "CreateTime"
	case TimestampLogAppendTime:
		return "LogAppendTime"
	case NoTimestampType:
		return "NoTimestampType"
	}
	return fmt.Sprintf("TimestampType(%d)", int8(t))
}

// BatchHeader is the decoded 61-byte header of a v2 batch.
type BatchHeader struct {
	BaseOffset           int64
	Length               int32
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	BaseTimestamp        int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	RecordCount          int32
}

// Size is the whole batch's size in bytes: LogOverhead + Length.
func (h BatchHeader) Size() int64 { return LogOverhead + int64(h.Length) }

// LastOffset is the offset of the batch's last record (kept by compaction
// even when that record is removed).
func (h BatchHeader) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// NextOffset is the offset that follows the batch.
func (h BatchHeader) NextOffset() int64 { return h.LastOffset() + 1 }

// Compression is the codec of the records section.
func (h BatchHeader) Compression() Compression {
	return Compression(h.Attributes & AttrCompressionMask)
}

// TimestampType says whether MaxTimestamp is CreateTime or LogAppendTime.
func (h BatchHeader) TimestampType() TimestampType {
	if h.Attributes&AttrTimestampType != 0 {
		return TimestampLogAppendTime
	}
	return TimestampCreateTime
}

// IsTransactional reports attribute bit 4.
func (h BatchHeader) IsTransactional() bool { return h.Attributes&AttrTransactional != 0 }

// IsControl reports attribute bit 5 (transaction markers).
func (h BatchHeader) IsControl() bool { return h.Attributes&AttrControl != 0 }

// HasDeleteHorizon reports attribute bit 6: BaseTimestamp is then the time
// after which compaction may drop the batch's tombstones.
func (h BatchHeader) HasDeleteHorizon() bool { return h.Attributes&AttrDeleteHorizon != 0 }

// DeleteHorizon returns the delete horizon and whether the batch has one.
func (h BatchHeader) DeleteHorizon() (int64, bool) {
	return h.BaseTimestamp, h.HasDeleteHorizon()
}

// AppendTo appends the 61-byte encoding of h, fields taken verbatim
// (including CRC and Length), to dst.
func (h BatchHeader) AppendTo(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.BaseOffset))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.Length))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.PartitionLeaderEpoch))
	dst = append(dst, byte(h.Magic))
	dst = binary.BigEndian.AppendUint32(dst, h.CRC)
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.Attributes))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.LastOffsetDelta))
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.BaseTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.MaxTimestamp))
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.ProducerID))
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.ProducerEpoch))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.BaseSequence))
	return binary.BigEndian.AppendUint32(dst, uint32(h.RecordCount))
}

// ParseHeader decodes the 61-byte header at the start of b. It checks
// nothing but the length of b (ErrShortBatch); use ValidateBatch for a batch
// that came from outside.
func ParseHeader(b []byte) (BatchHeader, error) {
	if len(b) < BatchHeaderSize {
		return BatchHeader{}, shortErr(-1, BatchHeaderSize, len(b))
	}
	return parseHeader(b), nil
}

// parseHeader decodes a header; REQUIRES len(b) >= BatchHeaderSize.
func parseHeader(b []byte) BatchHeader {
	b = b[:BatchHeaderSize]
	return BatchHeader{
		BaseOffset:           int64(binary.BigEndian.Uint64(b[BaseOffsetPos:])),
		Length:               int32(binary.BigEndian.Uint32(b[LengthPos:])),
		PartitionLeaderEpoch: int32(binary.BigEndian.Uint32(b[PartitionLeaderEpochPos:])),
		Magic:                int8(b[MagicPos]),
		CRC:                  binary.BigEndian.Uint32(b[CRCPos:]),
		Attributes:           int16(binary.BigEndian.Uint16(b[AttributesPos:])),
		LastOffsetDelta:      int32(binary.BigEndian.Uint32(b[LastOffsetDeltaPos:])),
		BaseTimestamp:        int64(binary.BigEndian.Uint64(b[BaseTimestampPos:])),
		MaxTimestamp:         int64(binary.BigEndian.Uint64(b[MaxTimestampPos:])),
		ProducerID:           int64(binary.BigEndian.Uint64(b[ProducerIDPos:])),
		ProducerEpoch:        int16(binary.BigEndian.Uint16(b[ProducerEpochPos:])),
		BaseSequence:         int32(binary.BigEndian.Uint32(b[BaseSequencePos:])),
		RecordCount:          int32(binary.BigEndian.Uint32(b[RecordCountPos:])),
	}
}

// ValidateBatch checks the one batch that occupies exactly b
// (len(b) == 12 + Length) without decoding its records, in this order:
//
//  1. b holds at least the Length field, Length >= 49 (ErrCorruptBatch), and
//     b holds the whole batch (ErrShortBatch) and nothing more (ErrCorruptBatch);
//  2. magic is 2 (ErrInvalidMagic);
//  3. the CRC-32C of b[21:] matches the CRC field (ErrCRCMismatch);
//  4. the header is consistent (checkHeader): a known codec, RecordCount >= 0,
//     LastOffsetDelta >= 0, RecordCount <= LastOffsetDelta+1, and for an
//     uncompressed batch room for RecordCount records (ErrInvalidRecordCount).
//
// It does not allocate unless it fails. Compacted batches legitimately have
// fewer records than offsets; ValidateClientBatch adds the stricter rules
// Kafka applies to batches from producers.
func ValidateBatch(b []byte) (BatchHeader, error) {
	if len(b) < LogOverhead {
		return BatchHeader{}, shortErr(-1, LogOverhead, len(b))
	}
	length := int32(binary.BigEndian.Uint32(b[LengthPos:]))
	if err := checkLength(b, length, math.MaxInt32); err != nil {
		return BatchHeader{}, err
	}
	if size := LogOverhead + int(length); size != len(b) {
		if size > len(b) {
			return BatchHeader{}, shortErr(baseOffsetOf(b), size, len(b))
		}
		return BatchHeader{}, corruptErr(baseOffsetOf(b), LengthPos, ErrCorruptBatch,
			"length field says %d bytes but the buffer holds %d", size, len(b))
	}
	h := parseHeader(b)
	if crc := crc32.Checksum(b[AttributesPos:], castagnoli); crc != h.CRC {
		return h, corruptErr(h.BaseOffset, CRCPos, ErrCRCMismatch,
			"stored crc = %d, computed crc = %d", h.CRC, crc)
	}
	return h, checkHeader(h)
}

// ValidateClientBatch is ValidateBatch plus the checks Kafka's LogValidator
// applies to a batch appended by a client (AppendOrigin.CLIENT): at least one
// record, and exactly one record per offset (RecordCount == LastOffsetDelta+1).
func ValidateClientBatch(b []byte) (BatchHeader, error) {
	h, err := ValidateBatch(b)
	if err != nil {
		return h, err
	}
	if h.RecordCount <= 0 {
		return h, corruptErr(h.BaseOffset, RecordCountPos, ErrInvalidRecordCount,
			"invalid reported count for record batch: %d", h.RecordCount)
	}
	if int64(h.RecordCount) != int64(h.LastOffsetDelta)+1 {
		return h, corruptErr(h.BaseOffset, RecordCountPos, ErrInvalidRecordCount,
			"inconsistent batch offset range [%d, %d] and count of records %d",
			h.BaseOffset, h.LastOffset(), h.RecordCount)
	}
	return h, nil
}

// checkLength checks the Length field of the batch at the start of b: at
// least MinBatchLength, the whole batch no larger than maxBatch, and magic 2
// when b is long enough to show it.
func checkLength(b []byte, length int32, maxBatch int) error {
	off := baseOffsetOf(b)
	if length < MinBatchLength {
		return corruptErr(off, LengthPos, ErrCorruptBatch,
			"record batch size %d is smaller than the minimum allowed overhead %d",
			int64(length)+LogOverhead, BatchHeaderSize)
	}
	if size := int64(length) + LogOverhead; size > int64(maxBatch) {
		return corruptErr(off, LengthPos, ErrBatchTooLarge,
			"record batch size %d exceeds the maximum %d", size, maxBatch)
	}
	if len(b) > MagicPos && b[MagicPos] != MagicV2 {
		return corruptErr(off, MagicPos, ErrInvalidMagic,
			"magic %d, only magic %d is stored", int8(b[MagicPos]), MagicV2)
	}
	return nil
}

// checkHeader checks the fields of a parsed header that bound the records.
func checkHeader(h BatchHeader) error {
	if c := h.Compression(); !c.valid() {
		return corruptErr(h.BaseOffset, AttributesPos, ErrCorruptBatch,
			"unknown compression type id %d", int8(c))
	}
	switch {
	case h.RecordCount < 0:
		return corruptErr(h.BaseOffset, RecordCountPos, ErrInvalidRecordCount,
			"negative record count %d", h.RecordCount)
	case h.LastOffsetDelta < 0:
		return corruptErr(h.BaseOffset, LastOffsetDeltaPos, ErrInvalidRecordCount,
			"negative last offset delta %d", h.LastOffsetDelta)
	case int64(h.RecordCount) > int64(h.LastOffsetDelta)+1:
		return corruptErr(h.BaseOffset, RecordCountPos, ErrInvalidRecordCount,
			"%d records in an offset range of %d", h.RecordCount, int64(h.LastOffsetDelta)+1)
	case h.Compression() == CompressionNone &&
		int64(h.RecordCount)*minRecordSize > int64(h.Length)-MinBatchLength:
		return corruptErr(h.BaseOffset, RecordCountPos, ErrInvalidRecordCount,
			"%d records cannot fit in %d bytes", h.RecordCount, int64(h.Length)-MinBatchLength)
	}
	return nil
}

// NextBatch reads the header of the batch at the start of buf, a buffer of
// concatenated batches (a segment being recovered, a produce request), and
// returns it with the batch's size in bytes. It checks the length bounds
// (>= 61 bytes, <= maxBatchBytes; maxBatchBytes <= 0 means no limit beyond
// int32) and the magic, but not the CRC: call ValidateBatch(buf[:size]) for
// that.
//
// When buf ends before the batch does (a torn tail), the error is
// ErrShortBatch; size is then the batch's full size if the Length field could
// be read (0 otherwise), and the header is filled in if 61 bytes were there.
func NextBatch(buf []byte, maxBatchBytes int) (BatchHeader, int, error) {
	if maxBatchBytes <= 0 {
		maxBatchBytes = math.MaxInt32
	}
	if len(buf) < LogOverhead {
		return BatchHeader{}, 0, shortErr(-1, LogOverhead, len(buf))
	}
	length := int32(binary.BigEndian.Uint32(buf[LengthPos:]))
	if err := checkLength(buf, length, maxBatchBytes); err != nil {
		return BatchHeader{}, 0, err
	}
	size := LogOverhead + int(length)
	if len(buf) < BatchHeaderSize {
		return BatchHeader{}, size, shortErr(baseOffsetOf(buf), size, len(buf))
	}
	h := parseHeader(buf)
	if len(buf) < size {
		return h, size, shortErr(h.BaseOffset, size, len(buf))
	}
	return h, size, nil
}

// SetBaseOffset writes base into bytes 0-7 of the batch b in place. The CRC
// does not cover them, so the batch stays valid.
func SetBaseOffset(b []byte, base int64) {
	binary.BigEndian.PutUint64(b[BaseOffsetPos:], uint64(base))
}

// SetPartitionLeaderEpoch writes epoch into bytes 12-15 of the batch b in
// place; the CRC does not cover them.
func SetPartitionLeaderEpoch(b []byte, epoch int32) {
	binary.BigEndian.PutUint32(b[PartitionLeaderEpochPos:], uint32(epoch))
}

// SetMaxTimestampLogAppendTime turns the batch b into a LogAppendTime batch
// with the broker's time ts, as Kafka's DefaultRecordBatch.setMaxTimestamp
// does: it sets attribute bit 3 and MaxTimestamp and recomputes the CRC. The
// records are not touched; readers give every record the MaxTimestamp. b must
// hold the whole batch.
func SetMaxTimestampLogAppendTime(b []byte, ts int64) {
	attrs := binary.BigEndian.Uint16(b[AttributesPos:]) | AttrTimestampType
	binary.BigEndian.PutUint16(b[AttributesPos:], attrs)
	binary.BigEndian.PutUint64(b[MaxTimestampPos:], uint64(ts))
	end := LogOverhead + int(int32(binary.BigEndian.Uint32(b[LengthPos:])))
	end = max(AttributesPos, min(end, len(b)))
	binary.BigEndian.PutUint32(b[CRCPos:], crc32.Checksum(b[AttributesPos:end], castagnoli))
}

// baseOffsetOf is the BaseOffset field of b, or -1 if b is too short.
func baseOffsetOf(b []byte) int64 {
	if len(b) < LengthPos {
		return -1
	}
	return int64(binary.BigEndian.Uint64(b))
}

// Errors. Every failure is a *CorruptBatchError whose Err is one of these
// sentinels, so errors.Is works with them; every one except ErrShortBatch
// also matches ErrCorruptBatch (a torn tail is incomplete, not corrupt).
var (
	ErrCorruptBatch       = errors.New("corrupt record batch")
	ErrShortBatch         = errors.New("incomplete record batch")
	ErrInvalidMagic       = errors.New("invalid record batch magic")
	ErrBatchTooLarge      = errors.New("record batch too large")
	ErrInvalidRecordCount = errors.New("invalid record count")
	ErrCRCMismatch        = errors.New("record batch crc mismatch")
	ErrCorruptRecord      = errors.New("corrupt record")

	// ErrInvalidRecord: a client batch Kafka's LogValidator refuses: a
	// control batch, or a producer id with a negative sequence (Kafka's
	// INVALID_RECORD). It comes wrapped in a *CorruptBatchError, so it
	// also matches ErrCorruptBatch.
	ErrInvalidRecord = errors.New("invalid record")
)

// CorruptBatchError says which batch failed, where, and why.
type CorruptBatchError struct {
	Offset int64  // the batch's BaseOffset field, -1 if unknown
	Pos    int64  // byte position of the fault, relative to the examined buffer
	Reason string // what was found
	Err    error  // one of the sentinel errors above
}

func (e *CorruptBatchError) Error() string {
	return fmt.Sprintf("record: batch at offset %d, byte %d: %v: %s", e.Offset, e.Pos, e.Err, e.Reason)
}

// Unwrap returns the sentinel.
func (e *CorruptBatchError) Unwrap() error { return e.Err }

// Is makes every error but ErrShortBatch match ErrCorruptBatch.
func (e *CorruptBatchError) Is(target error) bool {
	return target == ErrCorruptBatch && e.Err != ErrShortBatch
}

func corruptErr(offset int64, pos int64, sentinel error, format string, args ...any) error {
	return &CorruptBatchError{Offset: offset, Pos: pos, Reason: fmt.Sprintf(format, args...), Err: sentinel}
}

func shortErr(offset int64, need, have int) error {
	return &CorruptBatchError{Offset: offset, Pos: int64(have), Err: ErrShortBatch,
		Reason: fmt.Sprintf("need %d bytes, have %d", need, have)}
}

// shiftPos returns err with its position moved by delta, for errors found in
// a sub-slice of the buffer the caller knows.
func shiftPos(err error, delta int) error {
	var ce *CorruptBatchError
	if delta == 0 || !errors.As(err, &ce) {
		return err
	}
	moved := *ce
	moved.Pos += int64(delta)
	return &moved
}
