package record

import (
	"errors"
	"iter"
	"sync"
)

// Header is one record header. Kafka requires a non-null key; a nil Value is
// a null header value.
type Header struct {
	Key   string
	Value []byte
}

// Record is one decoded record.
type Record struct {
	Offset    int64  // absolute: BaseOffset + OffsetDelta
	Timestamp int64  // absolute; the batch's MaxTimestamp for LogAppendTime batches
	Key       []byte // nil = null key
	Value     []byte // nil = null value (a tombstone)
	Headers   []Header
}

// BatchDecoder decodes batches into records, reusing its buffers from one
// call to the next. The zero value is ready to use. It is not safe for
// concurrent use.
type BatchDecoder struct {
	// MaxDecompressedBytes bounds what one batch may decompress to; 0 means
	// DefaultMaxDecompressedBytes.
	MaxDecompressedBytes int

	data  []byte    // decompressed records
	hdrs  []Header  // headers of all records of the batch
	keys  []byte    // header key bytes, turned into one string per batch
	spans []hdrSpan // per record: its headers in hdrs
	pos   []int32   // per header: end of its key in keys
}

// hdrSpan locates one record's headers in the decoder's header slab.
type hdrSpan struct{ start, end int32 }

// decoders keeps scratch state for DecodeBatch.
var decoders = sync.Pool{New: func() any { return new(BatchDecoder) }}

// DecodeBatch validates the batch that occupies exactly b (ValidateBatch),
// decompresses it if needed (at most DefaultMaxDecompressedBytes), and
// decodes its records into dst[:0], which it grows if needed. Key and Value
// of an uncompressed batch alias b; those of a compressed batch alias a
// buffer allocated for this call. Headers are allocated per call (one slice
// and one string for all header keys of the batch), so the records stay
// valid as long as b is unchanged.
//
// Decoding checks what Kafka's DefaultRecord.readFrom checks (lengths,
// header counts, each record's length matching its fields, and the record
// count), and also that offset deltas increase and stay within
// LastOffsetDelta; failures are ErrCorruptRecord or ErrInvalidRecordCount.
func DecodeBatch(b []byte, dst []Record) ([]Record, error) {
	d := decoders.Get().(*BatchDecoder)
	dst, err := d.decode(b, dst, true)
	d.shrink()
	decoders.Put(d)
	return dst, err
}

// pooledScratchMax is the largest buffer a pooled decoder keeps.
const pooledScratchMax = 4 << 20

// shrink drops buffers too large to keep in a pool.
func (d *BatchDecoder) shrink() {
	if cap(d.data) > pooledScratchMax {
		d.data = nil
	}
	if cap(d.hdrs) > pooledScratchMax/32 {
		d.hdrs, d.keys, d.pos = nil, nil, nil
	}
	if cap(d.spans) > pooledScratchMax/8 {
		d.spans = nil
	}
	clear(d.hdrs[:cap(d.hdrs)]) // let header values go
}

// Decode is DecodeBatch without per-call allocations once the decoder has
// warmed up: Key, Value and Headers alias b or the decoder's buffers and are
// valid only until the next call of Decode.
func (d *BatchDecoder) Decode(b []byte, dst []Record) ([]Record, error) {
	return d.decode(b, dst, false)
}

func (d *BatchDecoder) decode(b []byte, dst []Record, own bool) ([]Record, error) {
	h, err := ValidateBatch(b)
	if err != nil {
		return dst[:0], err
	}
	data, err := d.records(h, b[RecordsPos:], own)
	if err != nil {
		return dst[:0], err
	}
	if int64(h.RecordCount)*minRecordSize > int64(len(data)) {
		return dst[:0], corruptErr(h.BaseOffset, RecordCountPos, ErrInvalidRecordCount,
			"%d records cannot fit in %d decompressed bytes", h.RecordCount, len(data))
	}
	if cap(dst) < int(h.RecordCount) {
		dst = make([]Record, 0, h.RecordCount)
	}
	dst = dst[:h.RecordCount]
	if err := d.parseAll(h, data, dst); err != nil {
		return dst[:0], err
	}
	d.attachHeaders(dst, own)
	return dst, nil
}

