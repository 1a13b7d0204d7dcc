package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/varve/varve/segment"
)

// varve log dump is Kafka's kafka-dump-log (DumpLogSegments): it prints
// what a partition directory holds, reading the files only (it never opens
// them for writing, never recovers, never creates a file).
//
// Output, one line per item, in Kafka's "name: value" style:
//
//	Dumping <path>
//	Log starting offset: <base>
//	baseOffset: .. lastOffset: .. count: .. baseSequence: .. lastSequence: ..
//	  producerId: .. producerEpoch: .. partitionLeaderEpoch: .. isTransactional: ..
//	  isControl: .. deleteHorizonMs: .. baseTimestamp: .. position: .. CreateTime: ..
//	  size: .. magic: 2 compresscodec: none crc: .. isvalid: true      (one line per batch)
//	| offset: .. CreateTime: .. keySize: .. valueSize: .. sequence: .. headerKeys: [..]
//	  key: .. payload: .. headers: [..]                                 (with --print-records)
//	  key: .. payload: <RecordType> {<fields>} headers: [..]             (metadata log records)
//	  endTxnMarker: COMMIT|ABORT coordinatorEpoch: ..                    (transaction markers)
//	  LeaderChange: {json}, SnapshotHeader {json}, SnapshotFooter {json},
//	  KRaftVersion {json}, KRaftVoters {json}                           (KRaft control records)
//	Found <n> invalid bytes at the end of <file>: <reason>               (torn or corrupt tail)
//	Snapshot end offset: <o>, epoch: <e>, then batches as a metadata log's
//	                                                   (a KRaft snapshot, <offset>-<epoch>.checkpoint)
//	offset: <o> position: <p>                                           (.index)
//	timestamp: <t> offset: <o>                                          (.timeindex)
//	version: 0 producerId: .. firstOffset: .. lastOffset: ..
//	  lastStableOffset: ..                                              (.txnindex)
//	entries: <n>, then producerId: .. producerEpoch: .. coordinatorEpoch: ..
//	  currentTxnFirstOffset: .. lastTimestamp: .. firstSequence: ..
//	  lastSequence: .. lastOffset: .. offsetDelta: .. timestamp: ..     (.snapshot)
//	version: 0 entries: <n>, then one entry per line                    (checkpoint files)
//	version: 0 topicId: <id>                                            (partition.metadata)
//	data_version: .. clusterId: .. leaderId: .. leaderEpoch: ..         (quorum-state)
//	<key>: <value>                                                      (meta.properties)
//
// Checks that fail print a line that starts with the file they concern,
// after its entries (Kafka prints them on stderr at the very end; here
// they follow the file so that a directory dump reads in order).

// dumpOptions are the flags of varve log dump, named as Kafka's tool
// names them where it has the same option.
type dumpOptions struct {
	printRecords     bool // --print-records, --deep-iteration, --print-data-log
	maxValueBytes    int  // --max-value-bytes: shown bytes of a key, value or header value
	indexSanityCheck bool // --index-sanity-check: only check indexes, print no entries
	verifyIndexOnly  bool // --verify-index-only: check indexes against the log, print mismatches only
	maxBytes         int64
	maxMessageBytes  int
	metadataDecoder  bool // --cluster-metadata-decoder (implied in __cluster_metadata-0)
}

func init() { logCmd.AddCommand(newDumpCmd()) }

