package record

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
)

// DownConvert rewrites the whole v2 batches in buf as a legacy message
// set of the given magic (0 or 1), for consumers that fetch with Fetch
// v0-3 and cannot read v2 batches, as Kafka's down-conversion does
// (RecordsUtil.downConvert). Each record becomes one uncompressed message
// at its own offset (see legacy.go for the layout); magic 1 keeps
// timestamps and the timestamp type, magic 0 has neither. Headers, which
// the old formats cannot carry, are dropped; control batches (transaction
// markers) are skipped, as Kafka skips them. A trailing partial batch is
// ignored. Kafka re-compresses with the batch's codec; Varve sends the
// messages uncompressed, which every legacy consumer reads.
func DownConvert(buf []byte, magic int8) ([]byte, error) {
	return DownConvertLimited(buf, magic, math.MaxInt32, DefaultMaxDecompressedBytes)
}

// DownConvertLimited is DownConvert within maxBytes of output and
// maxInflate bytes of decompressed records: it converts batch by batch
// and stops before the first message that would take the result past
// maxBytes, and at the first batch whose records decompress to more than
// maxInflate, which is never inflated past that. A 2 KB batch holding 60
// MiB of zeros costs at most maxInflate of memory, however many such
// batches buf holds, and the decompression scratch is reused from batch
// to batch.
//
// When not even the first message fits, the result is that message's
// 12-byte log overhead alone, its size field saying how large it is: an
// incomplete message, which Fetch v0-3 clients read as "the next message
// is larger than the fetch size" (the Java consumer's
// RecordTooLargeException, librdkafka's "might be too large to fetch")
// instead of as an empty partition, as when Kafka returns a first message
// truncated at the fetch size.
func DownConvertLimited(buf []byte, magic int8, maxBytes, maxInflate int) ([]byte, error) {
	var out []byte
	var recs []Record
	d := BatchDecoder{MaxDecompressedBytes: max(maxInflate, 1)}
	for p := 0; p < len(buf); {
		h, n, err := NextBatch(buf[p:], len(buf)-p)
		if err != nil {
			break // a partial tail, as a region may end mid-batch
		}
		if !h.IsControl() {
			recs, err = d.Decode(buf[p:p+n], recs[:0])
			if errors.Is(err, ErrBatchTooLarge) {
				return overflow(out, h.BaseOffset, max(maxBytes, maxInflate)+1), nil
			}
			if err != nil {
				return nil, err
			}
			var full bool
			if out, full = appendLegacyMessages(out, recs, h, magic, maxBytes); full {
				return out, nil
			}
		}
		p += n
	}
	return out, nil
}

// appendLegacyMessages appends recs as legacy messages while they fit in
// maxBytes; full reports that one did not.
func appendLegacyMessages(out []byte, recs []Record, h BatchHeader, magic int8, maxBytes int) ([]byte, bool) {
	for i := range recs {
		size := legacyMessageSize(&recs[i], magic)
		if len(out)+size > maxBytes {
			return overflow(out, recs[i].Offset, size-LogOverhead), true
		}
		out = appendLegacyMessage(out, &recs[i], magic, h.TimestampType() == TimestampLogAppendTime)
	}
	return out, false
}

// overflow ends a result that has no whole message with the log overhead
// of one of size bytes at offset (see DownConvertLimited).
func overflow(out []byte, offset int64, size int) []byte {
	if len(out) > 0 {
		return out
	}
	out = binary.BigEndian.AppendUint64(out, uint64(offset))
	return binary.BigEndian.AppendUint32(out, uint32(min(size, math.MaxInt32)))
}

// legacyMessageSize is what appendLegacyMessage appends for r.
func legacyMessageSize(r *Record, magic int8) int {
	size := LogOverhead + 4 + 1 + 1 + 4 + len(r.Key) + 4 + len(r.Value)
	if magic >= 1 {
		size += 8
	}
	return size
}

// appendLegacyMessage appends one uncompressed magic 0 or 1 message.
func appendLegacyMessage(dst []byte, r *Record, magic int8, logAppendTime bool) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(r.Offset))
	sizeAt := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, 0) // size, set below
	crcAt := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, 0) // CRC, set below
	dst = append(dst, byte(magic))
	var attrs byte
	if magic >= 1 && logAppendTime {
		attrs |= byte(AttrTimestampType)
	}
	dst = append(dst, attrs)
	if magic >= 1 {
		dst = binary.BigEndian.AppendUint64(dst, uint64(r.Timestamp))
	}
	dst = appendLegacyBytes(dst, r.Key)
	dst = appendLegacyBytes(dst, r.Value)
	binary.BigEndian.PutUint32(dst[sizeAt:], uint32(len(dst)-crcAt))
	binary.BigEndian.PutUint32(dst[crcAt:], crc32.ChecksumIEEE(dst[crcAt+4:]))
	return dst
}

func appendLegacyBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.BigEndian.AppendUint32(dst, 0xffffffff)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}
