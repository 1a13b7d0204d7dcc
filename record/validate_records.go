package record

import (
	"errors"
	"fmt"
)

// recordValidator walks the records of one batch for Validator, reading
// only lengths and varints: keys, values and headers are skipped, never
// copied, so a record's size costs no memory.
type recordValidator struct {
	h     BatchHeader
	src   *recordSource
	rules *ProduceRules
}

// fail is a structural fault of the records (Kafka's InvalidRecordException
// from DefaultRecord.readFrom), at the current position.
func (rv *recordValidator) fail(format string, args ...any) error {
	return corruptErr(rv.h.BaseOffset, RecordsPos+rv.src.pos(), ErrInvalidRecord, format, args...)
}

// sourceErr replaces a structural fault by the codec's failure when the
// decompressor is why the records ended early.
func (rv *recordValidator) sourceErr(err error, limit int) error {
	cerr := rv.src.codecErr()
	switch {
	case cerr == nil:
		return err
	case errors.Is(cerr, errDecompressLimit):
		return corruptErr(rv.h.BaseOffset, RecordsPos, ErrBatchTooLarge,
			"%v records decompress to more than %d bytes", rv.h.Compression(), limit)
	}
	return corruptErr(rv.h.BaseOffset, RecordsPos, ErrCorruptBatch, "%v: %v", rv.h.Compression(), cerr)
}

// next checks record i and records a rule it breaks in v.errs.
func (rv *recordValidator) next(i int32, v *Validator) error {
	length, ok := rv.src.varint()
	if !ok || length < minRecordSize-1 {
		return rv.fail("invalid record size %d", length)
	}
	start := rv.src.pos()
	tsDelta, offDelta, keyLen, err := rv.fields(start, int64(length))
	if err != nil {
		return err
	}
	if read := rv.src.pos() - start; read != int64(length) {
		return rv.fail("invalid record size: expected to read %d bytes in record payload, but instead read %d", length, read)
	}
	if offDelta != i {
		return rv.fail("record %d has offset delta %d: inner offsets must be 0, 1, 2, ...", i, offDelta)
	}
	if msg := rv.rule(i, keyLen, tsDelta, &v.badTS); msg != "" {
		v.errs = append(v.errs, RecordError{Index: i, Message: msg})
	}
	return nil
}

// fields reads the record body after its length and returns what the
// rules need. start and length bound how far the body may reach.
func (rv *recordValidator) fields(start, length int64) (tsDelta int64, offDelta, keyLen int32, err error) {
	s := rv.src
	ok := s.skip(1) // attributes, unused
	var ok2, ok3 bool
	tsDelta, ok2 = s.varlong()
	offDelta, ok3 = s.varint()
	if !ok || !ok2 || !ok3 {
		return 0, 0, 0, rv.fail("found invalid record structure")
	}
	if keyLen, err = rv.bytesField(start, length, "key"); err != nil {
		return
	}
	if _, err = rv.bytesField(start, length, "value"); err != nil {
		return
	}
	err = rv.headers(start, length)
	return
}

// bytesField skips a varint-length-prefixed field (-1 = null) that must
// end within the record, and returns its length.
func (rv *recordValidator) bytesField(start, length int64, what string) (int32, error) {
	n, ok := rv.src.varint()
	if !ok || n < -1 {
		return 0, rv.fail("invalid %s size %d", what, n)
	}
	if n > 0 && (int64(n) > start+length-rv.src.pos() || !rv.src.skip(int64(n))) {
		return 0, rv.fail("%s of %d bytes runs past the record", what, n)
	}
	return n, nil
}

func (rv *recordValidator) headers(start, length int64) error {
	count, ok := rv.src.varint()
	if !ok || count < 0 || int64(count) > (start+length-rv.src.pos())/2 {
		return rv.fail("found invalid number of record headers %d", count)
	}
	for range count {
		klen, err := rv.bytesField(start, length, "header key")
		if err != nil {
			return err
		}
		if klen < 0 {
			return rv.fail("invalid negative header key size %d", klen)
		}
		if _, err := rv.bytesField(start, length, "header value"); err != nil {
			return err
		}
	}
	return nil
}

// rule applies LogValidator.validateKey and validateTimestamp, returning
// the RecordError message of the first rule broken, or "".
func (rv *recordValidator) rule(i, keyLen int32, tsDelta int64, badTS *bool) string {
	r := rv.rules
	if r.Compacted && keyLen < 0 {
		return "Compacted topic cannot accept message without key"
	}
	if !r.CheckTimestamps {
		return ""
	}
	ts := rv.h.BaseTimestamp + tsDelta
	if rv.h.TimestampType() == TimestampLogAppendTime {
		ts = rv.h.MaxTimestamp
	}
	if ts == NoTimestamp || inBounds(ts, r.Now, r.BeforeMaxMs, r.AfterMaxMs) {
		return ""
	}
	*badTS = true
	return fmt.Sprintf("Timestamp %d of message with offset %d is out of range. The timestamp should be within [%d, %d]",
		ts, rv.h.BaseOffset+int64(i), satSub(r.Now, r.BeforeMaxMs), satAdd(r.Now, r.AfterMaxMs))
}

// inBounds reports whether now-before <= ts <= now+after, without
// overflow for bounds up to Long.MAX (Kafka's default before.max.ms).
func inBounds(ts, now, before, after int64) bool {
	if ts < now {
		return uint64(now)-uint64(ts) <= uint64(before)
	}
	return uint64(ts)-uint64(now) <= uint64(after)
}

func satSub(a, b int64) int64 {
	if b > 0 && a < minInt64+b {
		return minInt64
	}
	return a - b
}

func satAdd(a, b int64) int64 {
	if b > 0 && a > maxInt64-b {
		return maxInt64
	}
	return a + b
}

const (
	maxInt64 = 1<<63 - 1
	minInt64 = -1 << 63
)
