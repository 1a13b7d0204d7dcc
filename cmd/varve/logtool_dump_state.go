package main

import (
	"encoding/binary"
	"os"
	"path/filepath"

	"github.com/varve/varve/segment"
)

// dumpProducerSnapshot prints a producer state snapshot (<offset>.snapshot)
// as Kafka's DumpLogSegments does (dumpProducerIdSnapshot): one line per
// producer, with its last batch when the snapshot remembers one. A
// corrupt file (bad version, CRC or length) is reported and skipped.
func (d *dumper) dumpProducerSnapshot(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	states, err := segment.DecodeProducerSnapshot(data)
	if err != nil {
		d.printf("%s: %v\n", path, err)
		return nil
	}
	d.printf("entries: %d\n", len(states))
	for _, s := range states {
		d.printf("producerId: %d producerEpoch: %d coordinatorEpoch: %d currentTxnFirstOffset: %d lastTimestamp: %d",
			s.ProducerID, s.Epoch, s.CoordinatorEpoch, s.CurrentTxnFirstOffset, s.LastTimestamp)
		if n := len(s.Batches); n > 0 {
			b := s.Batches[n-1]
			d.printf(" firstSequence: %d lastSequence: %d lastOffset: %d offsetDelta: %d timestamp: %d",
				b.FirstSequence, b.LastSequence, b.LastOffset, b.LastOffset-b.FirstOffset, b.MaxTimestamp)
		}
		d.printf("\n")
	}
	return nil
}

// A .txnindex file (Kafka's TransactionIndex) is a sequence of 34-byte
// aborted-transaction entries, big-endian, with no header:
//
//	0   version           int16 (0)
//	2   producerId        int64
//	10  firstOffset       int64
//	18  lastOffset        int64
//	26  lastStableOffset  int64
const (
	txnIndexSuffix  = segment.TxnIndexSuffix // LogFileUtils.TXN_INDEX_FILE_SUFFIX
	txnEntrySize    = 34
	txnEntryVersion = 0
)

// dumpTxnIndex prints each aborted transaction of a .txnindex file as
// Kafka's DumpLogSegments does (dumpTxnIndex). An entry of another
// version ends the dump of the file, as it ends Kafka's; a partial entry
// at the end is reported as invalid bytes.
func (d *dumper) dumpTxnIndex(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	be := binary.BigEndian
	p := 0
	for ; len(data)-p >= txnEntrySize; p += txnEntrySize {
		e := data[p : p+txnEntrySize]
		if v := int16(be.Uint16(e)); v != txnEntryVersion {
			d.printf("%s: unexpected aborted transaction version %d at position %d\n", path, v, p)
			return nil
		}
		d.printf("version: %d producerId: %d firstOffset: %d lastOffset: %d lastStableOffset: %d\n",
			int16(be.Uint16(e)), int64(be.Uint64(e[2:])), int64(be.Uint64(e[10:])),
			int64(be.Uint64(e[18:])), int64(be.Uint64(e[26:])))
	}
	if p < len(data) {
		d.printf("Found %d invalid bytes at the end of %s: partial aborted transaction entry\n", len(data)-p, filepath.Base(path))
	}
	return nil
}
