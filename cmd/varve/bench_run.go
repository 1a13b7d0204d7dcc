package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/varve/varve/benchmarks/kafkabench"
)

// The three subcommands of varve bench: each resolves its target, runs
// its benchmark from benchmarks/kafkabench, and prints a report (text in
// the manner of Kafka's tools, or --json) even when the run failed part
// way, so a partial figure is never silently lost.

func newBenchProduceCmd(o *clientBenchOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "produce",
		Short: "Producer throughput and latency (kafka-producer-perf-test)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runClientBench(cmd, o, "produce", func(ctx context.Context, brokers []string, p kafkabench.Progress, r *clientBenchReport) error {
				var err error
				r.Produce, err = kafkabench.Produce(ctx, o.produceConfig(brokers, p))
				return err
			})
		},
	}
}

func newBenchConsumeCmd(o *clientBenchOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "consume",
		Short: "Consumer throughput from the start of the topic (kafka-consumer-perf-test)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runClientBench(cmd, o, "consume", func(ctx context.Context, brokers []string, p kafkabench.Progress, r *clientBenchReport) error {
				cc := kafkabench.ConsumeConfig{Brokers: brokers, Topic: o.topic, Records: o.records, Timeout: o.timeout,
					FetchMaxBytes: o.fetchMax, FetchMaxPartitionBytes: o.fetchMaxP, FetchMaxWait: o.fetchWait, MetricsURL: o.metricsURL, Progress: p}
				if o.fill {
					fill := o.produceConfig(brokers, p)
					fill.MetricsURL = ""
					cc.Fill = &fill
				}
				var err error
				r.Consume, err = kafkabench.Consume(ctx, cc)
				return err
			})
		},
	}
}

func newBenchE2ECmd(o *clientBenchOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "e2e",
		Short: "End-to-end latency, one record at a time to partition 0 (EndToEndLatency)",
		Long: `Produce one record at a time to partition 0 and wait until a consumer of
that partition receives it before sending the next, as Kafka's
EndToEndLatency does. Use a small --records (the default 1,000,000 takes
as long as a million round trips).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runClientBench(cmd, o, "e2e", func(ctx context.Context, brokers []string, p kafkabench.Progress, r *clientBenchReport) error {
				var err error
				r.E2E, err = kafkabench.E2E(ctx, kafkabench.E2EConfig{Brokers: brokers, Topic: o.topic, Records: o.records,
					RecordSize: o.recordSize, Producer: o.producerConfig(), Timeout: o.timeout, FetchMaxWait: o.fetchWait, Progress: p})
				return err
			})
		},
	}
}

// benchFunc runs one benchmark and fills its part of the report.
type benchFunc func(ctx context.Context, brokers []string, p kafkabench.Progress, r *clientBenchReport) error

func runClientBench(cmd *cobra.Command, o *clientBenchOptions, name string, run benchFunc) error {
	o.idemSet = cmd.Flags().Changed("idempotent")
	ctx, cancel := commandContext(cmd, 0)
	defer cancel()
	r := newClientBenchReport(cmd, o, name)
	brokers, stop, err := o.target(ctx)
	if err != nil {
		return err
	}
	defer stop()
	r.Brokers = brokers
	p := newClientBenchProgress(cmd.ErrOrStderr(), o.noProgress)
	runErr := run(ctx, brokers, p, r)
	p.wait()
	r.LoadAvg[1] = kafkabench.LoadAvg1()
	if runErr != nil {
		r.Error = runErr.Error()
	}
	if err := r.print(cmd.OutOrStdout(), o.json); err != nil {
		return err
	}
	return runErr
}

// flagValues lists every flag of cmd as name=value, for the report.
func flagValues(cmd *cobra.Command) map[string]string {
	m := map[string]string{}
	visit := func(name, value string) { m[name] = value }
	cmd.Flags().VisitAll(func(f *pflag.Flag) { visit(f.Name, f.Value.String()) })
	cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) { visit(f.Name, f.Value.String()) })
	return m
}

// commandLine is how the report names the run.
func commandLine(cmd *cobra.Command) string {
	return strings.TrimSpace(cmd.CommandPath())
}
