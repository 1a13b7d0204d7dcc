package main

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// Every value falls in a bucket whose bounds contain it, and buckets tile
// the range without gaps.
func TestBucketBounds(t *testing.T) {
	prevHi := uint64(0)
	for i := 1; i < numBuckets; i++ {
		lo, hi := bucketBounds(i)
		if lo != prevHi+1 || hi < lo {
			t.Fatalf("bucket %d [%d,%d] does not follow %d", i, lo, hi, prevHi)
		}
		prevHi = hi
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		v := rng.Uint64() >> rng.IntN(64)
		lo, hi := bucketBounds(bucketOf(v))
		if v < lo || v > hi {
			t.Fatalf("%d in bucket %d [%d,%d]", v, bucketOf(v), lo, hi)
		}
	}
}

// Percentiles agree with an exact sort within the bucket resolution (~3%).
func TestQuantileAccuracy(t *testing.T) {
	var h histogram
	rng := rand.New(rand.NewPCG(3, 4))
	var vals []float64
	for i := range 50000 {
		d := time.Duration(rng.ExpFloat64() * 200e3) // ~200 us mean
		vals = append(vals, float64(d))
		h.record(i, d)
	}
	sort.Float64s(vals)
	c := h.counts()
	for _, q := range []float64{0.5, 0.99, 0.999} {
		exact := vals[int(q*float64(len(vals)))-1]
		got := float64(quantile(c, q))
		if got < exact*0.96 || got > exact*1.04 {
			t.Errorf("q%.3f: %v, exact %v", q, time.Duration(got), time.Duration(exact))
		}
	}
	if quantile(make([]uint64, numBuckets), 0.5) != 0 {
		t.Error("empty histogram")
	}
}
