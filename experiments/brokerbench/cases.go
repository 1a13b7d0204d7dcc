package main

import (
	"context"
	"fmt"
	"time"

	"github.com/varve/varve/benchmarks/kafkabench"
	"github.com/varve/varve/experiments/internal/pingpong"
	"github.com/varve/varve/experiments/internal/varveproc"
)

// row is one measured case.
type row struct {
	Case       string
	Broker     string
	RecordSize int
	Acks       string
	Producers  int
	Records    int64
	RecsPerSec float64
	MBPerSec   float64
	P50ms      float64
	P99ms      float64
	CPUPerGB   float64 // broker CPU seconds per GB, Varve only
	Note       string
}

type report struct {
	rows                  []row
	started               time.Time
	took                  time.Duration
	loadBefore, loadAfter float64
	pingPong              float64 // round trips per second of a bare TCP ping-pong in one process
	pingPongProcs         float64 // the same between two processes
}

func (r *report) add(x row) {
	r.rows = append(r.rows, x)
	fmt.Printf("%-12s %-16s %5d B acks=%-3s producers=%-2d %12.0f rec/s %8.1f MB/s p50 %.3f ms p99 %.3f ms cpu/GB %.2f %s\n",
		x.Case, x.Broker, x.RecordSize, x.Acks, x.Producers, x.RecsPerSec, x.MBPerSec, x.P50ms, x.P99ms, x.CPUPerGB, x.Note)
}

func produceRow(name, broker string, cfg kafkabench.ProduceConfig, res *kafkabench.ProduceResult) row {
	x := row{Case: name, Broker: broker, RecordSize: cfg.RecordSize, Acks: cfg.Producer.Acks, Producers: cfg.Producers,
		Records: res.Records, RecsPerSec: res.RecordsPerSec, MBPerSec: res.MBPerSec, P50ms: res.Latency.P50, P99ms: res.Latency.P99}
	if res.Server != nil {
		x.CPUPerGB = res.Server.CPUSecondsPerGB
	}
	if res.Errors > 0 {
		x.Note = fmt.Sprintf("%d errors: %s", res.Errors, res.FirstError)
	}
	return x
}

// produce runs one producer benchmark on a topic of as many partitions
// as producers, or of one partition when onePartition is set.
func produce(ctx context.Context, brokers []string, metrics, topic string, size int, acks string, producers int, n int64, sync, onePartition bool) (kafkabench.ProduceConfig, *kafkabench.ProduceResult, error) {
	cfg := kafkabench.ProduceConfig{Brokers: brokers, Topic: topic, Records: n, RecordSize: size, Producers: producers,
		Sync: sync, Producer: kafkabench.ProducerConfig{Acks: acks, Compression: "none"}, MetricsURL: metrics}
	partitions := int32(max(producers, 1))
	if onePartition {
		partitions = 1
	}
	if _, err := kafkabench.EnsureTopic(ctx, brokers, topic, partitions, 1); err != nil {
		return cfg, nil, err
	}
	res, err := kafkabench.Produce(ctx, cfg)
	return cfg, res, err
}

// runProduce: 100 B and 1 KiB, acks=1 and all, 1 and 4 producers, Varve
// beside kfake.
func runProduce(ctx context.Context, o options, bin string, kf *kafkabench.Kfake, r *report) error {
	s, err := varveproc.Start(bin, varveproc.Options{})
	if err != nil {
		return err
	}
	defer s.Stop()
	for _, size := range []int{100, 1024} {
		for _, acks := range []string{"1", "all"} {
			for _, producers := range []int{1, 4} {
				topic := fmt.Sprintf("produce-%d-%s-%d", size, acks, producers)
				for _, b := range []struct {
					name    string
					brokers []string
					metrics string
				}{{"varve", []string{s.Addr}, s.Metrics}, {"kfake", kf.Addrs, ""}} {
					cfg, res, err := produce(ctx, b.brokers, b.metrics, topic, size, acks, producers, o.records, false, false)
					if err != nil {
						return fmt.Errorf("produce %s on %s: %w", topic, b.name, err)
					}
					r.add(produceRow("produce", b.name, cfg, res))
				}
			}
		}
	}
	return nil
}

