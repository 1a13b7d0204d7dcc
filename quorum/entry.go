package quorum

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/varve/varve/metadata"
	"github.com/varve/varve/raftlog"
	"github.com/varve/varve/record"
)

// Entry data. Each normal raft entry the active controller writes is
// one metadata record in Kafka's framing (metadata.AppendRecord), the
// value of its batch's one record, as KRaft's __cluster_metadata-0 holds
// them. A change of k records is k entries proposed together (one
// MsgProp, which raft appends whole); when k > 1 they are framed as a
// metadata transaction, BeginTransactionRecord, the k records,
// EndTransactionRecord (k+2 entries), which a reader applies together
// at the End and drops at an AbortTransactionRecord. Kafka: KIP-868.
//
// The change's last entry (its one record, or the End) carries the
// proposal id in the record header ProposalHeader (raftlog.EncodeData):
// 8 bytes big-endian, the proposing node's raft id in the top 16 bits,
// a per-process sequence number below; the proposer answers its request
// when that entry applies. Kafka's readers ignore headers.
//
// Raft's own empty entries (a new leader's first) have no data and no
// records. The layout is part of the log's format and must not change.
const ProposalHeader = "varve.proposal"

// errProposalHeader is a proposal header that is not 8 bytes.
var errProposalHeader = errors.New("quorum: " + ProposalHeader + " header is not 8 bytes")

// encodeEntries returns the data of the entries of a change of recs
// (at least one) proposed with id.
func encodeEntries(id uint64, recs []metadata.Record) [][]byte {
	if len(recs) > 1 {
		framed := make([]metadata.Record, 0, len(recs)+2)
		framed = append(framed, metadata.BeginTransactionRecord{})
		framed = append(framed, recs...)
		recs = append(framed, metadata.EndTransactionRecord{})
	}
	out := make([][]byte, len(recs))
	for i, r := range recs {
		out[i] = metadata.AppendRecord(nil, r)
	}
	last := len(out) - 1
	hdr := record.Header{Key: ProposalHeader, Value: binary.BigEndian.AppendUint64(nil, id)}
	out[last] = raftlog.EncodeData([]record.Header{hdr}, out[last])
	return out
}

// parseEntry returns the record of an entry's data and the proposal id
// it carries (0 when it has none).
func parseEntry(data []byte) (uint64, metadata.Record, error) {
	var id uint64
	hs, value, ok := raftlog.DecodeData(data)
	if ok {
		for _, h := range hs {
			if h.Key != ProposalHeader {
				continue
			}
			if len(h.Value) != 8 {
				return 0, nil, errProposalHeader
			}
			id = binary.BigEndian.Uint64(h.Value)
		}
	}
	rec, err := metadata.DecodeRecord(value)
	if err != nil {
		return id, nil, fmt.Errorf("quorum: entry record: %w", err)
	}
	return id, rec, nil
}

// legacyEntryHeaderLen is the proposal id that began every entry of
// the layout written before metadata transactions: 8 bytes, then the
// change's records (metadata.AppendEntry). Its first byte is the top of
// the proposing node's raft id, 0 for ids below 256, where a framed
// record begins with frame version 1: the two layouts never read as
// each other.
const legacyEntryHeaderLen = 8

// parseLegacyEntry reads an entry of the earlier layout, so that a
// metadata log written by an earlier Varve is read whole rather than
// skipped.
func parseLegacyEntry(data []byte) (uint64, []metadata.Record, error) {
	if len(data) < legacyEntryHeaderLen || data[0] != 0 {
		return 0, nil, errors.New("quorum: not an entry of the earlier layout")
	}
	recs, err := metadata.DecodeEntry(data[legacyEntryHeaderLen:])
	if err != nil {
		return 0, nil, fmt.Errorf("quorum: earlier layout's records: %w", err)
	}
	return binary.BigEndian.Uint64(data), recs, nil
}

// Snapshot data (the "raft.data" record of a raftlog checkpoint) is
//
//	0  int64  the metadata offset: how many records the log held up to
//	          the snapshot's index (the offset the next record gets)
//	8  ...    metadata.AppendEntry(metadata.SnapshotRecords(img))
//
// The image is rebuilt by applying the records to
// metadata.New(cluster.id). The layout must not change.
const snapshotHeaderLen = 8

// encodeSnapshot returns the snapshot data of img at metadata offset
// offset.
func encodeSnapshot(img *metadata.Image, offset int64) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 4096), uint64(offset))
	return metadata.AppendEntry(b, metadata.SnapshotRecords(img))
}

// decodeSnapshot rebuilds the image and metadata offset of snapshot
// data. Empty data (the bootstrap snapshot) is the empty image at 0.
func decodeSnapshot(clusterID string, data []byte) (*metadata.Image, int64, error) {
	img := metadata.New(clusterID)
	if len(data) == 0 {
		return img, 0, nil
	}
	if len(data) < snapshotHeaderLen {
		return nil, 0, errors.New("quorum: snapshot shorter than its 8-byte header")
	}
	offset := int64(binary.BigEndian.Uint64(data))
	recs, err := metadata.DecodeEntry(data[snapshotHeaderLen:])
	if err != nil {
		return nil, 0, fmt.Errorf("quorum: snapshot records: %w", err)
	}
	img, err = metadata.Apply(img, recs...)
	if err != nil {
		return nil, 0, fmt.Errorf("quorum: snapshot records: %w", err)
	}
	return img, offset, nil
}
