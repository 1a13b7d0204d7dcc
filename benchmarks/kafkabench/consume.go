package kafkabench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ConsumeConfig describes a consumer benchmark, after Kafka's
// ConsumerPerformance (kafka-consumer-perf-test), reading every partition
// of Topic from its start with one client and no group (so it runs
// against brokers that have no group coordinator).
type ConsumeConfig struct {
	Brokers []string
	Topic   string
	Records int64 // --messages: stop after this many
	// Timeout is ConsumerPerformance's --timeout: the run gives up when
	// no record arrives for this long (0 means 10 s, Kafka's default).
	Timeout                time.Duration
	FetchMaxBytes          int32         // fetch.max.bytes (0: kgo's 50 MiB)
	FetchMaxPartitionBytes int32         // max.partition.fetch.bytes (0: kgo's 1 MiB)
	FetchMaxWait           time.Duration // fetch.max.wait.ms (0: kgo's 5 s)
	// Fill, when set, first produces (untimed) as many records as the
	// topic lacks to hold Records, with these settings; its Records
	// field is overwritten with the shortfall.
	Fill       *ProduceConfig
	MetricsURL string
	Progress   Progress
}

// ConsumeResult is what a consumer benchmark measured. PollLatency is the
// time each poll of the client waited for records: near zero while the
// client's prefetch keeps up, the fetch round trip when it does not.
type ConsumeResult struct {
	Throughput
	Polls           int64          `json:"polls"`
	FirstRecordSec  float64        `json:"first_record_s"` // from start to the first record
	PollLatency     Latency        `json:"poll_latency_ms"`
	Fill            *ProduceResult `json:"fill,omitempty"`
	Server          *ServerReport  `json:"server,omitempty"`
	TimedOut        bool           `json:"timed_out"`
	RecordsExpected int64          `json:"records_expected"`
}

// ErrTimedOut reports a consumer that saw no record for the timeout.
var ErrTimedOut = errors.New("timed out waiting for records")

// Consume runs the consumer benchmark. The time runs from the client's
// creation to the last record, as ConsumerPerformance times it.
func Consume(ctx context.Context, cfg ConsumeConfig) (*ConsumeResult, error) {
	if cfg.Records <= 0 {
		return nil, fmt.Errorf("consume bench: %d records: %w", cfg.Records, ErrConfig)
	}
	res := &ConsumeResult{RecordsExpected: cfg.Records}
	var err error
	if res.Fill, err = fill(ctx, cfg); err != nil {
		return res, err
	}
	probe, err := startProbe(ctx, cfg.MetricsURL)
	if err != nil {
		return res, fmt.Errorf("consume bench: %w", err)
	}
	runErr := consume(ctx, cfg, res)
	if res.Server, err = probe.end(ctx, Out, res.Bytes); err != nil {
		return res, fmt.Errorf("consume bench: %w", err)
	}
	return res, runErr
}

// fill produces what the topic lacks to hold cfg.Records.
func fill(ctx context.Context, cfg ConsumeConfig) (*ProduceResult, error) {
	if cfg.Fill == nil {
		return nil, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...))
	if err != nil {
		return nil, fmt.Errorf("consume bench: fill: %w", err)
	}
	have, err := TopicRecords(ctx, kadm.NewClient(cl), cfg.Topic)
	cl.Close()
	if err != nil {
		return nil, fmt.Errorf("consume bench: fill: %w", err)
	}
	if have >= cfg.Records {
		return nil, nil
	}
	pc := *cfg.Fill
	pc.Records, pc.Phase = cfg.Records-have, "fill"
	res, err := Produce(ctx, pc)
	if err != nil {
		return res, fmt.Errorf("consume bench: fill: %w", err)
	}
	return res, nil
}

// consume reads cfg.Records records into res.
func consume(ctx context.Context, cfg ConsumeConfig, res *ConsumeResult) error {
	opts := []kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ConsumeTopics(cfg.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}
	if cfg.FetchMaxBytes > 0 {
		opts = append(opts, kgo.FetchMaxBytes(cfg.FetchMaxBytes))
	}
	if cfg.FetchMaxPartitionBytes > 0 {
		opts = append(opts, kgo.FetchMaxPartitionBytes(cfg.FetchMaxPartitionBytes))
	}
	if cfg.FetchMaxWait > 0 {
		opts = append(opts, kgo.FetchMaxWait(cfg.FetchMaxWait))
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	tr := track(cfg.Progress, "consume", cfg.Records)
	defer tr.finish()
	clk := startClock()
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("consume bench: client: %w", err)
	}
	defer cl.Close()
	return pollAll(ctx, cl, cfg.Records, timeout, clk, res, tr)
}

// pollAll polls until want records arrived, the timeout passes without
// one, or ctx ends.
func pollAll(ctx context.Context, cl *kgo.Client, want int64, timeout time.Duration, clk clock, res *ConsumeResult, tr *tracker) error {
	var h Histogram
	var records, bytes int64
	last := clk.wall
	defer func() {
		res.Throughput = clk.throughput(records, bytes, last)
		res.PollLatency = h.Summary()
		res.Polls = h.Count()
	}()
	for records < want {
		pctx, cancel := context.WithTimeout(ctx, timeout)
		t0 := time.Now()
		fs := cl.PollRecords(pctx, int(min(want-records, 1<<30)))
		cancel()
		h.Record(time.Since(t0))
		n, b, err := countFetches(fs)
		if n > 0 {
			if records == 0 {
				res.FirstRecordSec = time.Since(clk.wall).Seconds()
			}
			records, bytes, last = records+n, bytes+b, time.Now()
			tr.add(n)
		}
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("consume bench: %w", ctx.Err())
		case errors.Is(err, context.DeadlineExceeded) && n == 0:
			res.TimedOut = true
			return fmt.Errorf("consume bench: %d of %d records, none for %s: %w", records, want, timeout, ErrTimedOut)
		case err != nil && !errors.Is(err, context.DeadlineExceeded):
			return fmt.Errorf("consume bench: %w", err)
		}
	}
	return nil
}

// countFetches counts records and key+value bytes, and returns the first
// fetch error.
func countFetches(fs kgo.Fetches) (n, b int64, err error) {
	fs.EachRecord(func(r *kgo.Record) {
		n++
		b += int64(len(r.Key) + len(r.Value))
	})
	fs.EachError(func(_ string, _ int32, e error) {
		if err == nil {
			err = e
		}
	})
	return n, b, err
}