// runSync: one record per request, beside a bare TCP ping-pong.
func runSync(ctx context.Context, o options, bin string, kf *kafkabench.Kfake, r *report) error {
	in, err := pingpong.InProcess(ctx, 100, 2*time.Second)
	if err != nil {
		return err
	}
	child, err := pingpong.Child(ctx, 100, 2*time.Second)
	if err != nil {
		return err
	}
	pp, ppc := in.PerSecond(), child.PerSecond()
	r.pingPong, r.pingPongProcs = pp, ppc
	fmt.Printf("bare TCP ping-pong, 100 bytes: %.0f round trips/s in one process, %.0f between two\n", pp, ppc)
	for _, model := range []string{"reactor", "goroutine", "goroutine-inline"} {
		s, err := varveproc.Start(bin, varveproc.Options{Overrides: []string{"varve.network.model=" + model}})
		if err != nil {
			return err
		}
		cfg, res, err := produce(ctx, []string{s.Addr}, s.Metrics, "sync", 100, "1", 1, o.syncRecords, true, true)
		s.Stop()
		if err != nil {
			return err
		}
		r.add(produceRow("sync", "varve-"+model, cfg, res))
	}
	cfg, res, err := produce(ctx, kf.Addrs, "", "sync", 100, "1", 1, o.syncRecords, true, true)
	if err != nil {
		return err
	}
	r.add(produceRow("sync", "kfake", cfg, res))
	return nil
}

// runConsume: one consumer from the start of a topic of consumeBytes.
func runConsume(ctx context.Context, o options, bin string, kf *kafkabench.Kfake, r *report) error {
	s, err := varveproc.Start(bin, varveproc.Options{})
	if err != nil {
		return err
	}
	defer s.Stop()
	const size = 1024
	n := o.consumeBytes / size
	for _, b := range []struct {
		name    string
		brokers []string
		metrics string
	}{{"varve", []string{s.Addr}, s.Metrics}, {"kfake", kf.Addrs, ""}} {
		topic := "consume"
		if _, err := kafkabench.EnsureTopic(ctx, b.brokers, topic, 1, 1); err != nil {
			return err
		}
		fill := &kafkabench.ProduceConfig{Brokers: b.brokers, Topic: topic, RecordSize: size, Producers: 1,
			Producer: kafkabench.ProducerConfig{Acks: "1", Compression: "none"}}
		res, err := kafkabench.Consume(ctx, kafkabench.ConsumeConfig{Brokers: b.brokers, Topic: topic, Records: n,
			Fill: fill, MetricsURL: b.metrics, Timeout: 30 * time.Second})
		if err != nil {
			return fmt.Errorf("consume on %s: %w", b.name, err)
		}
		x := row{Case: "consume", Broker: b.name, RecordSize: size, Producers: 1, Records: res.Records,
			RecsPerSec: res.RecordsPerSec, MBPerSec: res.MBPerSec, P50ms: res.PollLatency.P50, P99ms: res.PollLatency.P99}
		if res.Server != nil {
			x.CPUPerGB = res.Server.CPUSecondsPerGB
		}
		if res.TimedOut {
			x.Note = "timed out"
		}
		r.add(x)
	}
	return nil
}

// runGroupCommit: an fsync before every acknowledgement, with 1, 4 and
// 16 producers each sending one record per request to one partition:
// throughput grows with producers only if concurrent appends share
// fsyncs.
func runGroupCommit(ctx context.Context, o options, bin string, kf *kafkabench.Kfake, r *report) error {
	s, err := varveproc.Start(bin, varveproc.Options{Overrides: []string{"log.flush.interval.messages=1"}})
	if err != nil {
		return err
	}
	defer s.Stop()
	for _, producers := range []int{1, 4, 16} {
		// One record per request per producer: with client batching, each
		// request would carry many records and hide the fsyncs.
		n := max(o.syncRecords/2, 200) * int64(producers)
		cfg, res, err := produce(ctx, []string{s.Addr}, s.Metrics, fmt.Sprintf("fsync-%d", producers), 100, "all", producers, n, true, true)
		if err != nil {
			return err
		}
		x := produceRow("groupcommit", "varve-fsync", cfg, res)
		x.Note += "log.flush.interval.messages=1, one partition, one record per request"
		r.add(x)
	}
	return nil
}
