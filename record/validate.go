package record

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// ProduceRules are the topic's rules a producer's batches must keep, the
// inputs of Kafka's LogValidator for an append from a client.
type ProduceRules struct {
	// MaxBatchBytes is max.message.bytes: no batch may be larger, and no
	// batch's records may decompress to more. 0 means
	// DefaultMaxDecompressedBytes.
	MaxBatchBytes int

	// Compacted: cleanup.policy includes compact, so every record needs a
	// key.
	Compacted bool

	// CheckTimestamps is set for message.timestamp.type=CreateTime: each
	// record's timestamp must lie within [Now-BeforeMaxMs, Now+AfterMaxMs]
	// (message.timestamp.before.max.ms, message.timestamp.after.max.ms).
	CheckTimestamps bool
	Now             int64
	BeforeMaxMs     int64
	AfterMaxMs      int64
}

// ErrInvalidTimestamp is a record whose CreateTime lies outside the
// topic's bounds (Kafka's INVALID_TIMESTAMP).
var ErrInvalidTimestamp = errors.New("invalid timestamp")

// RecordError names one refused record: its index in its batch, and why
// (a RecordError of Kafka's ProduceResponse v8+).
type RecordError struct {
	Index   int32
	Message string
}

// RecordsRejectedError is Kafka's RecordValidationException: the records
// of one batch that break a per-record rule (a key, a timestamp). Err is
// ErrInvalidTimestamp if any record's timestamp is out of bounds, else
// ErrInvalidRecord; either way nothing of the append may be written.
type RecordsRejectedError struct {
	Offset  int64 // the batch's BaseOffset field
	Err     error
	Records []RecordError
}

func (e *RecordsRejectedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "record: batch at offset %d: %v: %d records rejected", e.Offset, e.Err, len(e.Records))
	if len(e.Records) > 0 {
		fmt.Fprintf(&b, ", the first (index %d): %s", e.Records[0].Index, e.Records[0].Message)
	}
	return b.String()
}

// Unwrap returns ErrInvalidTimestamp or ErrInvalidRecord.
func (e *RecordsRejectedError) Unwrap() error { return e.Err }

// Validator decodes every record of a producer's batches without keeping
// them: it is Kafka's LogValidator for AppendOrigin.CLIENT. Its window
// and codec readers are reused from one call to the next, so a warm
// Validator allocates nothing for a valid append. The zero value is ready
// to use; it is not safe for concurrent use.
type Validator struct {
	window []byte
	codecs decompressors
	src    recordSource
	errs   []RecordError
	badTS  bool // some record of errs has an out-of-bounds timestamp
}

var validators = sync.Pool{New: func() any { return new(Validator) }}

// ValidateProduced is Validator.Validate with a pooled Validator.
func ValidateProduced(buf []byte, rules ProduceRules) error {
	v := validators.Get().(*Validator)
	err := v.Validate(buf, rules)
	v.shrink()
	validators.Put(v)
	return err
}

// Validate checks buf, the concatenated batches a producer sent for one
// partition, the way Kafka's LogValidator does before anything is
// appended:
//
//  1. every batch is whole, at most MaxBatchBytes, and nothing trails the
//     last one (ErrCorruptBatch; ErrBatchTooLarge);
//  2. each passes ValidateClientBatch (length, magic, CRC, one record per
//     offset) and is neither a control batch nor has a producer id
//     without a sequence nor the transactional bit without a producer id
//     (ErrInvalidRecord);
//  3. its records section decompresses (ErrCorruptBatch), to at most
//     MaxBatchBytes (ErrBatchTooLarge), streamed through a fixed window;
//  4. exactly RecordCount records fill it: lengths and varints that add
//     up, header counts that fit, offset deltas 0, 1, 2, ... and nothing
//     after the last record (ErrInvalidRecord);
//  5. the per-record rules hold: a key on a compacted topic, a timestamp
//     within bounds. Every record that breaks one is listed in a
//     *RecordsRejectedError.
//
// Failures of steps 1-4 are *CorruptBatchError with Pos relative to buf.
func (v *Validator) Validate(buf []byte, rules ProduceRules) error {
	if len(buf) == 0 {
		return corruptErr(-1, 0, ErrCorruptBatch, "no record batch")
	}
	limit := rules.MaxBatchBytes
	if limit <= 0 {
		limit = DefaultMaxDecompressedBytes
	}
	for p := 0; p < len(buf); {
		_, n, err := NextBatch(buf[p:], limit)
		if errors.Is(err, ErrShortBatch) {
			return corruptErr(baseOffsetOf(buf[p:]), int64(p), ErrCorruptBatch,
				"%d bytes after the last whole batch do not make a batch", len(buf)-p)
		}
		if err == nil {
			err = v.validateBatch(buf[p:p+n], &rules, limit)
		}
		if err != nil {
			return shiftPos(err, p)
		}
		p += n
	}
	return nil
}

