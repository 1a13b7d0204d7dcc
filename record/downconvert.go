package record

import (
	"encoding/binary"
	"hash/crc32"
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
	var out []byte
	var recs []Record
	for p := 0; p < len(buf); {
		h, n, err := NextBatch(buf[p:], len(buf)-p)
		if err != nil {
			break // a partial tail, as a region may end mid-batch
		}
		if !h.IsControl() {
			if recs, err = DecodeBatch(buf[p:p+n], recs[:0]); err != nil {
				return nil, err
			}
			for i := range recs {
				out = appendLegacyMessage(out, &recs[i], magic, h.TimestampType() == TimestampLogAppendTime)
			}
		}
		p += n
	}
	return out, nil
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
