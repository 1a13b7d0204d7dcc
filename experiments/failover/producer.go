package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ack is one acknowledged produce: the value written (unique, the
// producer's sequence number), the offset the broker returned, and when
// the acknowledgement reached the producer.
type ack struct {
	seq    uint64
	offset int64
	at     time.Time
}

// producer produces one small record at a time, acks=all and
// idempotent, into partition 0 of its topic, and records every
// acknowledgement. One goroutine runs the loop; the trials read the
// acknowledgements under mu.
type producer struct {
	cl     *kgo.Client
	topic  string
	cancel context.CancelFunc
	done   chan struct{}

	mu struct {
		sync.Mutex
		acks    []ack
		failed  int           // produces that ended in an error (never retried by us)
		lastErr error         // the last of them
		changed chan struct{} // closed at the next ack
	}
}

// clientOpts are the client settings both systems are measured with:
// franz-go's defaults (acks=all, idempotent, unlimited retries) except
// where Kafka's Java producer would behave differently on a failover:
// metadata refreshed at most every 100 ms after an error (the Java
// client's retry.backoff.ms; franz-go waits 5 s by default) and retry
// backoff from 100 ms doubling to 1 s (KIP-580's retry.backoff.ms and
// retry.backoff.max.ms defaults).
func clientOpts(bootstrap []string, timeout time.Duration) []kgo.Opt {
	return []kgo.Opt{
		kgo.SeedBrokers(bootstrap...),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.MetadataMinAge(100 * time.Millisecond),
		kgo.RetryBackoffFn(javaBackoff),
		kgo.RecordDeliveryTimeout(timeout),
		kgo.DialTimeout(time.Second),
	}
}

// javaBackoff is the Java client's exponential retry backoff: 100 ms
// doubling per try up to 1 s (retry.backoff.ms, retry.backoff.max.ms).
func javaBackoff(tries int) time.Duration {
	d := 100 * time.Millisecond
	for i := 1; i < tries && d < time.Second; i++ {
		d *= 2
	}
	return min(d, time.Second)
}

// startProducer starts the loop; with log set, franz-go's debug log
// goes there (timestamped), to see what the client did in a trial.
func startProducer(bootstrap []string, topic string, timeout time.Duration, log io.Writer) (*producer, error) {
	opts := clientOpts(bootstrap, timeout)
	if log != nil {
		opts = append(opts, kgo.WithLogger(kgo.BasicLogger(log, kgo.LogLevelDebug, func() string {
			return time.Now().Format("15:04:05.000000 ")
		})))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &producer{cl: cl, topic: topic, cancel: cancel, done: make(chan struct{})}
	p.mu.changed = make(chan struct{})
	go p.loop(ctx)
	return p, nil
}

func (p *producer) loop(ctx context.Context) {
	defer close(p.done)
	for seq := uint64(1); ctx.Err() == nil; seq++ {
		r := &kgo.Record{Topic: p.topic, Partition: 0, Value: encodeSeq(seq)}
		err := p.cl.ProduceSync(ctx, r).FirstErr()
		p.mu.Lock()
		if err != nil {
			if ctx.Err() == nil {
				p.mu.failed++
				p.mu.lastErr = err
			}
		} else {
			p.mu.acks = append(p.mu.acks, ack{seq: seq, offset: r.Offset, at: time.Now()})
			close(p.mu.changed)
			p.mu.changed = make(chan struct{})
		}
		p.mu.Unlock()
	}
}

// encodeSeq is a record's value: "v" and the sequence number, 16 bytes.
func encodeSeq(seq uint64) []byte { return fmt.Appendf(nil, "v%015d", seq) }

func decodeSeq(v []byte) (uint64, bool) {
	if len(v) != 16 || v[0] != 'v' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(v[1:]), 10, 64)
	return n, err == nil
}

// count is how many produces have been acknowledged so far.
func (p *producer) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.mu.acks)
}

// failures are the produces that ended in an error and the last error.
func (p *producer) failures() (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.failed, p.mu.lastErr
}

// waitAcks waits until n acknowledgements arrived after t, or timeout.
func (p *producer) waitAcks(ctx context.Context, t time.Time, n int, timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		p.mu.Lock()
		got := 0
		for i := len(p.mu.acks) - 1; i >= 0 && p.mu.acks[i].at.After(t) && got < n; i-- {
			got++
		}
		changed := p.mu.changed
		p.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-changed:
		case <-deadline:
			f, err := p.failures()
			return fmt.Errorf("%d acknowledged produces after the event: not within %v (%d failed produces, last: %v)", n, timeout, f, err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// stop ends the loop and returns every acknowledgement.
func (p *producer) stop() []ack {
	p.cancel()
	<-p.done
	p.cl.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.acks
}