func (v *Validator) validateBatch(b []byte, rules *ProduceRules, limit int) error {
	h, err := ValidateClientBatch(b)
	if err != nil {
		return err
	}
	if err := checkProducerBits(h); err != nil {
		return err
	}
	src, err := v.open(h, b[RecordsPos:], limit)
	if err != nil {
		return err
	}
	v.errs, v.badTS = v.errs[:0], false
	rv := recordValidator{h: h, src: src, rules: rules}
	for i := range h.RecordCount {
		if err := rv.next(i, v); err != nil {
			return rv.sourceErr(err, limit)
		}
	}
	if !src.atEnd() {
		return rv.sourceErr(rv.fail("incorrect declared batch size, records still remaining after %d records", h.RecordCount), limit)
	}
	return v.rejected(h)
}

// checkProducerBits is LogValidator.validateBatch's rules for a client:
// no control batches, a sequence for every producer id, and no
// transactional batch without a producer.
func checkProducerBits(h BatchHeader) error {
	switch {
	case h.IsControl():
		return corruptErr(h.BaseOffset, AttributesPos, ErrInvalidRecord,
			"clients are not allowed to write control records")
	case h.ProducerID >= 0 && h.BaseSequence < 0:
		return corruptErr(h.BaseOffset, BaseSequencePos, ErrInvalidRecord,
			"invalid sequence number %d in record batch with producer id %d", h.BaseSequence, h.ProducerID)
	case h.IsTransactional() && h.ProducerID < 0:
		return corruptErr(h.BaseOffset, ProducerIDPos, ErrInvalidRecord,
			"transactional record batch without a producer id")
	}
	return nil
}

// open returns the source of the batch's records.
func (v *Validator) open(h BatchHeader, section []byte, limit int) (*recordSource, error) {
	v.src = recordSource{buf: section, limit: int64(limit)}
	src := &v.src
	if h.Compression() == CompressionNone {
		return src, nil
	}
	r, err := v.codecs.open(h.Compression(), section, limit)
	if err != nil {
		return nil, corruptErr(h.BaseOffset, RecordsPos, ErrCorruptBatch, "%v: %v", h.Compression(), err)
	}
	if v.window == nil {
		v.window = make([]byte, 0, streamWindow)
	}
	src.r, src.buf = r, v.window[:0]
	return src, nil
}

// rejected turns the collected record errors into Kafka's
// RecordValidationException: INVALID_TIMESTAMP wins over INVALID_RECORD.
func (v *Validator) rejected(h BatchHeader) error {
	if len(v.errs) == 0 {
		return nil
	}
	e := &RecordsRejectedError{Offset: h.BaseOffset, Err: ErrInvalidRecord,
		Records: append([]RecordError(nil), v.errs...)}
	if v.badTS {
		e.Err = ErrInvalidTimestamp
	}
	return e
}

// shrink drops what is too large to keep in a pool.
func (v *Validator) shrink() {
	if cap(v.codecs.snappy.buffer) > pooledScratchMax {
		v.codecs.snappy.buffer = nil
	}
	if cap(v.errs) > 1024 {
		v.errs = nil
	}
	v.codecs.src.Reset(nil)
	v.codecs.snappy.reset(nil, 0)
	v.src = recordSource{}
}
