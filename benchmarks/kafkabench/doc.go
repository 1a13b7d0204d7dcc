// Package kafkabench holds the Kafka-client benchmarks of issue 7 as
// functions that `varve bench` and the experiments share: a producer
// benchmark after Kafka's ProducerPerformance, a consumer benchmark after
// ConsumerPerformance, and an end-to-end latency run after EndToEndLatency.
// They use franz-go (kgo, kadm) and work against any broker that speaks
// Kafka's protocol; StartKfake starts franz-go's in-memory fake cluster
// in-process as the reference point.
//
// # What each run measures
//
//	Produce  Records records of RecordSize bytes (random upper-case
//	         letters, null keys, as ProducerPerformance sends) split over
//	         Producers clients, each paced at its share of Throughput
//	         (<= 0: unlimited). Time: first send to last acknowledgement.
//	         Latency: Produce call to acknowledgement callback. With Sync,
//	         each client sends one record per request and waits for it:
//	         the produce round trip.
//	Consume  Records records read with one client, no group, every
//	         partition from its start. Time: client creation to the last
//	         record. Bytes: keys plus values, as ConsumerPerformance
//	         counts. PollLatency: how long each poll waited. If Fill is
//	         set, the shortfall is produced first, untimed.
//	E2E      one record at a time to partition 0, the next sent only once
//	         a consumer of that partition received it; Latency is send to
//	         receipt, ProduceLatency send to acknowledgement.
//
// MB/s is MiB/s (1,048,576 bytes), as Kafka's tools print "MB/sec".
// Every phase also reports the CPU time (user + system, getrusage) the
// whole process used during it, and records per CPU second: with StartKfake
// that covers client and broker, and it moves far less than the rates
// when other work competes for the cores.
// Latencies are kept in a log-linear histogram (Histogram: fixed memory,
// no allocation per sample, at most 0.8 % above the exact nearest-rank
// percentile) and reported in milliseconds.
//
// With MetricsURL set, Produce and Consume scrape the broker's Prometheus
// endpoint just before and after the timed phase and report the broker's
// CPU seconds per GB (10^9 bytes) produced or consumed, from
// process_cpu_seconds_total and varve_broker_bytes_in_total /
// varve_broker_bytes_out_total; when a byte counter is absent the bench's
// own byte count stands in and the report says so.
//
// # Figures are noisy
//
// Absolute figures depend on the machine and whatever else runs on it;
// compare brokers in the same run, and report LoadAvg1 with the figures.
//
// # Concurrency
//
// Each run is called from one goroutine and returns when every goroutine
// it started has ended. Produce starts one goroutine per producer client;
// kgo calls each client's acknowledgement callbacks serially, so the
// per-producer counters and Histogram have one writer each and are merged
// after the run. Every run starts one progress goroutine (tracker) that
// copies an atomic counter into the Progress Task every 100 ms; Task
// methods are called from that goroutine only.
package kafkabench
