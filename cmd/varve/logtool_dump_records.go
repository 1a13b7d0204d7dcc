package main

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/varve/varve/record"
)

var dumpCastagnoli = crc32.MakeTable(crc32.Castagnoli)

// records decodes and prints the records of one batch, one line each, as
// Kafka's --deep-iteration --print-data-log does. A batch whose only
// fault is its CRC is decoded anyway (from a copy with the CRC re-summed),
// since seeing its records is the point of dumping a damaged log.
func (ld *logDump) records(b scannedBatch) {
	if b.Header.Magic != record.MagicV2 {
		return
	}
	buf := b.Bytes
	if errors.Is(b.Invalid, record.ErrCRCMismatch) {
		ld.fixed = append(ld.fixed[:0], buf...)
		binary.BigEndian.PutUint32(ld.fixed[record.CRCPos:], crc32.Checksum(ld.fixed[record.AttributesPos:], dumpCastagnoli))
		buf = ld.fixed
		ld.d.printf("  records decoded although the crc does not match:\n")
	}
	recs, err := ld.dec.Decode(buf, ld.recs[:0])
	ld.recs = recs
	if err != nil {
		ld.d.printf("  records not decoded: %s\n", describeBatchError(err))
		return
	}
	for i := range recs {
		ld.noteOffset(recs[i].Offset)
		ld.d.printf("%s\n", ld.formatRecord(b.Header, &recs[i]))
	}
}

// noteOffset records a gap in record offsets, as Kafka's tool does.
func (ld *logDump) noteOffset(off int64) {
	if ld.last >= 0 && off != ld.last+1 {
		ld.gaps = append(ld.gaps, [2]int64{ld.last, off})
	}
	ld.last = off
}

// formatRecord renders a record as Kafka's tool does, then its key,
// payload and headers.
func (ld *logDump) formatRecord(h record.BatchHeader, r *record.Record) string {
	var sb strings.Builder
	seq := int64(record.NoSequence)
	if h.BaseSequence != record.NoSequence {
		seq = lastSequence(record.BatchHeader{BaseSequence: h.BaseSequence, LastOffsetDelta: int32(r.Offset - h.BaseOffset)})
	}
	keys := make([]string, len(r.Headers))
	for i, hd := range r.Headers {
		keys[i] = hd.Key
	}
	fmt.Fprintf(&sb, "| offset: %d %s: %d keySize: %d valueSize: %d sequence: %d headerKeys: [%s]",
		r.Offset, h.TimestampType(), r.Timestamp, sizeOrNull(r.Key), sizeOrNull(r.Value), seq, strings.Join(keys, ","))
	if h.IsControl() {
		fmt.Fprintf(&sb, " %s", controlRecord(r))
		return sb.String()
	}
	max := ld.d.o.maxValueBytes
	payload := showBytes(r.Value, max)
	if ld.meta {
		payload = metadataPayload(r.Value)
	}
	fmt.Fprintf(&sb, " key: %s payload: %s", showBytes(r.Key, max), payload)
	if len(r.Headers) > 0 {
		hs := make([]string, len(r.Headers))
		for i, hd := range r.Headers {
			hs[i] = strconv.Quote(hd.Key) + "=" + showBytes(hd.Value, max)
		}
		fmt.Fprintf(&sb, " headers: [%s]", strings.Join(hs, ","))
	}
	return sb.String()
}

// sizeOrNull is len(b), or -1 for a null field (Kafka's keySize/valueSize).
func sizeOrNull(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}

// showBytes renders a key, value or header value: null, a Go-quoted
// string when it is printable UTF-8, otherwise 0x and hex; at most max
// bytes (max <= 0: all), followed by how many were left out.
func showBytes(b []byte, max int) string {
	if b == nil {
		return "null"
	}
	shown, more := b, 0
	if max > 0 && len(b) > max {
		shown, more = b[:max], len(b)-max
	}
	var s string
	if isPrintableBytes(b) {
		for !utf8.Valid(shown) { // do not cut a rune in two
			shown, more = shown[:len(shown)-1], more+1
		}
		s = strconv.Quote(string(shown))
	} else {
		s = "0x" + hex.EncodeToString(shown)
	}
	if more > 0 {
		s += fmt.Sprintf("...(%d more bytes)", more)
	}
	return s
}

// isPrintableBytes reports whether b is valid UTF-8 made of printable runes
// (spaces included).
func isPrintableBytes(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// controlTypeNames are Kafka's ControlRecordType names past the two
// transaction markers: the KRaft log's control records, whose fields
// logtool_dump_control.go prints.
var controlTypeNames = map[int16]string{2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER",
	5: "KRAFT_VERSION", 6: "KRAFT_VOTERS"}

// controlTypeName is Kafka's name of a control record type, UNKNOWN for
// one it does not know.
func controlTypeName(typ int16) string {
	if n, ok := controlTypeNames[typ]; ok {
		return n
	}
	return "UNKNOWN"
}

// controlRecord describes a control record (Kafka's ControlRecordType and
// EndTransactionMarker): key = version i16, type i16; value of an ABORT or
// COMMIT marker = version i16, coordinatorEpoch i32; KRaft's control
// records are printed with their fields (logtool_dump_control.go).
func controlRecord(r *record.Record) string {
	if len(r.Key) < 4 {
		return fmt.Sprintf("controlType: unreadable key %s", showBytes(r.Key, 16))
	}
	typ := int16(binary.BigEndian.Uint16(r.Key[2:]))
	var name string
	switch typ {
	case 0:
		name = "ABORT"
	case 1:
		name = "COMMIT"
	default:
		if s, ok := kraftControlRecord(typ, r.Value); ok {
			return s
		}
		return fmt.Sprintf("controlType: %s(%d)", controlTypeName(typ), typ)
	}
	if len(r.Value) < 6 {
		return fmt.Sprintf("endTxnMarker: %s coordinatorEpoch: unreadable", name)
	}
	return fmt.Sprintf("endTxnMarker: %s coordinatorEpoch: %d", name, int32(binary.BigEndian.Uint32(r.Value[2:])))
}
