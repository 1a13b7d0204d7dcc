package record

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/bits"
)

// Legacy message sets (magic 0 and 1, LegacyRecord.java), which Produce
// v0-v2 carry. A message set is a sequence of entries, big-endian:
//
//	pos  size  field
//	  0     8  Offset        producers send 0..n-1 or anything; ignored here
//	  8     4  MessageSize   bytes of the message that follows
//	 12     4  CRC           CRC-32 (IEEE, not Castagnoli) of bytes [16, 12+MessageSize)
//	 16     1  Magic         0 or 1
//	 17     1  Attributes    bits 0-2 compression (0 none, 1 gzip, 2 snappy,
//	                         3 lz4); bit 3 timestamp type (magic 1 only)
//	 18     8  Timestamp     magic 1 only
//	  -     4  KeyLength     -1 = null
//	  -     -  Key
//	  -     4  ValueLength   -1 = null
//	  -     -  Value
//
// A compressed message is a wrapper: its value is a whole inner message set
// compressed with the wrapper's codec; inner messages are not compressed
// again. Magic 0 LZ4 wrappers come from Kafka 0.8-0.9 clients whose LZ4 frame
// header checksum was computed over the wrong bytes (KAFKA-3160); Kafka reads
// them ignoring that checksum, and so does UpConvertLegacy.
const (
	legacySizePos      = 8
	legacyCRCPos       = 12
	legacyMagicPos     = 16
	legacyAttrPos      = 17
	legacyTimestampPos = 18
	legacyOverheadV0   = 14 // RECORD_OVERHEAD_V0: CRC, magic, attributes, key and value lengths
	legacyOverheadV1   = 22 // RECORD_OVERHEAD_V1: plus the timestamp
)

// legacyMessage is one decoded legacy message.
type legacyMessage struct {
	offset    int64
	magic     int8
	attrs     int8
	timestamp int64
	key       []byte
	value     []byte
}

func (m *legacyMessage) codec() Compression { return Compression(m.attrs & AttrCompressionMask) }

// UpConvertLegacy converts a magic 0/1 message set, as Produce v0-v2 carry
// it, into one v2 batch, as Kafka's LogValidator does when the log's message
// format is v2: the records get offset deltas 0, 1, 2, ... in message-set
// order (inner messages of compressed wrappers in place of their wrapper);
// magic 1 records keep their timestamps (a LogAppendTime wrapper's timestamp
// replaces its inner ones), magic 0 records get NoTimestamp (-1); the batch
// is compressed with the codec of the first compressed wrapper (none if
// there is none) and has no producer id.
//
// Every message's CRC-32 is checked, wrappers' and inner messages' alike.
// Nested compression, inner magic different from the wrapper's, a trailing
// partial message, an empty set, and more than DefaultMaxDecompressedBytes
// of decompressed data are errors (*CorruptBatchError).
func UpConvertLegacy(msgset []byte) ([]byte, error) {
	c := legacyConverter{budget: DefaultMaxDecompressedBytes, b: NewBatchBuilder(CompressionNone)}
	if err := c.walk(msgset, nil, 0); err != nil {
		return nil, err
	}
	if c.b.Len() == 0 {
		return nil, corruptErr(-1, 0, ErrInvalidRecordCount, "legacy message set holds no messages")
	}
	return c.b.Build()
}

// legacyConverter collects the records of a message set into a builder.
type legacyConverter struct {
	b        *BatchBuilder
	codecSet bool
	budget   int // decompressed bytes still allowed
}

// walk adds the messages of set, which sits at byte base of the outermost
// set; wrapper is the message whose value set is, nil at the top level.
func (c *legacyConverter) walk(set []byte, wrapper *legacyMessage, base int) error {
	for pos := 0; pos < len(set); {
		m, size, err := parseLegacy(set[pos:])
		if err != nil {
			return shiftPos(err, base+pos)
		}
		if err := c.add(&m, wrapper, base+pos); err != nil {
			return err
		}
		pos += size
	}
	return nil
}

// add adds one message: its record, or the records of its inner set.
func (c *legacyConverter) add(m *legacyMessage, wrapper *legacyMessage, pos int) error {
	if wrapper != nil && m.magic != wrapper.magic {
		return corruptErr(m.offset, int64(pos+legacyMagicPos), ErrInvalidMagic,
			"inner message magic %d in a magic %d wrapper", m.magic, wrapper.magic)
	}
	if m.codec() == CompressionNone {
		c.b.appendAt(Record{Key: m.key, Value: m.value}, legacyTimestamp(m, wrapper))
		return nil
	}
	if wrapper != nil {
		return corruptErr(m.offset, int64(pos+legacyAttrPos), ErrCorruptRecord,
			"compressed message inside a compressed message set")
	}
	inner, err := c.decompress(m)
	if err != nil {
		return corruptErr(m.offset, int64(pos), ErrCorruptRecord, "%v wrapper: %v", m.codec(), err)
	}
	if !c.codecSet {
		c.b.codec, c.codecSet = m.codec(), true
	}
	// Positions inside the decompressed set are reported at the wrapper.
	if err := c.walk(inner, m, 0); err != nil {
		var ce *CorruptBatchError
		if errors.As(err, &ce) {
			sentinel := ce.Err
			if sentinel == ErrShortBatch { // a torn inner set is corruption, not a torn tail
				sentinel = ErrCorruptRecord
			}
			return corruptErr(m.offset, int64(pos), sentinel, "inside the wrapper, byte %d: %s", ce.Pos, ce.Reason)
		}
		return err
	}
	return nil
}

