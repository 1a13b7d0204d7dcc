package kafkabench

import (
	"math/bits"
	"time"
)

// Histogram records latencies in log-linear buckets, as HdrHistogram
// does: values below 2^(subBits+1) ns have a bucket each, and above that
// every power of two is split into 2^subBits buckets, so a bucket is at
// most 1/128 (0.8 %) of its values wide. It takes fixed memory whatever
// the number of samples, and Record does not allocate.
//
// A Histogram is not safe for concurrent use: each producer fills its own
// (kgo calls one client's promises serially) and the run merges them.
type Histogram struct {
	counts []int64 // len numBuckets, made on first Record
	n      int64
	sum    int64 // nanoseconds; overflows after 292 years of samples
	max    int64
}

const (
	subBits    = 7
	numBuckets = (64 - subBits + 1) << subBits
)

// bucketOf returns the bucket index of v nanoseconds.
func bucketOf(v uint64) int {
	b := bits.Len64(v)
	if b <= subBits+1 {
		return int(v)
	}
	shift := b - subBits - 1
	return shift<<subBits + int(v>>shift)
}

// bucketHigh is the largest value that falls in bucket i.
func bucketHigh(i int) uint64 {
	if i < 1<<(subBits+1) {
		return uint64(i)
	}
	shift := i>>subBits - 1
	m := uint64(i - shift<<subBits)
	return (m+1)<<shift - 1
}

// Record adds one sample; negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	if h.counts == nil {
		h.counts = make([]int64, numBuckets)
	}
	v := max(int64(d), 0)
	h.counts[bucketOf(uint64(v))]++
	h.n++
	h.sum += v
	h.max = max(h.max, v)
}

// Merge adds o's samples to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	if h.counts == nil {
		h.counts = make([]int64, numBuckets)
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

// Count is the number of samples.
func (h *Histogram) Count() int64 { return h.n }

// Quantile returns the nearest-rank q-quantile (0 < q <= 1): the highest
// value of the bucket holding the ceil(q*n)-th smallest sample, capped at
// the largest sample, so it never reports less than the true quantile
// and never more than 0.8 % above it. No samples gives 0.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := min(max(int64(q*float64(h.n)+0.999999999), 1), h.n)
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return time.Duration(min(int64(bucketHigh(i)), h.max))
		}
	}
	return time.Duration(h.max)
}

// Latency is a latency distribution in milliseconds, the unit Kafka's
// perf tools print.
type Latency struct {
	Count int64   `json:"count"`
	Avg   float64 `json:"avg"`
	P50   float64 `json:"p50"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
}

// Summary returns h's count, mean, percentiles and maximum.
func (h *Histogram) Summary() Latency {
	if h.n == 0 {
		return Latency{}
	}
	return Latency{
		Count: h.n,
		Avg:   float64(h.sum) / float64(h.n) / 1e6,
		P50:   ms(h.Quantile(0.50)),
		P95:   ms(h.Quantile(0.95)),
		P99:   ms(h.Quantile(0.99)),
		P999:  ms(h.Quantile(0.999)),
		Max:   float64(h.max) / 1e6,
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
