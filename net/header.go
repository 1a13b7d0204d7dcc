package net

import (
	"encoding/binary"
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Request header layout (Kafka's RequestHeader, big-endian), at the start of
// a frame after its size prefix:
//
//	offset 0  int16   request_api_key
//	offset 2  int16   request_api_version
//	offset 4  int32   correlation_id
//	offset 8  int16   client_id length, -1 for null (header v1 and v2: never compact)
//	offset 10 [n]byte client_id
//	then, header v2 only (flexible request versions, KIP-482):
//	          uvarint number of tagged fields, then per field uvarint tag,
//	          uvarint size, [size]byte data (skipped: no header tag is defined)
//
// Header v0 (no client id) was only used by ControlledShutdown v0, which
// Kafka no longer serves; Varve parses every request as v1 or v2.
const minHeaderLen = 10

// apiVersionsKey is ApiVersions, whose response header is always v0.
const apiVersionsKey = 18

// RequestHeader is a parsed request header.
type RequestHeader struct {
	Key           int16
	Version       int16
	CorrelationID int32
	ClientID      string // "" for a null client id
	Flexible      bool   // header v2 (and response header v1)
}

// flexibleFrom[key] is the first flexible version of each API key kmsg
// knows, or -1 when the API has no flexible version. Built once from kmsg's
// generated message specs.
var flexibleFrom = buildFlexibleTable()

func buildFlexibleTable() []int16 {
	var table []int16
	for key := int16(0); key < 1024; key++ {
		req := kmsg.RequestForKey(key)
		if req == nil {
			table = append(table, -1)
			continue
		}
		table = append(table, firstFlexible(req))
	}
	for len(table) > 0 && table[len(table)-1] == -1 {
		table = table[:len(table)-1]
	}
	return table
}

func firstFlexible(req kmsg.Request) int16 {
	for v := int16(0); v <= req.MaxVersion(); v++ {
		req.SetVersion(v)
		if req.IsFlexible() {
			return v
		}
	}
	return -1
}

// IsFlexible reports whether requests of this key and version use request
// header v2 and response header v1. As in Kafka, a version above the highest
// known one is flexible when the API has flexible versions at all (flexible
// version ranges are open-ended); an unknown key is not flexible.
func IsFlexible(key, version int16) bool {
	if key < 0 || int(key) >= len(flexibleFrom) || version < 0 {
		return false
	}
	f := flexibleFrom[key]
	return f >= 0 && version >= f
}

// ParseRequestHeader parses the header at the start of frame and returns it
// with the body that follows. The body aliases frame. Any key and version
// parse; whether they are served is the handler's decision.
func ParseRequestHeader(frame []byte) (RequestHeader, []byte, error) {
	var h RequestHeader
	if len(frame) < minHeaderLen {
		return h, nil, &HeaderError{Field: "fixed fields", Offset: 0, Reason: "frame shorter than 10 bytes"}
	}
	h.Key = int16(binary.BigEndian.Uint16(frame[0:]))
	h.Version = int16(binary.BigEndian.Uint16(frame[2:]))
	h.CorrelationID = int32(binary.BigEndian.Uint32(frame[4:]))
	h.Flexible = IsFlexible(h.Key, h.Version)
	n := int(int16(binary.BigEndian.Uint16(frame[8:])))
	pos := minHeaderLen
	switch {
	case n < -1:
		return h, nil, &HeaderError{Field: "client id", Offset: 8, Reason: "negative length"}
	case n > len(frame)-pos:
		return h, nil, &HeaderError{Field: "client id", Offset: 8, Reason: "length past end of frame"}
	case n > 0:
		h.ClientID = string(frame[pos : pos+n])
		pos += n
	}
	if h.Flexible {
		var err error
		if pos, err = skipTaggedFields(frame, pos); err != nil {
			return h, nil, err
		}
	}
	return h, frame[pos:], nil
}

// skipTaggedFields skips a KIP-482 tagged-field section starting at pos.
func skipTaggedFields(b []byte, pos int) (int, error) {
	count, pos, err := readUvarint(b, pos, "tagged field count")
	if err != nil {
		return 0, err
	}
	for i := uint64(0); i < count; i++ {
		if _, pos, err = readUvarint(b, pos, "tag"); err != nil {
			return 0, err
		}
		var size uint64
		if size, pos, err = readUvarint(b, pos, "tagged field size"); err != nil {
			return 0, err
		}
		if size > uint64(len(b)-pos) {
			return 0, &HeaderError{Field: "tagged field", Offset: pos, Reason: "size past end of frame"}
		}
		pos += int(size)
	}
	return pos, nil
}

// readUvarint reads one unsigned varint (at most 32 bits, as Kafka's
// ByteUtils.readUnsignedVarint) at pos.
func readUvarint(b []byte, pos int, field string) (uint64, int, error) {
	v, n := binary.Uvarint(b[pos:])
	if n <= 0 || v > math.MaxUint32 {
		return 0, 0, &HeaderError{Field: field, Offset: pos, Reason: "malformed unsigned varint"}
	}
	return v, pos + n, nil
}

// AppendRequestHeader appends h in wire form (header v1, or v2 when
// h.Flexible, with no tagged fields) to dst. It is the inverse of
// ParseRequestHeader, for clients and tests.
func AppendRequestHeader(dst []byte, h RequestHeader) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.Key))
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.Version))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.CorrelationID))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(h.ClientID)))
	dst = append(dst, h.ClientID...)
	if h.Flexible {
		dst = append(dst, 0)
	}
	return dst
}

// responseHeaderLen is the size of the response header Kafka sends for a
// request: correlation id (v0), plus an empty tagged-field section (v1) for
// flexible versions, except ApiVersions whose response header is always v0
// so that a client can read it before knowing what the broker supports.
func responseHeaderLen(key int16, flexible bool) int {
	if flexible && key != apiVersionsKey {
		return 5
	}
	return 4
}
