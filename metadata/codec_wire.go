package metadata

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The primitives of Kafka's generated message format, in their flexible
// ("compact") form, which every metadata record uses (flexibleVersions
// "0+" in each schema). Integers are big-endian.
//
//	int8 int16 int32 int64   1, 2, 4, 8 bytes
//	uint16                   2 bytes (RegisterBrokerRecord's Port)
//	bool                     1 byte, 0 false, anything else true
//	uuid                     16 bytes
//	uvarint                  unsigned LEB128, at most 5 bytes (a 32-bit value)
//	compact string           uvarint(length+1), then the UTF-8 bytes; 0 is null
//	compact array            uvarint(count+1), then the elements; 0 is null
//	tagged fields            uvarint(count), then per field uvarint(tag),
//	                         uvarint(size) and size bytes; tags ascending
//
// Every struct, the record itself and each struct in an array, ends with
// its tagged-field section, empty (one 0 byte) when no field is set.

func appendUvarint(b []byte, v uint32) []byte {
	return binary.AppendUvarint(b, uint64(v))
}

func appendInt16(b []byte, v int16) []byte { return binary.BigEndian.AppendUint16(b, uint16(v)) }
func appendInt32(b []byte, v int32) []byte { return binary.BigEndian.AppendUint32(b, uint32(v)) }
func appendInt64(b []byte, v int64) []byte { return binary.BigEndian.AppendUint64(b, uint64(v)) }

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendString(b []byte, s string) []byte {
	b = appendUvarint(b, uint32(len(s))+1)
	return append(b, s...)
}

// appendNullableString writes nil as null.
func appendNullableString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, 0)
	}
	return appendString(b, *s)
}

// appendInt32s writes a non-nullable array: nil and empty are the same.
func appendInt32s(b []byte, s []int32) []byte {
	b = appendUvarint(b, uint32(len(s))+1)
	for _, v := range s {
		b = appendInt32(b, v)
	}
	return b
}

// appendNullableInt32s writes nil as null and an empty slice as empty.
func appendNullableInt32s(b []byte, s []int32) []byte {
	if s == nil {
		return append(b, 0)
	}
	return appendInt32s(b, s)
}

// taggedField is a tagged field to write: its tag and its payload's
// encoder.
type taggedField struct {
	tag uint32
	enc func([]byte) []byte
}

// appendTags appends a tagged-field section; fields are in ascending tag
// order, as Kafka writes them.
func appendTags(b []byte, fields []taggedField) []byte {
	b = appendUvarint(b, uint32(len(fields)))
	for _, f := range fields {
		payload := f.enc(nil)
		b = appendUvarint(b, f.tag)
		b = appendUvarint(b, uint32(len(payload)))
		b = append(b, payload...)
	}
	return b
}

// reader decodes the primitives above. The first failure sticks: later
// reads return zero values, so a decoder reads a whole struct and checks
// r.err once. No read allocates more than the bytes left can hold.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s at byte %d", ErrCorruptRecord, fmt.Sprintf(format, args...), r.off)
	}
}

func (r *reader) remaining() int { return len(r.b) - r.off }

// take returns the next n bytes, or nil (and fails) when fewer are left.
func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > r.remaining() {
		r.fail("truncated: %d bytes wanted, %d left", n, r.remaining())
		return nil
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p
}

func (r *reader) int8() int8 {
	if p := r.take(1); p != nil {
		return int8(p[0])
	}
	return 0
}

func (r *reader) int16() int16 {
	if p := r.take(2); p != nil {
		return int16(binary.BigEndian.Uint16(p))
	}
	return 0
}

func (r *reader) int32() int32 {
	if p := r.take(4); p != nil {
		return int32(binary.BigEndian.Uint32(p))
	}
	return 0
}

func (r *reader) int64() int64 {
	if p := r.take(8); p != nil {
		return int64(binary.BigEndian.Uint64(p))
	}
	return 0
}

func (r *reader) bool() bool { return r.int8() != 0 }

func (r *reader) uuid() (u [16]byte) {
	copy(u[:], r.take(16))
	return u
}

// uvarint reads an unsigned varint of at most 5 bytes holding a 32-bit
// value, as Kafka's ByteUtils.readUnsignedVarint.
func (r *reader) uvarint() uint32 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	switch {
	case n == 0:
		r.fail("truncated varint")
		return 0
	case n < 0 || n > 5 || v > math.MaxUint32:
		r.fail("varint too long")
		return 0
	}
	r.off += n
	return uint32(v)
}

// length reads a compact length (count+1, 0 for null) and checks that
// count elements of at least minSize bytes each fit in what is left.
func (r *reader) length(what string, minSize int) (n int, null bool) {
	v := r.uvarint()
	if r.err != nil {
		return 0, false
	}
	if v == 0 {
		return 0, true
	}
	n = int(v - 1)
	if n > r.remaining()/minSize {
		r.fail("%s of %d elements with %d bytes left", what, n, r.remaining())
		return 0, false
	}
	return n, false
}

// string reads a non-nullable string. Kafka's reader also refuses
// strings over 32767 bytes, which its writer never produces; this one
// bounds them by the input only, so that nothing Varve writes is
// unreadable to it.
func (r *reader) string(field string) string {
	s := r.nullableString(field)
	if s == nil {
		r.fail("%s: null in a non-nullable string", field)
		return ""
	}
	return *s
}

func (r *reader) nullableString(field string) *string {
	n, null := r.length(field, 1)
	if null || r.err != nil {
		return nil
	}
	s := string(r.take(n))
	return &s
}

// int32s reads a non-nullable array; empty gives nil.
func (r *reader) int32s(field string) []int32 {
	s, null := r.readInt32s(field)
	if null {
		r.fail("%s: null in a non-nullable array", field)
	}
	return s
}

// nullableInt32s reads a nullable array: null gives nil, empty gives an
// empty, non-nil slice.
func (r *reader) nullableInt32s(field string) []int32 {
	s, null := r.readInt32s(field)
	if !null && s == nil && r.err == nil {
		return []int32{}
	}
	return s
}

func (r *reader) readInt32s(field string) ([]int32, bool) {
	n, null := r.length(field, 4)
	if null || n == 0 || r.err != nil {
		return nil, null
	}
	s := make([]int32, n)
	for i := range s {
		s[i] = r.int32()
	}
	return s, false
}

// skipUUIDs reads and drops a (nullable) array of uuids.
func (r *reader) skipUUIDs(field string) {
	n, _ := r.length(field, 16)
	r.take(16 * n)
}

// tags reads a tagged-field section. Each field's payload goes to field
// as a reader of its own, which must consume it whole; field returns
// false for a tag it does not know, which is skipped (Kafka keeps those
// as unknown tagged fields and so ignores them).
func (r *reader) tags(field func(tag uint32, sub *reader) bool) {
	count := r.uvarint()
	for i := uint32(0); i < count && r.err == nil; i++ {
		tag, size := r.uvarint(), r.uvarint()
		start := r.off
		payload := r.take(int(size))
		if r.err != nil {
			return
		}
		sub := &reader{b: payload}
		if !field(tag, sub) {
			continue
		}
		if sub.err == nil && sub.remaining() != 0 {
			sub.fail("%d bytes left in tagged field %d", sub.remaining(), tag)
		}
		if sub.err != nil {
			r.off = start + sub.off
			r.err = fmt.Errorf("tagged field %d at byte %d: %w", tag, start, sub.err)
		}
	}
}

// noTags reads a tagged-field section of a struct that has no tagged
// fields of its own.
func (r *reader) noTags() {
	r.tags(func(uint32, *reader) bool { return false })
}
