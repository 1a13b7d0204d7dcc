package storage

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"github.com/varve/varve/record"
)

// Record layout used by MakeBatch: an 8-byte key and a value of random
// (incompressible) bytes, timestamps 1 ms apart from a fixed base.
const (
	batchKeySize  = 8
	batchBaseTime = 1_700_000_000_000
	// recordOverhead bounds what a record costs beyond its key and value
	// (Kafka: at most 21 bytes of varints and attributes; here with an
	// 8-byte key and no headers).
	recordOverhead = 21
)

// MakeBatch returns a valid, uncompressed RecordBatch v2 of records
// records whose values are sized so the whole batch is as close to size
// bytes as whole bytes per record allow, never above it unless one record
// cannot fit. The values are random bytes from a fixed seed, so a batch
// of a given shape is the same on every run and no codec or file system
// can shrink it.
func MakeBatch(size, records int) ([]byte, error) {
	if records < 1 {
		return nil, fmt.Errorf("storage: make batch: %d records", records)
	}
	valueSize := max(0, (size-record.BatchHeaderSize)/records-batchKeySize-recordOverhead)
	best, err := buildBatch(records, valueSize)
	// The overhead per record is a bound; grow the values into the room left.
	for i := 0; i < 4 && err == nil; i++ {
		grow := (size - len(best)) / records
		if grow <= 0 {
			break
		}
		valueSize += grow
		var b []byte
		if b, err = buildBatch(records, valueSize); err == nil && len(b) <= size {
			best = b
		}
	}
	if err != nil {
		return nil, fmt.Errorf("storage: make batch of %d bytes, %d records: %w", size, records, err)
	}
	return best, nil
}

// buildBatch builds a batch of records records with valueSize-byte values.
func buildBatch(records, valueSize int) ([]byte, error) {
	rng := rand.New(rand.NewPCG(uint64(records), uint64(valueSize)))
	value := make([]byte, valueSize)
	key := make([]byte, batchKeySize)
	b := record.NewBatchBuilder(record.CompressionNone)
	for i := 0; i < records; i++ {
		for j := 0; j+8 <= len(value); j += 8 {
			binary.LittleEndian.PutUint64(value[j:], rng.Uint64())
		}
		binary.BigEndian.PutUint64(key, uint64(i))
		b.Append(record.Record{Key: key, Value: value, Timestamp: batchBaseTime + int64(i)})
	}
	return b.Build()
}
