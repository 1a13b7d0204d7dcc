package diskmodel

import (
	"math"
	"slices"
)

// Run summarises the repetitions behind one figure. Values are in the
// figure's unit: bytes/s for bandwidths, nanoseconds for latencies. With few
// repetitions P99 is simply the largest sample (nearest rank); N says how
// much to trust it.
type Run struct {
	N      int     `json:"n"`
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	P99    float64 `json:"p99"`
	Max    float64 `json:"max"`
}

// summarize sorts a copy of samples and returns its order statistics. It
// returns the zero Run for no samples.
func summarize(samples []float64) Run {
	if len(samples) == 0 {
		return Run{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	return Run{
		N:      len(s),
		Min:    s[0],
		Median: median(s),
		P99:    percentile(s, 0.99),
		Max:    s[len(s)-1],
	}
}

// median of sorted s: the middle value, or the mean of the two middle ones.
func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// percentile of sorted s by the nearest-rank method: the smallest value with
// at least q of the samples at or below it.
func percentile(s []float64, q float64) float64 {
	rank := int(math.Ceil(q * float64(len(s))))
	rank = max(1, min(rank, len(s)))
	return s[rank-1]
}
