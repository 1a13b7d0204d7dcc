package main

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/varve/varve/segment"
)

// riskSample is one look at the log during a run, in messages (offsets).
type riskSample struct {
	at time.Duration // since the sampler started
	// acked is the data at risk: offsets whose Append has returned (the
	// producer was acknowledged) at or above the recovery point, i.e. not
	// yet fsynced. With several appenders it counts from the highest
	// acknowledged offset, so it may include a concurrent append that has
	// not returned yet.
	acked int64
	// unsynced is EndOffset - RecoveryPoint: everything written and not
	// fsynced, including an append in progress (written, not acknowledged).
	unsynced int64
}

// probe reads, at one instant, the messages acknowledged and not fsynced
// and the messages written and not fsynced.
type probe func() (acked, unsynced int64)

// logProbe probes a segment.Log: acked is the highest acknowledged offset
// (an Append that has returned) less the recovery point, unsynced the log
// end offset less the recovery point.
func logProbe(l *segment.Log, acked *atomic.Int64) probe {
	return func() (int64, int64) {
		// Read the recovery point last: it only grows, so an offset that
		// was acknowledged under flush.messages=1 (fsynced before its
		// Append returned) can never be counted as at risk.
		a, end := acked.Load(), l.EndOffset()
		rp := l.RecoveryPoint()
		return max(0, a-rp), max(0, end-rp)
	}
}

// sampler calls a probe on a ticker, in its own goroutine.
type sampler struct {
	done    chan struct{}
	samples chan []riskSample
}

// startSampler starts probing every interval.
func startSampler(p probe, every time.Duration) *sampler {
	s := &sampler{done: make(chan struct{}), samples: make(chan []riskSample, 1)}
	go s.loop(p, every)
	return s
}

func (s *sampler) loop(p probe, every time.Duration) {
	start := time.Now()
	t := time.NewTicker(every)
	defer t.Stop()
	var out []riskSample
	take := func() {
		a, u := p()
		out = append(out, riskSample{at: time.Since(start), acked: a, unsynced: u})
	}
	for {
		select {
		case <-s.done:
			take() // the state the appends left, however short the run
			s.samples <- out
			return
		case <-t.C:
			take()
		}
	}
}

// stop takes a last sample, ends the sampling and returns the samples.
// Call it once the appends have ended and before anything flushes.
func (s *sampler) stop() []riskSample {
	close(s.done)
	return <-s.samples
}

// riskStats summarises the samples of one run, in messages. Samples are
// taken at a fixed interval, so their mean is a time-weighted mean.
type riskStats struct {
	samples                int
	mean, p99, max         float64 // acknowledged, not fsynced
	unsyncedMean, unsynced float64 // mean and max of EndOffset - RecoveryPoint
}

func summarizeRisk(samples []riskSample) riskStats {
	st := riskStats{samples: len(samples)}
	if len(samples) == 0 {
		return st
	}
	acked := make([]float64, len(samples))
	var sumA, sumU float64
	for i, s := range samples {
		acked[i] = float64(s.acked)
		sumA += acked[i]
		sumU += float64(s.unsynced)
		st.unsynced = max(st.unsynced, float64(s.unsynced))
	}
	slices.Sort(acked)
	n := float64(len(samples))
	st.mean, st.unsyncedMean = sumA/n, sumU/n
	st.p99 = acked[min(len(acked)-1, int(0.99*n+0.999999)-1)]
	st.max = acked[len(acked)-1]
	return st
}
