package raftlog

import (
	"encoding/binary"

	"github.com/varve/varve/record"
)

// Entry headers. A normal entry's Data may carry record headers for its
// batch's record beside EntryTypeHeader: Data written by EncodeData is
//
//	0xff               headersMarker
//	uvarint            the header count, at least 1
//	per header         uvarint(len(key)), key, uvarint(len(value)), value
//	...                the record's value
//
// and is stored as a record with those headers and that value, so that
// Kafka's readers of the log see the value alone. Data that does not
// parse so, or would not be written back byte for byte, or names a
// reserved key, is stored as it is, with RawHeader when it begins with
// the marker, so that every entry reads back as it was appended.
const (
	headersMarker = 0xff
	// RawHeader marks a record whose value is an entry's Data as it is,
	// though it begins with headersMarker.
	RawHeader = "raft.entry.raw"
)

// EncodeData returns entry Data that stores value with headers (at
// least one, none named EntryTypeHeader, RawHeader or EmptyHeader).
func EncodeData(headers []record.Header, value []byte) []byte {
	b := []byte{headersMarker}
	b = binary.AppendUvarint(b, uint64(len(headers)))
	for _, h := range headers {
		b = binary.AppendUvarint(b, uint64(len(h.Key)))
		b = append(b, h.Key...)
		b = binary.AppendUvarint(b, uint64(len(h.Value)))
		b = append(b, h.Value...)
	}
	return append(b, value...)
}

// DecodeData splits Data written by EncodeData into its headers and
// value; ok is false for Data stored as it is.
func DecodeData(data []byte) (headers []record.Header, value []byte, ok bool) {
	if len(data) == 0 || data[0] != headersMarker {
		return nil, data, false
	}
	p := 1
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(data[p:])
		if n <= 0 {
			return 0, false
		}
		p += n
		return v, true
	}
	count, okc := next()
	if !okc || count == 0 || count > uint64(len(data)) {
		return nil, data, false
	}
	for range count {
		var h record.Header
		for i := range 2 {
			n, okn := next()
			if !okn || n > uint64(len(data)-p) {
				return nil, data, false
			}
			if i == 0 {
				h.Key = string(data[p : p+int(n)])
			} else {
				h.Value = data[p : p+int(n) : p+int(n)]
			}
			p += int(n)
		}
		if h.Key == EntryTypeHeader || h.Key == RawHeader || h.Key == EmptyHeader {
			return nil, data, false
		}
		headers = append(headers, h)
	}
	value = data[p:]
	if string(EncodeData(headers, value)) != string(data) { // not canonical: uvarints of extra length
		return nil, data, false
	}
	return headers, value, true
}