// records returns the uncompressed records section. When own is set, a
// compressed batch is decompressed into a fresh, exactly sized slice.
func (d *BatchDecoder) records(h BatchHeader, section []byte, own bool) ([]byte, error) {
	if h.Compression() == CompressionNone || len(section) == 0 {
		return section, nil // an empty section holds no records, whatever the codec
	}
	limit := d.MaxDecompressedBytes
	if limit <= 0 {
		limit = DefaultMaxDecompressedBytes
	}
	out, err := decompress(h.Compression(), d.data, section, limit)
	if err != nil {
		sentinel := ErrCorruptBatch
		if errors.Is(err, errDecompressLimit) {
			sentinel = ErrBatchTooLarge
		}
		return nil, corruptErr(h.BaseOffset, RecordsPos, sentinel, "%v: %v", h.Compression(), err)
	}
	d.data = out
	if own {
		out = append([]byte(nil), out...)
	}
	return out, nil
}

// parseAll decodes len(dst) records from data into dst, collecting headers
// in the decoder's slab.
func (d *BatchDecoder) parseAll(h BatchHeader, data []byte, dst []Record) error {
	p := recordParser{h: h, data: data, prevDelta: -1, d: d}
	d.hdrs, d.keys, d.spans, d.pos = d.hdrs[:0], d.keys[:0], d.spans[:0], d.pos[:0]
	for i := range dst {
		if err := p.next(&dst[i]); err != nil {
			return err
		}
	}
	if p.at != len(data) {
		return corruptErr(h.BaseOffset, RecordsPos+int64(p.at), ErrInvalidRecordCount,
			"incorrect declared batch size: %d bytes remain after %d records", len(data)-p.at, len(dst))
	}
	return nil
}

// attachHeaders points each record's Headers into the header slab (a copy
// of it when own is set) and makes every header key a substring of one
// string.
func (d *BatchDecoder) attachHeaders(dst []Record, own bool) {
	if len(d.hdrs) == 0 {
		return
	}
	keys := string(d.keys)
	start := 0
	for i := range d.hdrs {
		end := int(d.pos[i])
		d.hdrs[i].Key = keys[start:end]
		start = end
	}
	slab := d.hdrs
	if own {
		slab = append([]Header(nil), d.hdrs...)
	}
	for i, s := range d.spans {
		if s.end > s.start {
			dst[i].Headers = slab[s.start:s.end:s.end]
		}
	}
}

// recordParser walks the records section of one batch.
type recordParser struct {
	h         BatchHeader
	data      []byte
	at        int   // position in data
	prevDelta int64 // offset delta of the previous record
	d         *BatchDecoder
}

func (p *recordParser) fail(format string, args ...any) error {
	return corruptErr(p.h.BaseOffset, RecordsPos+int64(p.at), ErrCorruptRecord, format, args...)
}

// next decodes the record at p.at into r and moves past it.
func (p *recordParser) next(r *Record) error {
	length, n := readVarint(p.data[p.at:])
	if n <= 0 || length < minRecordSize-1 || int64(length) > int64(len(p.data)-p.at-n) {
		return p.fail("invalid record size %d", length)
	}
	body := p.data[p.at+n : p.at+n+int(length)]
	if err := p.parseBody(body, r); err != nil {
		return err
	}
	p.at += n + int(length)
	return nil
}

// parseBody decodes the fields after the record's Length. body is exactly
// the record, so reading past it is an error, as is stopping short of its
// end ("Invalid record size: expected to read N bytes").
func (p *recordParser) parseBody(body []byte, r *Record) error {
	f := fieldReader{b: body, at: 1} // byte 0: unused attributes
	tsDelta := f.varlong()
	offDelta := f.varint()
	r.Key = f.bytes()
	r.Value = f.bytes()
	if f.bad {
		return p.fail("invalid record structure")
	}
	if err := p.setOffsetTime(r, int64(offDelta), tsDelta); err != nil {
		return err
	}
	if err := p.parseHeaders(&f); err != nil {
		return err
	}
	if f.at != len(body) {
		return p.fail("invalid record size: expected to read %d bytes, read %d", len(body), f.at)
	}
	return nil
}

