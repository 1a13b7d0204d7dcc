package metadata

import "fmt"

// An entry is a list of records in one byte string (the records of a
// quorum snapshot's data; the metadata log itself holds one record per
// raft entry). Its layout:
//
//	version   1 byte, 0
//	count     uvarint, the number of records
//	records   count times: uvarint(length), then length bytes holding
//	          one record as AppendRecord writes it
//
// These numbers are part of the format and never change.
const entryVersion = 0

// recordMinSize is the smallest encoded record: frame version, api key,
// version and an empty tagged-field section, a byte each.
const recordMinSize = 4

// AppendEntry appends recs as one entry to dst.
func AppendEntry(dst []byte, recs []Record) []byte {
	dst = append(dst, entryVersion)
	dst = appendUvarint(dst, uint32(len(recs)))
	var rec []byte
	for _, r := range recs {
		rec = AppendRecord(rec[:0], r)
		dst = appendUvarint(dst, uint32(len(rec)))
		dst = append(dst, rec...)
	}
	return dst
}

// DecodeEntry decodes an entry written by AppendEntry. An empty b (an
// entry raft itself appends when a leader is elected) holds no records.
// A count or a length the bytes cannot hold, trailing bytes, or a record
// DecodeRecord refuses is an error; nothing is allocated beyond what b
// can hold.
func DecodeEntry(b []byte) ([]Record, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if b[0] != entryVersion {
		return nil, fmt.Errorf("%w: metadata entry version %d, want %d", ErrCorruptRecord, b[0], entryVersion)
	}
	r := &reader{b: b, off: 1}
	n := int(r.uvarint())
	if n > r.remaining()/(1+recordMinSize) { // a length byte and a record each
		r.fail("%d records with %d bytes left", n, r.remaining())
		n = 0
	}
	recs := make([]Record, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		size := r.uvarint()
		p := r.take(int(size))
		if r.err != nil {
			break
		}
		rec, err := DecodeRecord(p)
		if err != nil {
			return nil, fmt.Errorf("metadata entry record %d of %d: %w", i, n, err)
		}
		recs = append(recs, rec)
	}
	if r.err == nil && r.remaining() != 0 {
		r.fail("%d bytes of trailing data", r.remaining())
	}
	if r.err != nil {
		return nil, fmt.Errorf("decode metadata entry: %w", r.err)
	}
	return recs, nil
}
