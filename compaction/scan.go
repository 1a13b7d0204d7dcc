package compaction

import (
	"encoding/binary"
	"fmt"

	"github.com/varve/varve/record"
)

// keyRec is what the cleaner decides a record's fate on: its offset, its
// key and whether it is a tombstone. Key aliases the batch (or the
// decoder's buffer).
type keyRec struct {
	offset    int64
	key       []byte // nil: no key
	tombstone bool
}

// batchKeys returns the keyRecs of the batch b (whose header is h). An
// uncompressed batch is validated (record.ValidateBatch: length, magic,
// CRC-32C) and then only walked for offsets, keys and value lengths
// (scanKeys), which costs a fraction of decoding every field; a
// compressed one is decoded by the worker's BatchDecoder, whose records
// stay in w.recs for a rebuild.
func (w *worker) batchKeys(h record.BatchHeader, b []byte) ([]keyRec, bool, error) {
	if h.Compression() == record.CompressionNone {
		if _, err := record.ValidateBatch(b); err != nil {
			return nil, false, err
		}
		keys, err := scanKeys(h, b[record.RecordsPos:], w.keys[:0])
		w.keys = keys
		return keys, false, err
	}
	recs, err := w.dec.Decode(b, w.recs[:0])
	w.recs = recs
	if err != nil {
		return nil, false, err
	}
	keys := w.keys[:0]
	for i := range recs {
		keys = append(keys, keyRec{offset: recs[i].Offset, key: recs[i].Key, tombstone: recs[i].Value == nil})
	}
	w.keys = keys
	return keys, true, nil
}

// scanKeys walks h.RecordCount uncompressed records (DefaultRecord:
// length varint, attributes int8, timestamp delta varlong, offset delta
// varint, key length varint, key, value length varint, value, headers),
// reading the offset delta, the key and the value's length, and checking
// that each record lies within data and that offset deltas increase
// within the batch's range.
func scanKeys(h record.BatchHeader, data []byte, dst []keyRec) ([]keyRec, error) {
	prev := int64(-1)
	for n := int32(0); n < h.RecordCount; n++ {
		length, m := binary.Varint(data)
		if m <= 0 || length < 6 || length > int64(len(data)-m) {
			return dst, scanErr(h, n, "record length")
		}
		rec := data[m : m+int(length)]
		data = data[m+int(length):]
		r, delta, err := scanRecord(rec)
		if err != nil || delta <= prev || delta > int64(h.LastOffsetDelta) {
			return dst, scanErr(h, n, "record fields or offset delta")
		}
		prev = delta
		r.offset = h.BaseOffset + delta
		dst = append(dst, r)
	}
	if len(data) != 0 {
		return dst, scanErr(h, h.RecordCount, "bytes after the last record")
	}
	return dst, nil
}

// scanRecord reads one record's body (after its length).
func scanRecord(rec []byte) (keyRec, int64, error) {
	var r keyRec
	p := 1 // attributes
	if _, m := binary.Varint(rec[p:]); m > 0 {
		p += m // timestamp delta
	} else {
		return r, 0, errScan
	}
	delta, m := binary.Varint(rec[p:])
	if m <= 0 {
		return r, 0, errScan
	}
	p += m
	klen, m := binary.Varint(rec[p:])
	if m <= 0 || klen > int64(len(rec)-p-m) {
		return r, 0, errScan
	}
	p += m
	if klen >= 0 {
		r.key = rec[p : p+int(klen) : p+int(klen)]
		p += int(klen)
	}
	vlen, m := binary.Varint(rec[p:])
	if m <= 0 || vlen > int64(len(rec)-p-m) {
		return r, 0, errScan
	}
	r.tombstone = vlen < 0
	return r, delta, nil
}

var errScan = fmt.Errorf("%w: malformed record", record.ErrCorruptRecord)

func scanErr(h record.BatchHeader, n int32, what string) error {
	return fmt.Errorf("%w: batch at offset %d, record %d: %s", record.ErrCorruptRecord, h.BaseOffset, n, what)
}
