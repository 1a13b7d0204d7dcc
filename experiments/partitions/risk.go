package main

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/varve/varve/segment"
)

// sampler sums, on a ticker, the messages acknowledged but not fsynced
// over every partition: sum of max(0, acked_p - RecoveryPoint_p).
type sampler struct {
	done    chan struct{}
	samples chan []int64
}

func startSampler(logs []*segment.Log, acked []atomic.Int64, every time.Duration) *sampler {
	s := &sampler{done: make(chan struct{}), samples: make(chan []int64, 1)}
	go s.loop(logs, acked, every)
	return s
}

func (s *sampler) loop(logs []*segment.Log, acked []atomic.Int64, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	var out []int64
	take := func() {
		var sum int64
		for i, l := range logs {
			// The recovery point is read after acked: it only grows, so a
			// message fsynced before its Append returned is never counted.
			a := acked[i].Load()
			sum += max(0, a-l.RecoveryPoint())
		}
		out = append(out, sum)
	}
	for {
		select {
		case <-s.done:
			take() // the state the appends left, before the final flush
			s.samples <- out
			return
		case <-t.C:
			take()
		}
	}
}

// stop takes a last sample, ends the sampling and returns the samples.
func (s *sampler) stop() []int64 {
	close(s.done)
	return <-s.samples
}

// riskStats summarises the samples of one run, in messages; the samples
// are evenly spaced in time, so the mean is time-weighted.
type riskStats struct {
	samples   int
	mean, max float64
}

func summarizeRisk(samples []int64) riskStats {
	st := riskStats{samples: len(samples)}
	if len(samples) == 0 {
		return st
	}
	var sum float64
	for _, v := range samples {
		sum += float64(v)
	}
	st.mean, st.max = sum/float64(len(samples)), float64(slices.Max(samples))
	return st
}
