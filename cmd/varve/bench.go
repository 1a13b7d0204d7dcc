package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/varve/varve/benchmarks/kafkabench"
)

// varve bench produce|consume|e2e: Kafka's kafka-producer-perf-test,
// kafka-consumer-perf-test and EndToEndLatency over franz-go, against
// --brokers or, with --kfake, franz-go's in-memory fake cluster started
// in this process (the reference point). The benchmarks themselves are
// in benchmarks/kafkabench; this file holds the flags.

// clientBenchOptions are the flags of varve bench, shared by its
// subcommands (persistent flags of the group).
type clientBenchOptions struct {
	clientFlags
	topic       string
	partitions  int32
	replication int16
	records     int64
	recordSize  int
	throughput  float64
	producers   int
	acks        string
	compression string
	idempotent  bool
	idemSet     bool
	batchMax    int32
	linger      time.Duration
	maxInFlight int
	maxBuffered int
	sync        bool
	timeout     time.Duration
	fetchMax    int32
	fetchMaxP   int32
	fetchWait   time.Duration
	fill        bool
	json        bool
	noProgress  bool
	kfake       bool
	kfakeN      int
	metricsURL  string
}

func init() { rootCmd.AddCommand(newClientBenchCmd()) }

func newClientBenchCmd() *cobra.Command {
	o := &clientBenchOptions{}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Kafka perf tests: produce, consume and end-to-end latency against any broker or --kfake",
		Long: `Benchmarks in the manner of Kafka's ProducerPerformance, ConsumerPerformance
and EndToEndLatency, with franz-go clients. They run against --brokers (any
Kafka-protocol broker) or, with --kfake, against franz-go's in-memory fake
cluster started in this process. The topic is created with --partitions if
it is missing. Each prints records/s, MB/s (MiB/s, as Kafka prints it) and
latency percentiles, or all of it as JSON with --json; --server-metrics URL
adds the broker's CPU seconds per GB from its Prometheus endpoint.
Figures on a shared machine are noisy: the load average is reported.`,
	}
	o.addFlags(cmd)
	cmd.AddCommand(newBenchProduceCmd(o), newBenchConsumeCmd(o), newBenchE2ECmd(o))
	return cmd
}

func (o *clientBenchOptions) addFlags(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.StringSliceVarP(&o.brokers, "brokers", "b", []string{defaultBrokers}, "bootstrap brokers, host:port[,host:port...]")
	f.StringVar(&o.topic, "topic", "varve-bench", "topic (created if missing)")
	f.Int32Var(&o.partitions, "partitions", 1, "partitions of the topic when it is created")
	f.Int16Var(&o.replication, "replication-factor", -1, "replication factor when the topic is created (-1: broker default)")
	f.Int64Var(&o.records, "records", 1_000_000, "records to produce or consume (--num-records, --messages)")
	f.IntVar(&o.recordSize, "record-size", 100, "value bytes per record")
	f.Float64Var(&o.throughput, "throughput", -1, "records/s to aim for, all producers together (-1: unlimited)")
	f.IntVar(&o.producers, "producers", 1, "parallel producer clients")
	f.StringVar(&o.acks, "acks", "all", "acks: 0, 1 or all")
	f.StringVar(&o.compression, "compression", "none", "compression.type: none, gzip, snappy, lz4 or zstd")
	f.BoolVar(&o.idempotent, "idempotent", true, "enable.idempotence (needs acks=all; off by default with acks 0 or 1)")
	f.Int32Var(&o.batchMax, "batch-max-bytes", 0, "maximum batch size in bytes (0: client default, about 1 MB)")
	f.DurationVar(&o.linger, "linger", 0, "linger.ms")
	f.IntVar(&o.maxInFlight, "max-in-flight", 0, "produce requests in flight per broker when not idempotent (0: client default 1; idempotent: 5)")
	f.IntVar(&o.maxBuffered, "max-buffered-records", 0, "records a producer holds unacknowledged (0: client default 10000)")
	f.BoolVar(&o.sync, "sync", false, "produce: one record per request, each acknowledged before the next (round trip)")
	f.DurationVar(&o.timeout, "timeout", 10*time.Second, "consume/e2e: give up when no record arrives for this long")
	f.Int32Var(&o.fetchMax, "fetch-max-bytes", 0, "consume: fetch.max.bytes (0: client default 50 MiB)")
	f.Int32Var(&o.fetchMaxP, "fetch-max-partition-bytes", 0, "consume: max.partition.fetch.bytes (0: client default 1 MiB)")
	f.DurationVar(&o.fetchWait, "fetch-max-wait", 0, "consume/e2e: fetch.max.wait.ms, how long the broker may hold an empty fetch (0: client default 5s)")
	f.BoolVar(&o.fill, "fill", true, "consume: first produce (untimed) what the topic lacks to hold --records")
	f.BoolVar(&o.json, "json", false, "print the results as JSON")
	f.BoolVar(&o.noProgress, "no-progress", false, "do not show a progress bar")
	f.BoolVar(&o.kfake, "kfake", false, "bench against franz-go's in-memory fake cluster started in this process")
	f.IntVar(&o.kfakeN, "kfake-brokers", 1, "brokers of the --kfake cluster")
	f.StringVar(&o.metricsURL, "server-metrics", "", "broker Prometheus endpoint (http://host:port/metrics): report broker CPU per GB")
}

// producerConfig is the producer part of the flags.
func (o *clientBenchOptions) producerConfig() kafkabench.ProducerConfig {
	pc := kafkabench.ProducerConfig{Acks: o.acks, Compression: o.compression, BatchMaxBytes: o.batchMax,
		Linger: o.linger, MaxInFlight: o.maxInFlight, MaxBufferedRecords: o.maxBuffered}
	if o.idemSet {
		pc.Idempotent = &o.idempotent
	}
	return pc
}

// produceConfig is the producer benchmark the flags describe.
func (o *clientBenchOptions) produceConfig(brokers []string, p kafkabench.Progress) kafkabench.ProduceConfig {
	return kafkabench.ProduceConfig{Brokers: brokers, Topic: o.topic, Records: o.records, RecordSize: o.recordSize,
		Throughput: o.throughput, Producers: o.producers, Sync: o.sync, Producer: o.producerConfig(),
		MetricsURL: o.metricsURL, Progress: p}
}

// target starts the --kfake cluster if asked, creates the topic if it is
// missing, and returns the brokers and a function that stops kfake.
func (o *clientBenchOptions) target(ctx context.Context) ([]string, func(), error) {
	brokers, stop := o.brokers, func() {}
	if o.kfake {
		k, err := kafkabench.StartKfake(o.kfakeN)
		if err != nil {
			return nil, nil, err
		}
		brokers, stop = k.Addrs, k.Close
	}
	if _, err := kafkabench.EnsureTopic(ctx, brokers, o.topic, o.partitions, o.replication); err != nil {
		stop()
		return nil, nil, fmt.Errorf("bench: %w", err)
	}
	return brokers, stop, nil
}
