// Package kafkamigrate checks `varve migrate from-kafka` against a log
// directory a real Apache Kafka 4.x wrote: its test assembles Kafka
// from Maven Central (experiments/internal/kafkadist, cached between
// runs), runs a single KRaft node, creates a compacted topic and a
// topic with overrides, produces with idempotent and transactional
// producers (one transaction committed, one aborted), commits a group's
// offsets, stops Kafka cleanly, migrates its log dir, starts a Varve
// node on it and checks that nothing was lost: every record, the topic
// ids and configs, read_committed over Kafka's .txnindex, and a new
// idempotent producer's appends.
//
// The test skips under -short, and when Kafka cannot be assembled
// (no java or mvn, no network) unless CI is set, where it fails. It has
// no code besides the test: the package exists so that the test may
// use experiments/internal.
package kafkamigrate