// decompress returns a wrapper's inner message set, charging its size to
// the converter's budget.
func (c *legacyConverter) decompress(m *legacyMessage) ([]byte, error) {
	if !m.codec().valid() || m.codec() == CompressionZstd {
		return nil, errors.New("unknown legacy compression codec")
	}
	if m.value == nil {
		return nil, errors.New("null value")
	}
	src := m.value
	if m.codec() == CompressionLZ4 && m.magic == 0 {
		src = fixLZ4HeaderChecksum(src)
	}
	out, err := decompress(m.codec(), nil, src, c.budget)
	if err != nil {
		return nil, err
	}
	c.budget -= len(out)
	return out, nil
}

// legacyTimestamp is the timestamp a converted record keeps.
func legacyTimestamp(m, wrapper *legacyMessage) int64 {
	if m.magic == 0 {
		return NoTimestamp
	}
	if wrapper != nil && wrapper.attrs&AttrTimestampType != 0 {
		return wrapper.timestamp
	}
	return m.timestamp
}

// parseLegacy decodes the message-set entry at the start of b and returns it
// with its size in bytes.
func parseLegacy(b []byte) (legacyMessage, int, error) {
	if len(b) < legacyCRCPos {
		return legacyMessage{}, 0, shortErr(-1, legacyCRCPos, len(b))
	}
	m := legacyMessage{offset: int64(binary.BigEndian.Uint64(b))}
	size := int64(int32(binary.BigEndian.Uint32(b[legacySizePos:])))
	if size < legacyOverheadV0 {
		return m, 0, corruptErr(m.offset, legacySizePos, ErrCorruptRecord, "message size %d is below the minimum %d", size, legacyOverheadV0)
	}
	if size > int64(len(b)-legacyCRCPos) {
		return m, 0, shortErr(m.offset, int(size)+legacyCRCPos, len(b))
	}
	msg := b[legacyCRCPos : legacyCRCPos+size]
	m.magic, m.attrs = int8(msg[legacyMagicPos-legacyCRCPos]), int8(msg[legacyAttrPos-legacyCRCPos])
	if m.magic != 0 && m.magic != 1 {
		return m, 0, corruptErr(m.offset, legacyMagicPos, ErrInvalidMagic, "legacy magic %d", m.magic)
	}
	if crc := crc32.ChecksumIEEE(msg[4:]); crc != binary.BigEndian.Uint32(msg) {
		return m, 0, corruptErr(m.offset, legacyCRCPos, ErrCRCMismatch,
			"stored crc = %d, computed crc = %d", binary.BigEndian.Uint32(msg), crc)
	}
	if err := m.parseBody(msg); err != nil {
		return m, 0, err
	}
	return m, legacyCRCPos + int(size), nil
}

// parseBody reads the timestamp, key and value of the message msg (from its
// CRC to its end), which they must fill exactly.
func (m *legacyMessage) parseBody(msg []byte) error {
	at := legacyTimestampPos - legacyCRCPos
	if m.magic == 1 {
		if len(msg) < legacyOverheadV1 {
			return corruptErr(m.offset, legacySizePos, ErrCorruptRecord, "magic 1 message of %d bytes", len(msg))
		}
		m.timestamp = int64(binary.BigEndian.Uint64(msg[at:]))
		at += 8
	}
	var ok bool
	if m.key, at, ok = legacyBytes(msg, at); !ok {
		return corruptErr(m.offset, int64(legacyCRCPos+at), ErrCorruptRecord, "bad key length")
	}
	if m.value, at, ok = legacyBytes(msg, at); !ok || at != len(msg) {
		return corruptErr(m.offset, int64(legacyCRCPos+at), ErrCorruptRecord, "bad value length")
	}
	return nil
}

// legacyBytes reads an int32 length and that many bytes (-1 = null).
func legacyBytes(b []byte, at int) ([]byte, int, bool) {
	if len(b)-at < 4 {
		return nil, at, false
	}
	n := int64(int32(binary.BigEndian.Uint32(b[at:])))
	at += 4
	if n < 0 {
		return nil, at, n == -1
	}
	if n > int64(len(b)-at) {
		return nil, at, false
	}
	return b[at : at+int(n) : at+int(n)], at + int(n), true
}

// fixLZ4HeaderChecksum returns a copy of an LZ4 frame whose header checksum
// byte is recomputed correctly, so that a reader that checks it accepts the
// frames of magic 0 producers (KafkaLZ4BlockInputStream ignores it for magic
// 0). Anything that is not an LZ4 frame is returned unchanged.
func fixLZ4HeaderChecksum(frame []byte) []byte {
	const magic, minHeader = 0x184D2204, 7
	if len(frame) < minHeader || binary.LittleEndian.Uint32(frame) != magic {
		return frame
	}
	flg := frame[4]
	end := 6 // FLG, BD
	if flg&0x08 != 0 {
		end += 8 // content size
	}
	if flg&0x01 != 0 {
		end += 4 // dictionary id
	}
	if len(frame) <= end {
		return frame
	}
	fixed := append([]byte(nil), frame...)
	fixed[end] = byte(xxh32Short(fixed[4:end]) >> 8)
	return fixed
}

// xxh32Short is XXH32 with seed 0 of an input shorter than 16 bytes (an LZ4
// frame descriptor is at most 14).
func xxh32Short(b []byte) uint32 {
	const p1, p2, p3, p4, p5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
	h := uint32(p5) + uint32(len(b))
	for ; len(b) >= 4; b = b[4:] {
		h += binary.LittleEndian.Uint32(b) * p3
		h = bits.RotateLeft32(h, 17) * p4
	}
	for _, c := range b {
		h += uint32(c) * p5
		h = bits.RotateLeft32(h, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	h ^= h >> 16
	return h
}
