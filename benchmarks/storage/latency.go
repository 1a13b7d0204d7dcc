package storage

import (
	"slices"
	"time"
)

// Latencies summarises samples of one operation's latency.
type Latencies struct {
	N    int           `json:"n"`
	P50  time.Duration `json:"p50_ns"`
	P99  time.Duration `json:"p99_ns"`
	P999 time.Duration `json:"p999_ns"`
	Max  time.Duration `json:"max_ns"`
}

// Summarize sorts samples in place and returns their nearest-rank
// percentiles (the smallest sample with at least q of the samples at or
// below it). No samples gives the zero value.
func Summarize(samples []time.Duration) Latencies {
	if len(samples) == 0 {
		return Latencies{}
	}
	slices.Sort(samples)
	return Latencies{
		N:    len(samples),
		P50:  nearestRank(samples, 0.50),
		P99:  nearestRank(samples, 0.99),
		P999: nearestRank(samples, 0.999),
		Max:  samples[len(samples)-1],
	}
}

// nearestRank is the ceil(q*n)-th smallest of sorted (1-based).
func nearestRank(sorted []time.Duration, q float64) time.Duration {
	n := len(sorted)
	rank := int(q*float64(n) + 0.999999999)
	return sorted[min(max(rank, 1), n)-1]
}
