// Package coordlog holds what the group and transaction coordinators
// (packages group and txn) share about the log they write their records
// to, a partition of __consumer_offsets or __transaction_state: an
// in-memory log for their tests, whose bytes replay as the partition's
// would.
//
// # Concurrency
//
// A MemoryLog is safe for concurrent use; its Fail field is set by the
// test between calls.
//
// # Invariants
//
// Bytes returns the batches in the order appended, each with the base
// offset a log would have given it (dense from 0), so that a
// coordinator's Load reads them as it reads its partition.
package coordlog
