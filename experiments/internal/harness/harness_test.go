package harness

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"testing"
	"time"
)

func TestOutDir(t *testing.T) {
	at := time.Date(2026, 12, 1, 23, 30, 0, 0, time.FixedZone("x", -3*3600)) // 2026-12-02 in UTC
	if got, want := OutDir("results", at, false), filepath.Join("results", "2026-12-02"); got != want {
		t.Errorf("full run: %s, want %s", got, want)
	}
	if got, want := OutDir("results", at, true), filepath.Join("results", "quick"); got != want {
		t.Errorf("quick run: %s, want %s", got, want)
	}
}

func TestMedianOf(t *testing.T) {
	type r struct{ v float64 }
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		rs := make([]r, len(c.in))
		for i, v := range c.in {
			rs[i] = r{v}
		}
		if got := MedianOf(rs, func(x r) float64 { return x.v }); got != c.want {
			t.Errorf("median %v = %v, want %v", c.in, got, c.want)
		}
	}
	v := []float64{3, 1, 2}
	Median(v)
	if v[0] != 3 {
		t.Errorf("Median sorted its argument: %v", v)
	}
}

type step int

func (s step) String() string { return "step" }

func TestExecuteStopsAtFirstError(t *testing.T) {
	boom := errors.New("boom")
	var ran []step
	res, err := Execute(context.Background(), nil, []step{1, 2, 3}, func(_ context.Context, s step) (int, error) {
		ran = append(ran, s)
		if s == 2 {
			return 0, boom
		}
		return int(s) * 10, nil
	})
	if !errors.Is(err, boom) || len(ran) != 2 || len(res) != 1 || res[0] != 10 {
		t.Fatalf("Execute: res %v ran %v err %v", res, ran, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Execute(ctx, nil, []step{1}, func(context.Context, step) (int, error) { return 0, nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: %v", err)
	}
}

func TestSizeName(t *testing.T) {
	for n, want := range map[int64]string{512: "512B", 1 << 10: "1KiB", 16 << 10: "16KiB", 3 << 20: "3MiB", 4 << 30: "4GiB", 1500: "1500B"} {
		if got := SizeName(n); got != want {
			t.Errorf("SizeName(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestQuantileNearestRank(t *testing.T) {
	v := make([]float64, 20)
	for i := range v {
		v[i] = float64(20 - i) // 20..1, unsorted
	}
	for _, c := range []struct{ q, want float64 }{{0.5, 10}, {0.99, 20}, {0.95, 19}, {0.01, 1}, {1, 20}} {
		if got := Quantile(v, c.q); got != c.want {
			t.Errorf("Quantile(1..20, %v) = %v, want %v", c.q, got, c.want)
		}
	}
	if v[0] != 20 {
		t.Errorf("Quantile sorted its argument")
	}
	if got := Quantile([]float64{7}, 0.5); got != 7 {
		t.Errorf("one value: %v", got)
	}
	if got := Quantile(nil, 0.5); !math.IsNaN(got) {
		t.Errorf("no values: %v, want NaN", got)
	}
}
