// Command txnbench measures transactional produce on one `varve server`
// beside one Apache Kafka 4.x node, in the same run on the same machine:
// for 1, 10 and 1,000 records per transaction, the records/s of a
// franz-go transactional producer and of the same producer without
// transactions, the ratio of the two on each system, and Varve/Kafka for
// every case. Run it from the repository root with `go run
// ./experiments/txnbench` (-quick: one repetition of 3 s runs; -help for
// the flags). It needs Go, a JDK 17 or later and Maven: Kafka's jars are
// assembled from Maven Central once into the user's cache directory
// (experiments/internal/kafkadist); `varve server` is built from this
// tree and started by experiments/internal/varveproc.
//
// Before and after a change: -systems varve-base,varve -base-rev REV
// adds a third system, `varve server` built from git revision REV (git
// archive, then go build), run beside the current tree in the same
// interleaved plan, and the summary gives varve / varve-base per case
// (`-systems varve-base,varve,kafka` keeps Kafka in the run as well).
// -client-tv1 caps the client at transaction version 1's requests
// (Produce v11, EndTxn v4), so that a cluster offering version 2 is
// measured with the requests of version 1.
//
// # The systems
//
// Both run as one node that is broker and controller, on loopback, with
// the same settings by Kafka's property names: internal topics with
// replication factor 1 and min ISR 1, everything else at its default (no
// log.flush.interval.*: neither system fsyncs on the produce path;
// transaction.state.log.num.partitions 50). Every topic has -partitions
// partitions (1) and replication factor 1. Kafka runs with the JVM
// options of kafka-server-start.sh and a -kafka-heap heap (1g).
//
// # The runs
//
// A round is N records of -record-size bytes (100) produced by one
// franz-go client (acks=all, idempotent: its defaults) and then flushed;
// in mode txn the round is wrapped in BeginTransaction and
// EndTransaction(commit), in mode plain it is not. The next round starts
// when the last has ended, so a round's time is the latency of a
// transaction (or of a flush). Each timed run is -warmup (2 s) of
// untimed rounds, then -duration (10 s) of timed rounds, with a new
// client; txn and plain runs of a case produce to their own topics
// (txn-N, plain-N). After a system starts it is primed with -prime (10 s)
// of untimed one-record transactions, which create __transaction_state
// and let a JVM compile its hot paths. Runs are interleaved system by
// system (Varve, Kafka, Varve, Kafka, ...) for every repetition, case
// and mode, so a change in the machine's load falls on both runs of a
// pair; every ratio is the median over -reps (3) repetitions of the
// ratio of two adjacent runs. Each value starts with a sequence number.
//
// After the produce runs, one read_committed consumer reads every topic
// from its start on each system: its records/s, and whether it returned
// every committed record exactly once and nothing else.
//
// The client counts its CONCURRENT_TRANSACTIONS back-offs (franz-go
// sleeps -txn-backoff, 20 ms by default, when a broker answers that the
// previous transaction's markers are still being written): the count
// per transaction tells how much of a small transaction's time is that
// sleep rather than the broker's work.
//
// # Output
//
// results/<YYYY-MM-DD>/ (-quick: results/quick/): runs.csv (one row per
// timed run, with its round p50/p99 and back-offs), summary.csv (per
// case and system), reads.csv, txn-over-plain.png/.svg and
// varve-over-kafka.png/.svg, and summary.md. The write-up is
// papers/transactions.md.
//
// # Concurrency
//
// Runs are driven one at a time from the main goroutine; each client
// owns franz-go's goroutines for one run and is closed after it. Both
// servers run for the whole experiment and are stopped (SIGTERM, then
// SIGKILL) on every exit path; the temporary directory under -dir is
// removed unless -keep is given.
package main
