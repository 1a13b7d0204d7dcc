// Package txn is Varve's transaction coordinator: Kafka's
// TransactionCoordinator and TransactionStateManager. It owns the
// transactional ids of producers using Kafka transactions (KIP-98):
// InitProducerId for a transactional id (producer ids, epochs, fencing
// of zombie producers), AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
// the timeouts that abort forgotten transactions and expire idle ids,
// and the answers to DescribeTransactions and ListTransactions.
//
// # Shape
//
// A Coordinator owns the transactional ids of one partition of the
// internal topic __transaction_state (PartitionFor maps an id to its
// partition as Kafka does). It is a deterministic state machine in the
// manner of etcd's raft and of package group: no goroutines, no clock,
// no locks. Every method takes the current time; Tick(now) runs the
// periodic checks that are due and NextDeadline says when to call it
// next. Each change of an id's state is written to the coordinator's
// Log synchronously and takes effect only once written (a failed write
// leaves the state as it was and answers Kafka's error).
//
// Ending a transaction is two-phase, as in Kafka: EndTxn writes
// PrepareCommit or PrepareAbort and answers the client; the coordinator
// then hands a MarkerRequest to its Markers, which writes the COMMIT or
// ABORT control batches to every partition of the transaction
// (WriteTxnMarkers) and reports back with MarkersWritten; the
// coordinator writes CompleteCommit or CompleteAbort. Until then every
// request for the id gets CONCURRENT_TRANSACTIONS.
//
// Transaction versions: each request says which it runs at, as in
// Kafka 4.x (EndTxn v5 and AddPartitionsToTxn v4+ are version 2, older
// ones version 0), and clients of both coexist. At version 2 (KIP-890
// part 2, end_txn_v2.go) every EndTxn bumps the epoch: the markers
// carry the bumped epoch, so a late produce of the ended transaction is
// fenced, and the client learns its next epoch from the answer; the
// EndTxn that exhausts the epoch moves the id to a new producer id at
// epoch 0 once the markers are written. The cluster's
// transaction.version (SetTransactionVersion) chooses the record format
// and the version of the aborts the coordinator starts itself. KIP-890
// part 1's verification (AddPartitionsToTxn v4+ verify_only) is answered
// from the state by VerifyPartitions: a partition outside the ongoing
// transaction is TRANSACTION_ABORTABLE for a v5 request, whose sender
// knows the code and maps it for its own client, INVALID_TXN_STATE for
// v4 (NotInTransaction).
//
// # Concurrency
//
// A Coordinator is not safe for concurrent use; the caller serialises
// every call (the broker holds one mutex per partition and runs one
// timer goroutine that calls Tick). Markers.Send is called from inside
// the coordinator's methods and must neither block nor call back into
// it. The package starts no goroutine.
//
// # Invariants
//
//   - A transactional id is in one of Kafka's states (state.go) and
//     moves only along Kafka's transitions; a forbidden one is refused
//     and logged. PrepareEpochFence is held in memory only, for the
//     moment between bumping the epoch and writing PrepareAbort.
//   - An id's producer epoch never decreases for a producer id; a new
//     producer id replaces it only when the epoch is exhausted
//     (32766), and the new one comes from the ProducerIDs source, which
//     never repeats one.
//   - Requests with a producer epoch other than the id's current one
//     get PRODUCER_FENCED; with another producer id,
//     INVALID_PRODUCER_ID_MAPPING.
//   - While markers are outstanding the id's state is PrepareCommit or
//     PrepareAbort, and exactly one MarkerRequest for them was sent by
//     this coordinator (again after each load).
//   - The in-memory state is what replaying the log (BeginLoad, Load,
//     FinishLoad) would rebuild.
//
// # Records in __transaction_state
//
// Kafka's TransactionLog formats, documented byte by byte in records.go:
// key version 0 (the transactional id), value version 0, or 1 with its
// tagged fields from transaction.version 1, both read, a null value
// (tombstone) when an id expires. Each change
// appends one uncompressed v2 batch of one record, CreateTime, producer
// id -1, as Kafka's coordinator writes them, so kafka-dump-log's
// --transaction-log-decoder reads Varve's partitions.
//
// # Scripted tests
//
// The coordinator's behaviour is shown by scripts under testdata/script,
// run by TestScripts with github.com/cockroachdb/datadriven: each step is
// a request, a clock tick, a marker report, a log failure or a reload,
// and its expected output (answers, markers sent, states, records
// written) follows it. `go test ./txn -run TestScripts -rewrite`
// rewrites the expected output; review the diff as documentation.
//
// # Not done
//
// KIP-939's two-phase commit (keepPreparedTxn): its requests are
// answered as without it. Two deliberate differences from Kafka 4.x: a
// version 2 EndTxn naming the current epoch while the previous
// transaction's markers are still written gets CONCURRENT_TRANSACTIONS,
// where Kafka's epoch check answers PRODUCER_FENCED; and a verification
// sent at AddPartitionsToTxn v4 gets INVALID_TXN_STATE for a partition
// outside the transaction, where Kafka's coordinator answers
// TRANSACTION_ABORTABLE at every version (its v4 senders, Kafka 3.6 and
// 3.7 brokers, would pass the code on to producers that do not know it).
package txn
