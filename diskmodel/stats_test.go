package diskmodel

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	in := []float64{5, 1, 4, 2, 3}
	r := summarize(in)
	if want := (Run{N: 5, Min: 1, Median: 3, P99: 5, Max: 5}); r != want {
		t.Fatalf("summarize(%v) = %+v, want %+v", in, r, want)
	}
	if !slices.Equal(in, []float64{5, 1, 4, 2, 3}) {
		t.Fatalf("summarize reordered its input: %v", in)
	}
	if r := summarize([]float64{4, 1, 3, 2}); r.Median != 2.5 {
		t.Fatalf("even count: median %v, want the mean of the middle two, 2.5", r.Median)
	}
	if r := summarize(nil); r != (Run{}) {
		t.Fatalf("no samples: %+v, want zero Run", r)
	}
}

func TestPercentileNearestRank(t *testing.T) {
	s := make([]float64, 200)
	for i := range s {
		s[i] = float64(i + 1)
	}
	if got := percentile(s, 0.99); got != 198 {
		t.Fatalf("p99 of 1..200 = %v, want 198 (rank ceil(0.99*200))", got)
	}
	if got := percentile(s[:10], 0.99); got != 10 {
		t.Fatalf("p99 of 10 samples = %v, want the largest", got)
	}
	if got := percentile(s[:1], 0.5); got != 1 {
		t.Fatalf("one sample = %v, want 1", got)
	}
}

func TestRepeatBounds(t *testing.T) {
	ctx := context.Background()
	calls := 0
	once := func() (float64, error) { calls++; return float64(calls), nil }

	got, err := repeat(ctx, 0, 3, 10, once)
	if err != nil || len(got) != 3 {
		t.Fatalf("zero budget: %d results, %v; want the minimum 3", len(got), err)
	}
	calls = 0
	got, err = repeat(ctx, time.Hour, 3, 10, once)
	if err != nil || len(got) != 10 {
		t.Fatalf("long budget: %d results, %v; want the maximum 10", len(got), err)
	}
}

func TestRepeatStopsOnErrorAndCancel(t *testing.T) {
	boom := errors.New("boom")
	_, err := repeat(context.Background(), time.Hour, 3, 10, func() (float64, error) { return 0, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want the error of once", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = repeat(ctx, time.Hour, 3, 10, func() (float64, error) {
		t.Fatal("once called after cancel")
		return 0, nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}
