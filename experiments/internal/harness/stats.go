package harness

import (
	"math"
	"slices"
)

// Median is the median of v (the mean of the middle two for an even
// count), 0 for none. v is not modified.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// MedianOf is the median of get over xs: the figure of one cell of a
// summary table, over the repetitions of a run.
func MedianOf[T any](xs []T, get func(T) float64) float64 { return Median(values(xs, get)) }

// MinOf is the smallest of get over xs, 0 for none.
func MinOf[T any](xs []T, get func(T) float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return slices.Min(values(xs, get))
}

// MaxOf is the largest of get over xs, 0 for none.
func MaxOf[T any](xs []T, get func(T) float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return slices.Max(values(xs, get))
}

func values[T any](xs []T, get func(T) float64) []float64 {
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = get(x)
	}
	return v
}

// GroupBy collects xs by key, keeping their order within each group: the
// repetitions of each run.
func GroupBy[T any, K comparable](xs []T, key func(T) K) map[K][]T {
	out := map[K][]T{}
	for _, x := range xs {
		k := key(x)
		out[k] = append(out[k], x)
	}
	return out
}

// Quantile is the nearest-rank q-quantile of v (0 < q <= 1): the
// smallest value with at least a fraction q of v at or below it, so
// that p99 of 20 values is their largest. NaN for none; v is not
// modified.
func Quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	rank := int(math.Ceil(q * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}
