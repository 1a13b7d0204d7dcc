package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/varve/varve/benchmarks/storage"
	"github.com/varve/varve/experiments/internal/machine"
	"github.com/varve/varve/segment"
)

// runSpec is one measured run.
type runSpec struct {
	policy     policy
	batchBytes int
	appenders  int
	group      bool // a group-commit run (flush.messages=1, several appenders)
	raw        bool // the policy's raw peer (peer.go), not the log
	rep        int
}

// key identifies a run without its repetition, for medians.
func (s runSpec) key() runSpec { s.rep = 0; return s }

// result is one run's measurements; one CSV row.
type result struct {
	runSpec
	records  int // records per batch
	batchLen int // bytes of one batch as built
	appends  int64
	bytes    int64
	messages int64
	seconds  float64 // from the first Append to the return of the last
	drain    float64 // the Log.Flush after the appends: time to make what was at risk durable
	lat      storage.Latencies
	risk     riskStats
	series   []riskSample
	fsyncs   int64   // fsyncs of the log's files during the appends
	fsyncSec float64 // their total time
	// syncedBytes were made durable by fsyncs during the appends (the
	// recovery point when they ended); over fsyncSec, the rate at which
	// the fsyncs wrote.
	syncedBytes int64
	load1       float64 // 1-minute load average when the run started
	model       prediction
}

func (r result) mbps() float64 { return float64(r.bytes) / r.seconds / 1e6 }

// riskBytes converts a count of messages at risk to bytes: every batch of
// a run is the same, so a message stands for batchLen/records bytes.
func (r result) riskBytes(msgs float64) float64 {
	return msgs * float64(r.batchLen) / float64(r.records)
}

// workload is the state of one measured run: the log, the appenders' shared
// counters and the stop conditions.
type workload struct {
	log      *segment.Log
	deadline time.Time
	maxBytes int64
	stop     atomic.Bool
	bytes    atomic.Int64
	appends  atomic.Int64
	acked    atomic.Int64 // highest offset+1 whose Append has returned
}

// ack raises acked to end, never lowering it.
func (w *workload) ack(end int64) {
	for {
		cur := w.acked.Load()
		if end <= cur || w.acked.CompareAndSwap(cur, end) {
			return
		}
	}
}

// appendLoop appends batch again and again until the run's deadline or
// byte budget, recording each Append's latency. batch is this appender's
// own copy: Append writes the base offset into it.
func (w *workload) appendLoop(batch []byte) ([]time.Duration, error) {
	lats := make([]time.Duration, 0, 4096)
	size := int64(len(batch))
	for !w.stop.Load() {
		start := time.Now()
		if start.After(w.deadline) || w.bytes.Load() >= w.maxBytes {
			break
		}
		info, err := w.log.Append(batch)
		lats = append(lats, time.Since(start))
		if err != nil {
			return lats, fmt.Errorf("append %d: %w", w.appends.Load(), err)
		}
		w.bytes.Add(size)
		w.appends.Add(1)
		w.ack(info.LastOffset + 1)
	}
	return lats, nil
}

// runOne measures one spec in a fresh log under dir and removes it.
func (e *experiment) runOne(ctx context.Context, spec runSpec) (result, error) {
	if spec.raw {
		return e.runRaw(ctx, spec)
	}
	res := result{runSpec: spec, records: max(1, spec.batchBytes/e.cfg.recordBytes), load1: machine.Load1()}
	batch, err := storage.MakeBatch(spec.batchBytes, res.records)
	if err != nil {
		return res, err
	}
	res.batchLen = len(batch)
	tmp, err := os.MkdirTemp(e.cfg.Dir, "varve-flushpolicy-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(tmp)
	timer := &storage.SyncTimer{}
	cfg := segment.DefaultConfig()
	cfg.SegmentBytes = e.cfg.segmentBytes
	cfg.FS = timer
	cfg = spec.policy.apply(cfg)
	l, err := storage.OpenLog(filepath.Join(tmp, "flushpolicy-0"), cfg)
	if err != nil {
		return res, err
	}
	err = e.measure(ctx, &res, l, batch, timer)
	if cerr := l.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close log: %w", cerr)
	}
	return res, err
}

// measure runs the appenders and the risk sampler, then times the
// flush that makes the remaining data durable.
func (e *experiment) measure(ctx context.Context, res *result, l *segment.Log, batch []byte, timer *storage.SyncTimer) error {
	w := &workload{log: l, maxBytes: e.cfg.maxBytes}
	stopCtx := context.AfterFunc(ctx, func() { w.stop.Store(true) })
	defer stopCtx()
	sampler := startSampler(logProbe(l, &w.acked), e.cfg.sampleEvery)
	start := time.Now()
	w.deadline = start.Add(e.cfg.duration)
	lats, err := w.appendAll(batch, res.appenders)
	res.seconds = time.Since(start).Seconds()
	res.syncedBytes = l.RecoveryPoint() * int64(len(batch)) / int64(res.records)
	samples := sampler.stop()
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	res.fsyncs, res.fsyncSec = syncs(timer)
	drainStart := time.Now()
	if err := l.Flush(); err != nil {
		return fmt.Errorf("flush after the run: %w", err)
	}
	res.drain = time.Since(drainStart).Seconds()
	res.appends, res.bytes = w.appends.Load(), w.bytes.Load()
	res.messages = res.appends * int64(res.records)
	res.lat = storage.Summarize(lats)
	res.risk = summarizeRisk(samples)
	if res.rep == 0 && !res.group {
		res.series = samples
	}
	return nil
}

// appendAll runs n appenders, each with its own copy of batch, and
// returns every Append's latency.
func (w *workload) appendAll(batch []byte, n int) ([]time.Duration, error) {
	lats := make([][]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		b := append([]byte(nil), batch...)
		wg.Go(func() {
			lats[i], errs[i] = w.appendLoop(b)
			if errs[i] != nil {
				w.stop.Store(true)
			}
		})
	}
	wg.Wait()
	var all []time.Duration
	for i := range n {
		if errs[i] != nil {
			return nil, errs[i]
		}
		all = append(all, lats[i]...)
	}
	return all, nil
}

func syncs(t *storage.SyncTimer) (int64, float64) {
	n, d := t.Syncs()
	return n, d.Seconds()
}
