package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// seqBytes is the size of the sequence number that starts every
// record's value: the read checks each committed record arrives once.
const seqBytes = 8

// topicName is the topic a case's runs in one mode produce to: the
// transactional and the plain runs of a case never share a topic, so
// the read of the transactional topic reads transactional data only.
func topicName(mode string, perTxn int) string { return fmt.Sprintf("%s-%d", mode, perTxn) }

// producer is one franz-go client producing rounds of records to one
// topic: a transaction per round in mode txn, a flush per round in mode
// plain. Both are idempotent with acks=all (franz-go's defaults).
type producer struct {
	cl      *kgo.Client
	txn     bool
	size    int
	next    *uint64 // the topic's next sequence number, kept across runs
	retries retryCounter
	mu      sync.Mutex
	failed  error
}

// newProducer is a producer to topic; txnBackoff, when not zero,
// replaces franz-go's ConcurrentTransactionsBackoff (20 ms).
func newProducer(addr, topic, mode string, size int, next *uint64, txnBackoff time.Duration, clientTV1 bool) (*producer, error) {
	p := &producer{txn: mode == modeTxn, size: size, next: next}
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.WithLogger(&p.retries)}
	if p.txn {
		opts = append(opts, kgo.TransactionalID("txnbench-"+topic))
	}
	if txnBackoff > 0 {
		opts = append(opts, kgo.ConcurrentTransactionsBackoff(txnBackoff))
	}
	if clientTV1 {
		opts = append(opts, kgo.MaxVersions(tv1Versions()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	p.cl = cl
	return p, nil
}

func (p *producer) close() { p.cl.Close() }

// round produces n records and waits for them: inside one committed
// transaction if p.txn, else followed by a flush.
func (p *producer) round(ctx context.Context, n int) error {
	if p.txn {
		if err := p.cl.BeginTransaction(); err != nil {
			return fmt.Errorf("begin transaction: %w", err)
		}
	}
	for range n {
		v := make([]byte, p.size)
		binary.BigEndian.PutUint64(v, *p.next)
		*p.next++
		p.cl.Produce(ctx, &kgo.Record{Value: v}, p.onAck)
	}
	if err := p.cl.Flush(ctx); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	p.mu.Lock()
	err := p.failed
	p.mu.Unlock()
	if err != nil {
		if p.txn {
			err = errors.Join(err, p.cl.EndTransaction(ctx, kgo.TryAbort))
		}
		return fmt.Errorf("produce: %w", err)
	}
	if p.txn {
		if err := p.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
	}
	return nil
}

func (p *producer) onAck(_ *kgo.Record, err error) {
	if err == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed == nil {
		p.failed = err
	}
}

// produced is what one timed run measured.
type produced struct {
	records  int64
	rounds   int64
	elapsed  time.Duration
	times    []time.Duration // each round's time, for its quantiles
	backoffs int64           // CONCURRENT_TRANSACTIONS back-offs in the timed part
}

// produceFor runs rounds of n records for warmup (untimed), then for d
// (timed), and returns what the timed part produced. A failed round
// ends the run with its error.
func produceFor(ctx context.Context, p *producer, n int, warmup, d time.Duration) (produced, error) {
	for end := time.Now().Add(warmup); time.Now().Before(end); {
		if err := p.round(ctx, n); err != nil {
			return produced{}, fmt.Errorf("warm-up: %w", err)
		}
	}
	var out produced
	before := p.retries.backoffs.Load()
	start := time.Now()
	for end := start.Add(d); ; {
		t := time.Now()
		if !t.Before(end) {
			break
		}
		if err := p.round(ctx, n); err != nil {
			return out, err
		}
		out.times = append(out.times, time.Since(t))
		out.records += int64(n)
		out.rounds++
	}
	out.elapsed = time.Since(start)
	out.backoffs = p.retries.backoffs.Load() - before
	return out, nil
}

// tv1Versions caps the client at transaction version 1's requests
// (Produce v11, EndTxn v4, TxnOffsetCommit v4): franz-go then sends
// AddPartitionsToTxn and keeps its epoch, even against a cluster at
// transaction.version 2.
func tv1Versions() *kversion.Versions {
	v := kversion.Stable()
	v.SetMaxKeyVersion(kmsg.Produce.Int16(), 11)
	v.SetMaxKeyVersion(kmsg.EndTxn.Int16(), 4)
	v.SetMaxKeyVersion(kmsg.TxnOffsetCommit.Int16(), 4)
	return v
}
