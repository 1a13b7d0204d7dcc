package kafkabench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ProduceConfig describes a producer benchmark, after Kafka's
// ProducerPerformance (kafka-producer-perf-test).
type ProduceConfig struct {
	Brokers    []string
	Topic      string
	Records    int64   // --num-records: across all producers
	RecordSize int     // --record-size: value bytes; keys are null
	Throughput float64 // --throughput: records/s across all producers; <= 0 is unlimited (Kafka's -1)
	Producers  int     // parallel clients, each sending Records/Producers
	// Sync sends one record per request and waits for its
	// acknowledgement before the next: the produce round trip.
	Sync       bool
	Producer   ProducerConfig
	MetricsURL string   // broker's Prometheus endpoint, or ""
	Progress   Progress // or nil
	// Phase names the progress bar ("produce" if empty).
	Phase string
}

// ProduceResult is what a producer benchmark measured. Latency runs from
// the Produce call to the acknowledgement's callback, as in Kafka's
// ProducerPerformance; with Sync it is the round trip of one record.
type ProduceResult struct {
	Throughput
	Errors     int64         `json:"errors"`
	FirstError string        `json:"first_error,omitempty"`
	Latency    Latency       `json:"latency_ms"`
	Server     *ServerReport `json:"server,omitempty"`
}

// ErrRecordsFailed reports records the broker did not acknowledge.
var ErrRecordsFailed = errors.New("records failed")

// Produce runs the producer benchmark. The time runs from the first send
// to the last acknowledgement, so it includes the clients' first metadata
// request as Kafka's tool does. Records that fail are counted and the
// run returns ErrRecordsFailed with the result.
func Produce(ctx context.Context, cfg ProduceConfig) (*ProduceResult, error) {
	if cfg.Records <= 0 || cfg.RecordSize < 0 {
		return nil, fmt.Errorf("produce bench: %d records of %d bytes: %w", cfg.Records, cfg.RecordSize, ErrConfig)
	}
	ps, err := newProducers(cfg)
	if err != nil {
		return nil, err
	}
	defer ps.close()
	probe, err := startProbe(ctx, cfg.MetricsURL)
	if err != nil {
		return nil, fmt.Errorf("produce bench: %w", err)
	}
	tr := track(cfg.Progress, orDefault(cfg.Phase, "produce"), cfg.Records)
	clk := startClock()
	runErr := ps.run(ctx, cfg, tr)
	end := time.Now()
	tr.finish()
	res := ps.result(clk, end)
	if res.Server, err = probe.end(ctx, In, res.Bytes); err != nil {
		return res, fmt.Errorf("produce bench: %w", err)
	}
	if runErr != nil {
		return res, fmt.Errorf("produce bench: %w", runErr)
	}
	if res.Errors > 0 {
		return res, fmt.Errorf("produce bench: %d of %d %w, first: %s", res.Errors, cfg.Records, ErrRecordsFailed, res.FirstError)
	}
	return res, nil
}

// Payload returns n bytes of random upper-case letters, the payload
// Kafka's ProducerPerformance sends (so codecs see the same entropy:
// about 4.7 bits a byte). The same seed gives the same bytes.
func Payload(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('A' + r.IntN(26))
	}
	return b
}

// producers are the parallel clients of one run.
type producers struct {
	all   []*producer
	value []byte
}

// producer is one client and what its acknowledgements reported. The
// fields below cl are written only by cl's promise goroutine (kgo calls
// one client's promises serially) or, with Sync, by the sending
// goroutine, and read after the run.
type producer struct {
	cl       *kgo.Client
	hist     Histogram
	records  int64
	bytes    int64
	errs     int64
	firstErr error
	tr       *tracker
}

func newProducers(cfg ProduceConfig) (*producers, error) {
	opts, err := cfg.Producer.Opts()
	if err != nil {
		return nil, fmt.Errorf("produce bench: %w", err)
	}
	opts = append(opts, kgo.SeedBrokers(cfg.Brokers...), kgo.DefaultProduceTopic(cfg.Topic))
	ps := &producers{value: Payload(cfg.RecordSize, 1)}
	for range max(cfg.Producers, 1) {
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			ps.close()
			return nil, fmt.Errorf("produce bench: client: %w", err)
		}
		ps.all = append(ps.all, &producer{cl: cl})
	}
	return ps, nil
}

func (ps *producers) close() {
	for _, p := range ps.all {
		p.cl.Close()
	}
}

// run sends cfg.Records split evenly over the producers, each at its
// share of cfg.Throughput, and returns the first error that stopped one.
func (ps *producers) run(ctx context.Context, cfg ProduceConfig, tr *tracker) error {
	n := int64(len(ps.all))
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, p := range ps.all {
		p.tr = tr
		count := cfg.Records/n + btoi(int64(i) < cfg.Records%n)
		th := newThrottle(cfg.Throughput / float64(n))
		wg.Go(func() {
			if cfg.Sync {
				errs[i] = p.sendSync(ctx, count, ps.value, th)
			} else {
				errs[i] = p.sendAsync(ctx, count, ps.value, th)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func btoi(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// sendAsync hands count records to the client, which batches them, and
// waits until every one is acknowledged or failed.
func (p *producer) sendAsync(ctx context.Context, count int64, value []byte, th throttle) error {
	for i := range count {
		if err := th.wait(ctx, i); err != nil {
			return err
		}
		start := time.Now()
		p.cl.Produce(ctx, &kgo.Record{Value: value}, func(r *kgo.Record, err error) {
			p.acked(time.Since(start), int64(len(r.Value)), err)
		})
	}
	return p.cl.Flush(ctx)
}

// sendSync sends one record per request and waits for each.
func (p *producer) sendSync(ctx context.Context, count int64, value []byte, th throttle) error {
	for i := range count {
		if err := th.wait(ctx, i); err != nil {
			return err
		}
		start := time.Now()
		err := p.cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr()
		p.acked(time.Since(start), int64(len(value)), err)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// acked counts one record's outcome.
func (p *producer) acked(lat time.Duration, size int64, err error) {
	p.tr.add(1)
	if err != nil {
		p.errs++
		if p.firstErr == nil {
			p.firstErr = err
		}
		return
	}
	p.hist.Record(lat)
	p.records++
	p.bytes += size
}

// result merges the producers' counts.
func (ps *producers) result(clk clock, end time.Time) *ProduceResult {
	var h Histogram
	res := &ProduceResult{}
	var records, bytes int64
	for _, p := range ps.all {
		h.Merge(&p.hist)
		records += p.records
		bytes += p.bytes
		res.Errors += p.errs
		if p.firstErr != nil && res.FirstError == "" {
			res.FirstError = p.firstErr.Error()
		}
	}
	res.Throughput = clk.throughput(records, bytes, end)
	res.Latency = h.Summary()
	return res
}