func (p *recordParser) setOffsetTime(r *Record, offDelta, tsDelta int64) error {
	if offDelta <= p.prevDelta || offDelta > int64(p.h.LastOffsetDelta) {
		return p.fail("offset delta %d after %d, last offset delta %d", offDelta, p.prevDelta, p.h.LastOffsetDelta)
	}
	p.prevDelta = offDelta
	r.Offset = p.h.BaseOffset + offDelta
	if p.h.TimestampType() == TimestampLogAppendTime {
		r.Timestamp = p.h.MaxTimestamp
	} else {
		r.Timestamp = p.h.BaseTimestamp + tsDelta
	}
	r.Headers = nil
	return nil
}

func (p *recordParser) parseHeaders(f *fieldReader) error {
	count := f.varint()
	if f.bad || count < 0 || int(count) > (len(f.b)-f.at)/2 {
		return p.fail("found invalid number of record headers %d", count)
	}
	d := p.d
	span := hdrSpan{start: int32(len(d.hdrs))}
	for range count {
		klen := f.varint()
		if klen < 0 {
			return p.fail("invalid negative header key size %d", klen)
		}
		key := f.take(int(klen))
		value := f.bytes()
		if f.bad {
			return p.fail("invalid record structure in header")
		}
		d.keys = append(d.keys, key...)
		d.pos = append(d.pos, int32(len(d.keys)))
		d.hdrs = append(d.hdrs, Header{Value: value})
	}
	span.end = int32(len(d.hdrs))
	d.spans = append(d.spans, span)
	return nil
}

// fieldReader reads record fields from b; after any failure bad is set and
// every later read returns zero values.
type fieldReader struct {
	b   []byte
	at  int
	bad bool
}

func (f *fieldReader) varint() int32 {
	if f.bad {
		return 0
	}
	v, n := readVarint(f.b[f.at:])
	if n <= 0 {
		f.bad = true
		return 0
	}
	f.at += n
	return v
}

func (f *fieldReader) varlong() int64 {
	if f.bad {
		return 0
	}
	v, n := readVarlong(f.b[f.at:])
	if n <= 0 {
		f.bad = true
		return 0
	}
	f.at += n
	return v
}

// take returns the next n bytes, aliasing b.
func (f *fieldReader) take(n int) []byte {
	if f.bad || n > len(f.b)-f.at {
		f.bad = true
		return nil
	}
	v := f.b[f.at : f.at+n : f.at+n]
	f.at += n
	return v
}

// bytes reads a varint length and that many bytes; a negative length is
// null (as in DefaultRecord.readFrom).
func (f *fieldReader) bytes() []byte {
	n := f.varint()
	if f.bad || n < 0 {
		return nil
	}
	return f.take(int(n))
}

// Records yields the records of every whole batch in buf, a buffer of
// concatenated batches (a fetch response, a segment file). A trailing
// partial batch is ignored, as Kafka's consumers do. A batch that fails
// ValidateBatch or DecodeBatch yields the error, with Pos relative to buf,
// and ends the sequence. Records alias buf as DecodeBatch describes.
func Records(buf []byte) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		var recs []Record
		for pos := 0; pos < len(buf); {
			_, size, err := NextBatch(buf[pos:], 0)
			if errors.Is(err, ErrShortBatch) {
				return
			}
			if err == nil {
				recs, err = DecodeBatch(buf[pos:pos+size], recs[:0])
			}
			if err != nil {
				yield(Record{}, shiftPos(err, pos))
				return
			}
			for _, r := range recs {
				if !yield(r, nil) {
					return
				}
			}
			pos += size
		}
	}
}
