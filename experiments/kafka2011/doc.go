// Command kafka2011 reproduces the producer and consumer tests of Kreps,
// Narkhede and Rao, "Kafka: a Distributed Messaging System for Log
// Processing" (NetDB 2011), on one machine and in one go, against four
// brokers it starts itself on loopback:
//
//	varve      `varve server`, built from this repository
//	kafka      Apache Kafka 4.x in KRaft mode (one combined broker and
//	           controller), assembled from Maven Central with Maven
//	jetstream  NATS JetStream (Debian package nats-server), file storage
//	rabbitmq   RabbitMQ (Debian package rabbitmq-server), a durable
//	           classic queue, persistent messages, publisher confirms
//
// Run it with `go run ./experiments/kafka2011` from the repository root
// (-quick for a short run; -help for the flags). It needs Go, a JDK 17 or
// later and Maven; Kafka's jars are resolved once into the user's cache
// directory. Missing Debian packages are installed with apt-get (as root).
// Results go to experiments/kafka2011/results/<YYYY-MM-DD>/ (-quick: results/quick/):
// kafka2011.csv (one row per test), one PNG and one SVG per chart, and
// summary.md; the write-up is papers/kafka2011.md.
//
// # The tests
//
// Every message is 200 bytes (random upper-case letters, as Kafka's
// ProducerPerformance sends), every test moves the same number of messages
// (-records) with one client, and each system keeps its data on the same
// file system in a fresh temporary directory.
//
//	produce, batch B   one producer publishes B messages, then waits until
//	                   the broker has acknowledged all B before the next B:
//	                   one batch outstanding. For the Kafka protocol a batch
//	                   is one RecordBatch in one Produce request (acks=1),
//	                   checked afterwards by reading the partition's .log
//	                   files; B=1 is kafkabench's Sync mode (ProduceSync per
//	                   record). JetStream: B async publishes, then wait for
//	                   their PubAcks. RabbitMQ: B persistent publishes on a
//	                   confirm channel, then wait for their B confirms.
//	produce-noack      the paper's own setting for the Kafka protocol only:
//	                   acks=0, the producer never waits for the broker.
//	consume            one consumer reads everything the batch-50 produce
//	                   test stored, from the start, up to 1000 messages
//	                   (about 200 KiB) per pull, as in the paper.
//	produce (Java)     Kafka's own org.apache.kafka.tools.ProducerPerformance
//	                   against Varve and Kafka with the same batch shapes
//	                   (batch.size holding B messages, linger.ms=0,
//	                   max.in.flight.requests.per.connection=1, acks=1).
//
// Before its first timed test each Kafka-protocol broker gets an untimed
// warm-up (a tenth of a test, produced at batch 50 and consumed) on a topic
// of its own, so the JVM has compiled its hot paths; Go and BEAM brokers
// need none. After each Kafka-protocol produce test the partition's .log
// files are read back (RecordBatch v2 headers: batchLength at byte 8,
// magic at 16, recordCount at 57) to report how many messages each stored
// batch really held, and to check that every acknowledged message is
// there.
//
// Besides messages per second each test records the broker's CPU time
// (every process in its process group, from /proc/<pid>/stat), because on
// a shared machine CPU per message moves far less than rates do, and, for
// produce tests, how much the broker's data directory grew (allocated
// blocks) per message beyond the 200-byte payload: the paper's storage
// overhead.
//
// # Concurrency and clean-up
//
// The experiment runs one test at a time from the main goroutine; each
// client starts its own goroutines (kgo, nats.go, amqp091-go) and stops them
// before returning. Every child process is started in its own process group
// and recorded in a procSet; run stops the set in reverse order on every
// exit path (success, error, SIGINT, SIGTERM): SIGTERM to the group, a
// bounded wait, then SIGKILL. Every wait on a broker or a client is bounded.
// Temporary directories are removed at the end unless -keep is given.
package main
