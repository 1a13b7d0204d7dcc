package raftlog

import (
	"fmt"
	"math"
	"strconv"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/varve/varve/record"
)

// EntryTypeHeader is the record header that carries an entry's type
// (raftpb.EntryType as a decimal string: "0" normal, "1" conf change,
// "2" conf change v2). An entry whose Type field is unset has no header
// (and is a normal entry).
const EntryTypeHeader = "raft.entry.type"

// EmptyHeader marks the record of an entry whose Data is empty (the
// entry a new raft leader appends, or one that leaves a joint
// configuration). Its value is noOpValue, so that every record value in
// the log is one metadata record for Kafka's readers (a
// kafka-dump-log --cluster-metadata-decoder of an empty value is an
// error); the entry reads back with no Data.
const EmptyHeader = "raft.entry.empty"

// noOpValue is Kafka's NoOpRecord (api key 20, version 0) in the
// metadata log's framing: frame version 1, api key, version, no tagged
// fields.
var noOpValue = []byte{1, 20, 0, 0}

// encodeEntry appends to dst one RecordBatch holding e: base offset
// e.Index, partition leader epoch e.Term, one record whose value is
// e.Data and whose one header, if e.Type is set, is EntryTypeHeader.
func encodeEntry(dst []byte, e *raftpb.Entry, ts int64) ([]byte, error) {
	if e.GetTerm() > math.MaxInt32 {
		return dst, fmt.Errorf("raftlog: entry %d: term %d does not fit a partition leader epoch (int32)", e.GetIndex(), e.GetTerm())
	}
	if e.GetIndex() >= math.MaxInt64 {
		return dst, fmt.Errorf("raftlog: entry index %d does not fit a Kafka offset", e.GetIndex())
	}
	b := record.NewBatchBuilder(record.CompressionNone)
	value := e.GetData()
	r := record.Record{Timestamp: ts, Value: value}
	if e.Type != nil { // kept as set, so that raft's size accounting agrees
		r.Headers = []record.Header{{Key: EntryTypeHeader, Value: []byte(strconv.Itoa(int(e.GetType())))}}
	}
	if len(value) == 0 { // raft's own empty entries: a NoOpRecord for Kafka's readers
		r.Value = noOpValue
		r.Headers = append(r.Headers, record.Header{Key: EmptyHeader, Value: []byte{}})
	}
	if e.GetType() == raftpb.EntryNormal {
		if hs, v, ok := DecodeData(value); ok {
			r.Value, r.Headers = v, append(r.Headers, hs...)
		} else if len(value) > 0 && value[0] == headersMarker {
			r.Headers = append(r.Headers, record.Header{Key: RawHeader, Value: []byte{}})
		}
	}
	b.Append(r)
	start := len(dst)
	dst, err := b.AppendTo(dst)
	if err != nil {
		return dst, fmt.Errorf("raftlog: encode entry %d: %w", e.GetIndex(), err)
	}
	record.SetBaseOffset(dst[start:], int64(e.GetIndex()))
	record.SetPartitionLeaderEpoch(dst[start:], int32(e.GetTerm()))
	return dst, nil
}

// decodeEntries decodes the whole batches in buf into entries, appending
// to dst those whose index is in [lo, hi), stopping once their summed
// size (as raft's limitSize counts it) would pass maxSize, though always
// keeping one. It returns the offset after the last batch it read and
// whether it stopped because of hi or maxSize.
func decodeEntries(dst []*raftpb.Entry, buf []byte, lo, hi, maxSize uint64, size *uint64) ([]*raftpb.Entry, uint64, bool, error) {
	var recs []record.Record
	next := lo
	for p := 0; p < len(buf); {
		h, err := record.ParseHeader(buf[p:])
		if err != nil {
			return dst, next, false, fmt.Errorf("raftlog: batch at byte %d: %w", p, err)
		}
		n := int(h.Size())
		if n > len(buf)-p {
			return dst, next, false, fmt.Errorf("raftlog: batch at byte %d: %w", p, record.ErrCorruptBatch)
		}
		if _, err := record.ValidateBatch(buf[p : p+n]); err != nil {
			return dst, next, false, fmt.Errorf("raftlog: batch at byte %d: %w", p, err)
		}
		if recs, err = record.DecodeBatch(buf[p:p+n], recs[:0]); err != nil {
			return dst, next, false, fmt.Errorf("raftlog: batch at offset %d: %w", h.BaseOffset, err)
		}
		p += n
		next = uint64(h.NextOffset())
		for _, r := range recs {
			idx := uint64(r.Offset)
			if idx < lo {
				continue
			}
			if idx >= hi {
				return dst, next, true, nil
			}
			e, err := entryOf(h, r)
			if err != nil {
				return dst, next, false, err
			}
			*size += uint64(proto.Size(e))
			if len(dst) > 0 && *size > maxSize {
				return dst, next, true, nil
			}
			dst = append(dst, e)
		}
	}
	return dst, next, false, nil
}

// entryOf rebuilds the raft entry a record holds.
func entryOf(h record.BatchHeader, r record.Record) (*raftpb.Entry, error) {
	e := &raftpb.Entry{Index: new(uint64(r.Offset)), Term: new(uint64(h.PartitionLeaderEpoch))}
	if len(r.Value) > 0 {
		e.Data = append([]byte(nil), r.Value...)
	}
	var extra []record.Header
	raw := false
	for _, hd := range r.Headers {
		switch hd.Key {
		case EntryTypeHeader:
		case RawHeader:
			raw = true
			continue
		case EmptyHeader:
			e.Data, raw = nil, true
			continue
		default:
			extra = append(extra, hd)
			continue
		}
		t, err := strconv.Atoi(string(hd.Value))
		if err != nil || raftpb.EntryType_name[int32(t)] == "" {
			return nil, fmt.Errorf("raftlog: entry %d: bad %s header %q", r.Offset, EntryTypeHeader, hd.Value)
		}
		e.Type = new(raftpb.EntryType(t))
	}
	if len(extra) > 0 && !raw && e.Data != nil && e.GetType() == raftpb.EntryNormal {
		e.Data = EncodeData(extra, r.Value)
	}
	return e, nil
}
