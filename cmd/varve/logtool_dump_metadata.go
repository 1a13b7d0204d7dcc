package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/varve/varve/metadata"
	"github.com/varve/varve/quorum"
)

// isMetadataLog reports whether the .log file at path is decoded as
// KRaft metadata records: with --cluster-metadata-decoder, or when its
// directory is the metadata log's (__cluster_metadata-0).
func (d *dumper) isMetadataLog(path string) bool {
	return d.o.metadataDecoder || filepath.Base(filepath.Dir(path)) == quorum.MetadataLogDirName
}

// metadataPayload renders a record value of the metadata log as the one
// metadata record it holds, as Kafka's --cluster-metadata-decoder
// does: its type, then its fields. A value that is not exactly one
// metadata record is reported, and the dump goes on.
func metadataPayload(value []byte) string {
	rec, err := metadata.DecodeRecord(value)
	if errors.Is(err, metadata.ErrUnsupportedRecord) {
		// One of Kafka's record types whose fields Varve does not read
		// (RegisterControllerRecord, ...): named, not called garbage.
		key, version, _ := metadata.RecordHeader(value)
		if name := metadata.RecordTypeName(key); name != "" {
			return fmt.Sprintf("%s (api key %d, version %d): fields not decoded by Varve", name, key, version)
		}
	}
	if err != nil {
		return "not a metadata record: " + err.Error()
	}
	name := fmt.Sprintf("%T", rec)
	return fmt.Sprintf("%s %+v", name[strings.LastIndexByte(name, '.')+1:], rec)
}

// snapshotSuffix ends a KRaft snapshot's file name:
// <end offset:%020d>-<epoch:%010d>.checkpoint (Kafka: Snapshots.SUFFIX).
const snapshotSuffix = ".checkpoint"

// parseSnapshotName returns the end offset and epoch a KRaft snapshot's
// file name carries (Kafka: Snapshots.parse).
func parseSnapshotName(name string) (endOffset int64, epoch int32, ok bool) {
	stem, found := strings.CutSuffix(name, snapshotSuffix)
	off, ep, dash := strings.Cut(stem, "-")
	if !found || !dash || len(off) != 20 || len(ep) != 10 {
		return 0, 0, false
	}
	o, err1 := strconv.ParseInt(off, 10, 64)
	e, err2 := strconv.ParseInt(ep, 10, 32)
	if err1 != nil || err2 != nil || o < 0 || e < 0 {
		return 0, 0, false
	}
	return o, int32(e), true
}

// dumpMetadataSnapshot prints a KRaft snapshot: its end offset and
// epoch, then its batches and records as a metadata log's (Kafka:
// DumpLogSegments.dumpLog on a .checkpoint file).
func (d *dumper) dumpMetadataSnapshot(path string) error {
	end, epoch, _ := parseSnapshotName(filepath.Base(path))
	d.printf("Snapshot end offset: %d, epoch: %d\n", end, epoch)
	ld := &logDump{d: d, path: path, last: -1, meta: true}
	tail, err := scanLog(path, d.o.maxBytes, d.o.maxMessageBytes, ld.batch)
	if err != nil {
		return err
	}
	ld.finish(tail)
	return nil
}
