package quorum

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/varve/varve/metadata"
)

// Entry data. A normal raft entry written by the active controller is
//
//	0  uint64  proposal id: the proposing node's raft id in the top 16
//	           bits, a per-process sequence number below; the proposer
//	           answers its request when the entry with this id applies
//	8  ...     the records, metadata.AppendEntry
//
// Raft's own empty entries (a new leader's first) have no data and no
// records. The layout is part of the log's format and must not change.
const entryHeaderLen = 8

// errShortEntry is an entry shorter than its header.
var errShortEntry = errors.New("quorum: entry shorter than its 8-byte header")

// encodeEntry returns the data of an entry with proposal id and recs.
func encodeEntry(id uint64, recs []metadata.Record) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 256), id)
	return metadata.AppendEntry(b, recs)
}

// parseEntry returns the proposal id and records of an entry's data.
func parseEntry(data []byte) (uint64, []metadata.Record, error) {
	if len(data) < entryHeaderLen {
		return 0, nil, errShortEntry
	}
	recs, err := metadata.DecodeEntry(data[entryHeaderLen:])
	if err != nil {
		return 0, nil, fmt.Errorf("quorum: entry records: %w", err)
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