func newDumpCmd() *cobra.Command {
	var o dumpOptions
	cmd := &cobra.Command{
		Use:   "dump DIR|FILE...",
		Short: "Print segments, batches, records, index entries and checkpoints (like kafka-dump-log)",
		Long: `Print what a partition directory (or a log dir of them) holds, like Kafka's
kafka-dump-log: every segment in order with its batches (offsets, position,
size, timestamps, compression, producer fields, CRC validity), its offset
and time index entries checked against the log, its aborted transactions
(.txnindex), the producer state snapshots (.snapshot), the checkpoint files
(recovery point, log start offset, replication offset, cleaner offset,
leader epoch), partition.metadata, KRaft's quorum-state and snapshots
(.checkpoint) and meta.properties.
The records of a metadata log (__cluster_metadata-0, or any log with
--cluster-metadata-decoder) are printed as the metadata records they hold.
A FILE may be any of these. Files are only read; a torn or corrupt tail is
reported, never repaired.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d := &dumper{w: cmd.OutOrStdout(), o: o}
			return d.run(args)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.printRecords, "print-records", false, "decode and print every record (offset, timestamp, key, value, headers)")
	f.BoolVar(&o.printRecords, "deep-iteration", false, "alias of --print-records (Kafka's name)")
	f.BoolVar(&o.printRecords, "print-data-log", false, "alias of --print-records (Kafka's name)")
	f.IntVar(&o.maxValueBytes, "max-value-bytes", 64, "show at most this many bytes of each key, value and header value (0: all)")
	f.BoolVar(&o.indexSanityCheck, "index-sanity-check", false, "only check that each index would pass the sanity check run at open, print no entries")
	f.BoolVar(&o.verifyIndexOnly, "verify-index-only", false, "check index entries against the log and print only the mismatches")
	f.Int64Var(&o.maxBytes, "max-bytes", math.MaxInt32, "read at most this many bytes of each .log file")
	f.IntVar(&o.maxMessageBytes, "max-message-size", math.MaxInt32, "largest batch accepted as valid, in bytes")
	f.BoolVar(&o.metadataDecoder, "cluster-metadata-decoder", false,
		"print every record's value as the KRaft metadata record it holds (the default in a __cluster_metadata-0 directory)")
	return cmd
}

// dumper writes the dump of one or more paths to w. It is used by one
// goroutine.
type dumper struct {
	w io.Writer
	o dumpOptions
}

func (d *dumper) printf(format string, args ...any) { fmt.Fprintf(d.w, format, args...) }

func (d *dumper) run(paths []string) error {
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("log dump: %w", err)
		}
		if fi.IsDir() {
			err = d.dumpDir(p)
		} else {
			err = d.dumpFile(p)
		}
		if err != nil {
			return fmt.Errorf("log dump %s: %w", p, err)
		}
	}
	return nil
}

// fileKind says how a file name is dumped.
type fileKind int

const (
	kindUnknown fileKind = iota
	kindLog
	kindIndex
	kindTimeIndex
	kindOffsetCheckpoint
	kindEpochCheckpoint
	kindCleanShutdown
	kindProducerSnapshot
	kindTxnIndex
	kindPartitionMetadata
	kindQuorumState
	kindMetaProperties
	kindMetadataSnapshot
)

// kindOf classifies a file by its name, as Kafka's tool does by suffix.
func kindOf(name string) fileKind {
	switch name {
	case segment.RecoveryPointCheckpointFile, segment.LogStartOffsetCheckpointFile,
		segment.ReplicationCheckpointFile, segment.CleanerOffsetCheckpointFile:
		return kindOffsetCheckpoint
	case leaderEpochCheckpointFile:
		return kindEpochCheckpoint
	case segment.CleanShutdownFile:
		return kindCleanShutdown
	}
	if k, ok := metaFileKind(name); ok {
		return k
	}
	if _, _, ok := parseSnapshotName(name); ok {
		return kindMetadataSnapshot
	}
	switch filepath.Ext(name) {
	case segment.LogSuffix:
		return kindLog
	case segment.IndexSuffix:
		return kindIndex
	case segment.TimeIndexSuffix:
		return kindTimeIndex
	case segment.SnapshotSuffix:
		return kindProducerSnapshot
	case txnIndexSuffix:
		return kindTxnIndex
	}
	return kindUnknown
}

// dumpFile dumps one file according to its name.
func (d *dumper) dumpFile(path string) error {
	d.printf("Dumping %s\n", path)
	switch kindOf(filepath.Base(path)) {
	case kindLog:
		return d.dumpLog(path)
	case kindIndex:
		return d.dumpOffsetIndex(path)
	case kindTimeIndex:
		return d.dumpTimeIndex(path)
	case kindOffsetCheckpoint:
		return d.dumpOffsetCheckpoint(path)
	case kindEpochCheckpoint:
		return d.dumpEpochCheckpoint(path)
	case kindCleanShutdown:
		return d.dumpCleanShutdown(path)
	case kindProducerSnapshot:
		return d.dumpProducerSnapshot(path)
	case kindTxnIndex:
		return d.dumpTxnIndex(path)
	case kindPartitionMetadata:
		return d.dumpPartitionMetadata(path)
	case kindQuorumState:
		return d.dumpQuorumState(path)
	case kindMetaProperties:
		return d.dumpMetaProperties(path)
	case kindMetadataSnapshot:
		return d.dumpMetadataSnapshot(path)
	}
	d.printf("Ignoring unknown file %s\n", path)
	return nil
}

// baseOffsetOfFile parses the 20-digit base offset that names a segment
// file.
func baseOffsetOfFile(path string) (int64, error) {
	prefix, _, _ := strings.Cut(filepath.Base(path), ".")
	base, err := strconv.ParseInt(prefix, 10, 64)
	if len(prefix) != 20 || strings.Trim(prefix, "0123456789") != "" || err != nil {
		return 0, fmt.Errorf("%s: %w: name does not start with a 20-digit base offset", path, errBadFileName)
	}
	return base, nil
}
