// Package record is Kafka's record format, the bytes a producer sends, a
// broker stores and a consumer receives: RecordBatch v2 (batch.go has the
// byte layout and the constants the format fixes), the records inside a
// batch and their varints (records.go, varint.go), the five compression
// codecs (compression.go), a builder (builder.go), and the legacy message
// sets of magic 0 and 1, read for old producers and written for old
// consumers (legacy.go, downconvert.go).
//
// It imports nothing of Varve's: the log engine (package segment), the
// coordinators, the broker and library users all read and write batches
// through it.
//
//	b := record.NewBatchBuilder(record.CompressionZstd)
//	b.Append(record.Record{Key: k, Value: v})
//	batch, err := b.Build()             // BaseOffset 0: the log assigns offsets
//	h, err := record.ValidateBatch(batch) // length, magic, CRC-32C, counts
//	for rec, err := range record.Records(buf) { ... }
//
// # Validation
//
// ValidateBatch checks what a stored batch must satisfy without decoding
// its records: the length field, magic 2, the CRC-32C over attributes to
// the end, and a record count that fits the offset range.
// ValidateClientBatch adds the checks Kafka's LogValidator applies to a
// batch from a producer. Every failure is a *CorruptBatchError naming the
// batch's base offset and the byte position of the fault, wrapping one of
// the sentinel errors, so errors.Is(err, ErrCorruptBatch) holds for all of
// them but a torn tail (ErrShortBatch).
//
// # Concurrency
//
// Functions are safe for concurrent use. A BatchBuilder, a BatchDecoder
// or a Validator is not: each has one user at a time. Decompression never grows past its
// limit (DefaultMaxDecompressedBytes unless the caller passes its own), so
// a small compressed batch cannot make the decoder allocate without bound.
package record
