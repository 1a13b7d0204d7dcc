package record

import "encoding/binary"

// Kafka's record fields use protobuf-style base-128 varints of zigzag-encoded
// integers (ByteUtils.writeVarint / writeVarlong): 0 -> 0x00, -1 -> 0x01,
// 1 -> 0x02, -2 -> 0x03, ... A varint (int32) takes at most 5 bytes, a varlong
// (int64) at most 10. The readers below reject encodings that are longer than
// that or whose value does not fit, instead of silently truncating.

const (
	maxVarintLen  = 5
	maxVarlongLen = binary.MaxVarintLen64
)

// appendVarint appends v as a zigzag varint.
func appendVarint(dst []byte, v int32) []byte {
	return binary.AppendUvarint(dst, uint64(uint32(v<<1)^uint32(v>>31)))
}

// appendVarlong appends v as a zigzag varlong.
func appendVarlong(dst []byte, v int64) []byte {
	return binary.AppendUvarint(dst, uint64(v<<1)^uint64(v>>63))
}

// sizeUvarint is the encoded size of u in base-128.
func sizeUvarint(u uint64) int {
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// sizeVarint is the encoded size of v as a zigzag varint.
func sizeVarint(v int32) int { return sizeUvarint(uint64(uint32(v<<1) ^ uint32(v>>31))) }

// sizeVarlong is the encoded size of v as a zigzag varlong.
func sizeVarlong(v int64) int { return sizeUvarint(uint64(v<<1) ^ uint64(v>>63)) }

// sizeVarBytes is the encoded size of a varint-length-prefixed byte string;
// nil is encoded as length -1.
func sizeVarBytes(b []byte) int {
	if b == nil {
		return 1
	}
	return sizeVarint(int32(len(b))) + len(b)
}

// readVarint decodes a zigzag varint from the start of b. n is the number of
// bytes read; n == 0 means b ended first, n < 0 means the encoding is longer
// than 5 bytes or overflows 32 bits.
func readVarint(b []byte) (v int32, n int) {
	if len(b) > 0 && b[0] < 0x80 { // fast path: one byte
		u := uint32(b[0])
		return int32(u>>1) ^ -int32(u&1), 1
	}
	var u uint64
	for i := 0; i < maxVarintLen; i++ {
		if i == len(b) {
			return 0, 0
		}
		c := b[i]
		u |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			if u > 0xffffffff {
				return 0, -1
			}
			return int32(uint32(u)>>1) ^ -int32(u&1), i + 1
		}
	}
	return 0, -1
}

// readVarlong decodes a zigzag varlong from the start of b, with the same
// conventions as readVarint (at most 10 bytes).
func readVarlong(b []byte) (v int64, n int) {
	u, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, n
	}
	return int64(u>>1) ^ -int64(u&1), n
}
