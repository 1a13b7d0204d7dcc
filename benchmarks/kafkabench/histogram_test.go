package kafkabench

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// Every bucket's range is contiguous with the next, and a value falls in
// the bucket whose range holds it.
func TestBucketsTileTheLine(t *testing.T) {
	for i := 1; i < numBuckets; i++ {
		if bucketHigh(i-1)+1 != bucketLow(i) {
			t.Fatalf("bucket %d ends at %d, bucket %d starts at %d", i-1, bucketHigh(i-1), i, bucketLow(i))
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		v := r.Uint64() >> r.IntN(64)
		i := bucketOf(v)
		if v < bucketLow(i) || v > bucketHigh(i) {
			t.Fatalf("%d in bucket %d [%d, %d]", v, i, bucketLow(i), bucketHigh(i))
		}
	}
	if bucketOf(^uint64(0)) != numBuckets-1 {
		t.Fatalf("max value in bucket %d of %d", bucketOf(^uint64(0)), numBuckets)
	}
}

func bucketLow(i int) uint64 {
	if i == 0 {
		return 0
	}
	return bucketHigh(i-1) + 1
}

// Quantiles are within 1/128 above the exact nearest-rank value and never
// below it.
func TestQuantilesMatchSortedSamples(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var h, a, b Histogram
	var all []time.Duration
	for i := range 20000 {
		d := time.Duration(r.ExpFloat64() * float64(2*time.Millisecond))
		all = append(all, d)
		h.Record(d)
		if i%2 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	a.Merge(&b)
	slices.Sort(all)
	for _, q := range []float64{0.01, 0.5, 0.95, 0.99, 0.999, 1} {
		exact := all[int(q*float64(len(all))+0.999999999)-1]
		for name, hh := range map[string]*Histogram{"one": &h, "merged": &a} {
			got := hh.Quantile(q)
			if got < exact || float64(got) > float64(exact)*(1+1.0/128)+1 {
				t.Errorf("%s q%v: %v, exact %v", name, q, got, exact)
			}
		}
	}
	if h.Quantile(1) != all[len(all)-1] || h.Summary().Max != ms(all[len(all)-1]) {
		t.Errorf("max %v, want %v", h.Quantile(1), all[len(all)-1])
	}
	if (&Histogram{}).Summary() != (Latency{}) {
		t.Error("empty histogram has a non-zero summary")
	}
}

// Kafka's ThroughputThrottler: a sender ahead of schedule waits; an
// unlimited one never does.
func TestThrottleWaitsWhenAhead(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := newThrottle(-1).wait(ctx, 1e9); err != nil {
		t.Errorf("unlimited throttle waited: %v", err)
	}
	if err := newThrottle(1).wait(ctx, 0); err != nil {
		t.Errorf("first record at 1/s waited: %v", err)
	}
	if err := newThrottle(1).wait(ctx, 100); err == nil {
		t.Error("record 100 at 1/s did not wait")
	}
}
