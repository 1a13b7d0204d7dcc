package main

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Latency histogram: log-linear buckets with 32 sub-buckets per power of
// two, so a reported percentile is within about 3% of the true value.
// Values below 32 ns have their own buckets.
const (
	subBuckets = 32
	numBuckets = subBuckets + 59*subBuckets
	histShards = 16 // connections spread over shards to limit contention
)

// histogram is safe for concurrent use: many connection goroutines record.
type histogram struct {
	shards [histShards][numBuckets]atomic.Uint64
}

// bucketOf returns the bucket index of v nanoseconds.
func bucketOf(v uint64) int {
	if v < subBuckets {
		return int(v)
	}
	e := bits.Len64(v) - 6 // v>>e is in [32, 64)
	return subBuckets + e*subBuckets + int(v>>e) - subBuckets
}

// bucketBounds returns the smallest and largest value of bucket i.
func bucketBounds(i int) (lo, hi uint64) {
	if i < subBuckets {
		return uint64(i), uint64(i)
	}
	e := (i - subBuckets) / subBuckets
	m := uint64((i-subBuckets)%subBuckets + subBuckets)
	return m << e, (m+1)<<e - 1
}

// record adds one observation from connection conn.
func (h *histogram) record(conn int, d time.Duration) {
	h.shards[conn%histShards][bucketOf(uint64(max(d, 0)))].Add(1)
}

// counts merges the shards.
func (h *histogram) counts() []uint64 {
	out := make([]uint64, numBuckets)
	for s := range h.shards {
		for i := range out {
			out[i] += h.shards[s][i].Load()
		}
	}
	return out
}

// quantile returns the q-quantile (0 < q <= 1) of merged counts as the
// midpoint of its bucket, or 0 for an empty histogram.
func quantile(counts []uint64, q float64) time.Duration {
	var total uint64
	for _, c := range counts {
		total += c
	}
	if total == 0 {
		return 0
	}
	target := uint64(q*float64(total) + 0.999999)
	target = min(max(target, 1), total)
	var cum uint64
	for i, c := range counts {
		cum += c
		if cum >= target {
			lo, hi := bucketBounds(i)
			return time.Duration(lo + (hi-lo)/2)
		}
	}
	return 0
}
