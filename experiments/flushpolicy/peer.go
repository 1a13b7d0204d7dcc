package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/varve/varve/benchmarks/storage"
	"github.com/varve/varve/experiments/internal/machine"
)

// A raw peer runs a policy's I/O without the log, on the same machine a
// moment before the log's run (DESIGN: compare against peers in the same
// run): pwrite(2) of the same batch at the end of a file, and fdatasync by
// the same rule: after every g-th write under flush.messages, from a
// goroutine that wakes every T and flushes once T has passed since its
// last flush ended under flush.ms (the log's flusher's rule), or never.
// What the log costs beyond it is validation, offsets, indexes and locks;
// what both suffer is the machine's.
type rawPeer struct {
	f       *os.File
	batch   []byte
	written atomic.Int64 // batches written (each write(2) returned)
	synced  atomic.Int64 // batches covered by a finished fdatasync
	fsyncs  atomic.Int64
	nanos   atomic.Int64 // time in fdatasync
	err     atomic.Pointer[error]
}

// runRaw measures spec's raw peer in a temporary file under the dir.
func (e *experiment) runRaw(ctx context.Context, spec runSpec) (result, error) {
	res := result{runSpec: spec, records: max(1, spec.batchBytes/e.cfg.recordBytes), load1: machine.Load1()}
	batch, err := storage.MakeBatch(spec.batchBytes, res.records)
	if err != nil {
		return res, err
	}
	res.batchLen = len(batch)
	f, err := os.CreateTemp(e.cfg.Dir, "varve-flushpolicy-raw-*")
	if err != nil {
		return res, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	p := &rawPeer{f: f, batch: batch}
	return res, e.measureRaw(ctx, &res, p)
}

func (e *experiment) measureRaw(ctx context.Context, res *result, p *rawPeer) error {
	m := int64(res.records)
	s := startSampler(func() (int64, int64) {
		d := (p.written.Load() - p.synced.Load()) * m
		return d, d
	}, e.cfg.sampleEvery)
	stopFlusher := p.startFlusher(res.policy.ms)
	lats, err := p.appendLoop(ctx, res.policy.batchesPerFsync(res.records), time.Now().Add(e.cfg.duration), e.cfg.maxBytes)
	res.seconds = time.Since(lats.start).Seconds()
	stopFlusher()
	samples := s.stop()
	if err = errors.Join(err, p.loadErr()); err != nil {
		return err
	}
	res.fsyncs, res.fsyncSec = p.fsyncs.Load(), time.Duration(p.nanos.Load()).Seconds()
	res.syncedBytes = p.synced.Load() * int64(len(p.batch))
	start := time.Now()
	if err := p.fdatasync(p.written.Load()); err != nil {
		return err
	}
	res.drain = time.Since(start).Seconds()
	res.appends = p.written.Load()
	res.bytes, res.messages = res.appends*int64(len(p.batch)), res.appends*m
	res.lat = storage.Summarize(lats.d)
	res.risk = summarizeRisk(samples)
	return nil
}

// latencies are the write latencies of a run and when it started.
type latencies struct {
	start time.Time
	d     []time.Duration
}

// appendLoop writes the batch at the end of the file until the deadline
// or maxBytes, with an fdatasync after every g-th write when g > 0.
func (p *rawPeer) appendLoop(ctx context.Context, g int, deadline time.Time, maxBytes int64) (latencies, error) {
	l := latencies{start: time.Now(), d: make([]time.Duration, 0, 4096)}
	size := int64(len(p.batch))
	for n := int64(0); n*size < maxBytes; n++ {
		start := time.Now()
		if start.After(deadline) || (n%256 == 0 && ctx.Err() != nil) {
			break
		}
		if _, err := p.f.WriteAt(p.batch, n*size); err != nil {
			return l, fmt.Errorf("raw peer: write: %w", err)
		}
		if g > 0 && (n+1)%int64(g) == 0 {
			if err := p.fdatasync(n + 1); err != nil {
				return l, err
			}
		}
		p.written.Store(n + 1)
		l.d = append(l.d, time.Since(start))
	}
	return l, nil
}

// fdatasync syncs the file and records that batches [0, upTo) are durable.
func (p *rawPeer) fdatasync(upTo int64) error {
	start := time.Now()
	err := unix.Fdatasync(int(p.f.Fd()))
	p.nanos.Add(int64(time.Since(start)))
	p.fsyncs.Add(1)
	if err != nil {
		return fmt.Errorf("raw peer: fdatasync %s: %w", p.f.Name(), err)
	}
	if upTo > p.synced.Load() {
		p.synced.Store(upTo)
	}
	return nil
}

// startFlusher runs the flush.ms rule in a goroutine when T > 0 and
// returns the function that stops it and waits for it.
func (p *rawPeer) startFlusher(T time.Duration) (stop func()) {
	if T <= 0 {
		return func() {}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(min(T, time.Second))
		defer t.Stop()
		lastEnd := time.Now()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				if now.Sub(lastEnd) < T {
					continue
				}
				if err := p.fdatasync(p.written.Load()); err != nil {
					p.err.CompareAndSwap(nil, &err)
					return
				}
				lastEnd = time.Now()
			}
		}
	}()
	return func() { close(done); <-finished }
}

func (p *rawPeer) loadErr() error {
	if e := p.err.Load(); e != nil {
		return *e
	}
	return nil
}
