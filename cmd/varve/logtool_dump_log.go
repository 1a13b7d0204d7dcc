package main

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"

	"github.com/varve/varve/record"
)

// logDump is the state of the dump of one .log file.
type logDump struct {
	d       *dumper
	path    string
	dec     record.BatchDecoder
	recs    []record.Record
	fixed   []byte     // copy of a batch with a bad CRC, re-summed to decode it
	last    int64      // last record offset printed, -1 before the first
	gaps    [][2]int64 // non-consecutive record offsets (Kafka reports them)
	invalid int        // batches that failed validation
	meta    bool       // values are KRaft metadata records
}

// dumpLog prints every batch of a .log file (and its records with
// --print-records), then how the file ends.
func (d *dumper) dumpLog(path string) error {
	base, err := baseOffsetOfFile(path)
	if err != nil {
		return err
	}
	d.printf("Log starting offset: %d\n", base)
	ld := &logDump{d: d, path: path, last: -1, meta: d.isMetadataLog(path)}
	tail, err := scanLog(path, d.o.maxBytes, d.o.maxMessageBytes, ld.batch)
	if err != nil {
		return err
	}
	ld.finish(tail)
	return nil
}

func (ld *logDump) batch(b scannedBatch) error {
	ld.d.printf("%s\n", formatBatch(b))
	if b.Invalid != nil {
		ld.invalid++
		ld.d.printf("  invalid batch: %s\n", describeBatchError(b.Invalid))
	}
	if ld.d.o.printRecords || ld.meta {
		ld.records(b)
	}
	return nil
}

// finish prints how the file ended and what the checks found.
func (ld *logDump) finish(t scanTail) {
	name := filepath.Base(ld.path)
	switch {
	case t.Reason != "":
		ld.d.printf("Found %d invalid bytes at the end of %s: %s\n", t.TrailingBytes(), name, t.Reason)
	case t.Limit < t.FileSize:
		ld.d.printf("Read the first %d of %d bytes of %s (--max-bytes)\n", t.ValidBytes, t.FileSize, name)
	}
	if ld.invalid > 0 {
		ld.d.printf("Found %d invalid batches in %s\n", ld.invalid, name)
	}
	if len(ld.gaps) > 0 {
		ld.d.printf("Non-consecutive offsets in %s\n", ld.path)
		for _, g := range ld.gaps {
			ld.d.printf("  %d is followed by %d\n", g[0], g[1])
		}
	}
}

// formatBatch renders a batch as Kafka's DumpLogSegments.printBatchLevel
// does, with baseTimestamp added.
func formatBatch(b scannedBatch) string {
	h := b.Header
	if h.Magic != record.MagicV2 {
		return fmt.Sprintf("offset: %d position: %d size: %d magic: %d isvalid: false",
			h.BaseOffset, b.Pos, len(b.Bytes), h.Magic)
	}
	horizon := "none"
	if ts, ok := h.DeleteHorizon(); ok {
		horizon = strconv.FormatInt(ts, 10)
	}
	return fmt.Sprintf("baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d"+
		" producerId: %d producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %t isControl: %t"+
		" deleteHorizonMs: %s baseTimestamp: %d position: %d %s: %d size: %d magic: %d"+
		" compresscodec: %s crc: %d isvalid: %t",
		h.BaseOffset, h.LastOffset(), h.RecordCount, h.BaseSequence, lastSequence(h),
		h.ProducerID, h.ProducerEpoch, h.PartitionLeaderEpoch, h.IsTransactional(), h.IsControl(),
		horizon, h.BaseTimestamp, b.Pos, h.TimestampType(), h.MaxTimestamp, len(b.Bytes), h.Magic,
		h.Compression(), h.CRC, b.Invalid == nil)
}

// lastSequence is Kafka's DefaultRecordBatch.lastSequence: the base
// sequence plus the last offset delta, wrapping past MaxInt32 to 0.
func lastSequence(h record.BatchHeader) int64 {
	if h.BaseSequence == record.NoSequence {
		return record.NoSequence
	}
	base, delta := int64(h.BaseSequence), int64(h.LastOffsetDelta)
	if base > math.MaxInt32-delta {
		return delta - (math.MaxInt32 - base) - 1
	}
	return base + delta
}

// describeBatchError turns a validation error into "what: detail".
func describeBatchError(err error) string {
	var ce *record.CorruptBatchError
	if errors.As(err, &ce) {
		return fmt.Sprintf("%v: %s", ce.Err, ce.Reason)
	}
	return err.Error()
}
