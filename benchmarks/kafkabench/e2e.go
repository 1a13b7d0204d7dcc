package kafkabench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// E2EConfig describes an end-to-end latency run, after Kafka's
// EndToEndLatency: one record at a time is produced to partition 0 and
// the next is sent only once a consumer reading that partition has
// received it.
type E2EConfig struct {
	Brokers    []string
	Topic      string
	Records    int64
	RecordSize int
	Producer   ProducerConfig // Linger is forced to 0
	// Timeout bounds the wait for one record (0 means 10 s).
	Timeout time.Duration
	// FetchMaxWait is fetch.max.wait.ms, how long the broker may hold
	// the consumer's fetch when no data is there (0: kgo's 5 s). A
	// broker that does not wake a waiting fetch when a record arrives
	// shows up as round trips of exactly this long.
	FetchMaxWait time.Duration
	Progress     Progress
}

// E2EResult is what an end-to-end run measured: Latency from the send to
// the consumer's receipt, ProduceLatency from the send to the producer's
// acknowledgement.
type E2EResult struct {
	Throughput
	Latency        Latency `json:"latency_ms"`
	ProduceLatency Latency `json:"produce_latency_ms"`
}

// ErrLost reports a record the consumer never received.
var ErrLost = errors.New("record not received")

// E2E runs the end-to-end latency benchmark.
func E2E(ctx context.Context, cfg E2EConfig) (*E2EResult, error) {
	if cfg.Records <= 0 {
		return nil, fmt.Errorf("e2e bench: %d records: %w", cfg.Records, ErrConfig)
	}
	prod, cons, err := e2eClients(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer prod.Close()
	defer cons.Close()
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	tr := track(cfg.Progress, "e2e", cfg.Records)
	defer tr.finish()
	value := Payload(cfg.RecordSize, 2)
	var e2e, acked Histogram
	clk := startClock()
	for range cfg.Records {
		t0 := time.Now()
		r := &kgo.Record{Value: value, Partition: 0}
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			return e2eResult(&e2e, &acked, clk), fmt.Errorf("e2e bench: produce: %w", err)
		}
		acked.Record(time.Since(t0))
		if err := awaitOffset(ctx, cons, r.Offset, timeout); err != nil {
			return e2eResult(&e2e, &acked, clk), err
		}
		e2e.Record(time.Since(t0))
		tr.add(1)
	}
	return e2eResult(&e2e, &acked, clk), nil
}

func e2eResult(e2e, acked *Histogram, clk clock) *E2EResult {
	n := e2e.Count()
	return &E2EResult{
		Throughput:     clk.throughput(n, 0, time.Now()),
		Latency:        e2e.Summary(),
		ProduceLatency: acked.Summary(),
	}
}

// e2eClients makes a producer for partition 0 and a consumer that reads
// partition 0 from its current end.
func e2eClients(ctx context.Context, cfg E2EConfig) (prod, cons *kgo.Client, err error) {
	pc := cfg.Producer
	pc.Linger = 0
	opts, err := pc.Opts()
	if err != nil {
		return nil, nil, fmt.Errorf("e2e bench: %w", err)
	}
	opts = append(opts, kgo.SeedBrokers(cfg.Brokers...), kgo.DefaultProduceTopic(cfg.Topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if prod, err = kgo.NewClient(opts...); err != nil {
		return nil, nil, fmt.Errorf("e2e bench: producer: %w", err)
	}
	end, err := endOffset(ctx, prod, cfg.Topic, 0)
	if err != nil {
		prod.Close()
		return nil, nil, err
	}
	copts := []kgo.Opt{kgo.SeedBrokers(cfg.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cfg.Topic: {0: kgo.NewOffset().At(end)}})}
	if cfg.FetchMaxWait > 0 {
		copts = append(copts, kgo.FetchMaxWait(cfg.FetchMaxWait))
	}
	cons, err = kgo.NewClient(copts...)
	if err != nil {
		prod.Close()
		return nil, nil, fmt.Errorf("e2e bench: consumer: %w", err)
	}
	return prod, cons, nil
}

// endOffset lists the log end offset of one partition.
func endOffset(ctx context.Context, cl *kgo.Client, topic string, p int32) (int64, error) {
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return 0, fmt.Errorf("e2e bench: end offset of %s: %w", topic, err)
	}
	o, ok := ends.Lookup(topic, p)
	if !ok {
		return 0, fmt.Errorf("e2e bench: %s has no partition %d: %w", topic, p, ErrConfig)
	}
	return o.Offset, nil
}

// awaitOffset polls until the record at offset arrives.
func awaitOffset(ctx context.Context, cons *kgo.Client, offset int64, timeout time.Duration) error {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		fs := cons.PollFetches(wctx)
		found := false
		fs.EachRecord(func(r *kgo.Record) { found = found || r.Offset == offset })
		if found {
			return nil
		}
		if wctx.Err() != nil {
			return fmt.Errorf("e2e bench: offset %d after %s: %w", offset, timeout, ErrLost)
		}
		var err error
		fs.EachError(func(_ string, _ int32, e error) { err = e })
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("e2e bench: fetch: %w", err)
		}
	}
}
