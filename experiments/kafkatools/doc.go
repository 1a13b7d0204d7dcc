// Command kafkatools runs Apache Kafka's own command-line tools, and its
// Java client through the console producer and consumer, against a
// three-node Varve cluster, and writes down what each one printed and
// whether that is what Kafka's tools print against Kafka.
//
// Run it with `go run ./experiments/kafkatools` from the repository root
// (-help for the flags). It needs Go, a JDK 17 or later and Maven:
// Kafka's jars (the kafka-tools and kafka_2.13 artifacts of -kafka-version,
// 4.4.0 by default) are assembled from Maven Central once into the
// user's cache directory (package experiments/internal/kafkadist) and
// each tool's main class is run with `java -cp <libs>/*`, as Kafka's
// bin/*.sh scripts do. The cluster is three `varve server` processes in
// combined mode (process.roles=broker,controller) laid out by
// internal/localcluster, node i on 127.0.0.i (-shared-host: all on
// 127.0.0.1, distinct ports), built from this tree.
//
// # The steps
//
// Every tool is given --bootstrap-server with the three brokers:
//
//	kafka-metadata-quorum   describe --status and --replication: the Raft
//	                        leader, three voters, their log end offsets
//	kafka-topics            --create (replication factor 3), --describe,
//	                        --alter --partitions, --delete, --list
//	kafka-configs           --alter --add-config and --describe of topic
//	                        settings
//	kafka-reassign-partitions
//	                        --generate, then --execute of a plan that
//	                        reverses partition 0's replica order, then
//	                        --verify until it reports completion
//	kafka-leader-election   --election-type PREFERRED --all-topic-partitions:
//	                        partition 0's new first replica becomes leader
//	kafka-features          describe: the four features, finalized
//	kafka-producer-perf-test
//	                        --transactional-id --transaction-duration-ms
//	                        200: 20,000 records in transactions on a
//	                        topic with replication factor 3
//	kafka-transactions      list, describe, describe-producers and
//	                        find-hanging on every broker: the perf
//	                        producer's transactions all committed, none
//	                        hanging
//	kafka-log-dirs          --describe: each broker's directory holds
//	                        the topic's three partitions
//	kafka-configs           --alter and --describe of a client id's
//	                        producer_byte_rate and consumer_byte_rate;
//	                        a dynamic cluster-wide broker default, seen
//	                        by broker 3 with its source and synonyms
//	kafka-console-consumer  group.protocol=consumer (KIP-848) and
//	                        isolation.level=read_committed: every record
//	                        of the transactions; kafka-consumer-groups
//	                        --describe then shows each partition caught
//	                        up (lag 0, or 1: the last COMMIT marker)
//	kafka-console-producer  acks=all, one numbered line every -interval,
//	kafka-console-consumer  read at the same time by a consumer in a group;
//	                        once it has printed a quarter of the lines the
//	                        partition leader's node is killed with SIGKILL
//	                        (writing pauses at three quarters until then); every
//	                        line must be acknowledged, and consumed exactly
//	                        once, in order, by that consumer and by a second
//	                        one reading from the beginning afterwards
//	kafka-consumer-groups   --describe of the consumer's group: its
//	                        committed offset is the log end offset
//
// The killed node is then started again and must rejoin the ISR
// (kafka-topics --describe --under-replicated-partitions prints
// nothing).
//
// # Results
//
// experiments/kafkatools/results/<YYYY-MM-DD>/ (-quick: results/quick/):
// one NN-<tool>.txt per step (the command line, its exit status, its
// output, what was expected and what was seen) and summary.md, a table
// of every step's verdict. This machine's temporary and cache paths are
// replaced by $TMPDIR and $CACHE.
//
// # Concurrency and clean-up
//
// Steps run one at a time from the main goroutine; the failover step
// runs the producer and the consumer as two child processes and feeds
// the producer's standard input from one goroutine of its own. Every
// child runs in its own process group with a parent-death signal and a
// bounded wait; the cluster is stopped on every exit path, and the
// temporary directory removed unless -keep is given.
//
// # The metadata log under kafka-dump-log
//
// TestKafkaDumpsVarveMetadataLog (`go test ./experiments/kafkatools`)
// runs a three-node quorum in the test process (package quorum), and
// Kafka's DumpLogSegments --cluster-metadata-decoder over node 1's
// metadata log segment: every record type must be printed as often as
// the log holds it, and no record fail to parse. It uses the same
// Kafka jars; it skips without Java or Kafka unless CI is set.
package main
