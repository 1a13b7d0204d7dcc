package main

import (
	"math"
	"time"

	"github.com/varve/varve/experiments/internal/harness"
)

// cell is the figures of one (case, system) pair over the repetitions:
// the median throughput in each mode and the median of the per-repetition
// ratios transactional / plain (each ratio from two adjacent runs).
type cell struct {
	perTxn      int
	system      string
	txnRPS      float64
	plainRPS    float64
	ratio       float64 // median over reps of txn/plain; NaN without a pair
	txnRoundP50 time.Duration
	plainRound  time.Duration // median over reps of the plain runs' p50 round
	backoffs    float64       // CONCURRENT_TRANSACTIONS back-offs per transaction, over all reps
}

// cells computes every (case, system) cell, in case then system order.
func cells(cfg config, rs []runResult) []cell {
	var out []cell
	for _, n := range cfg.cases {
		for _, s := range cfg.systems {
			txn := pick(rs, n, modeTxn, s)
			plain := pick(rs, n, modePlain, s)
			if len(txn) == 0 && len(plain) == 0 {
				continue
			}
			out = append(out, cell{perTxn: n, system: s,
				txnRPS:      harness.MedianOf(txn, runResult.recordsPerSec),
				plainRPS:    harness.MedianOf(plain, runResult.recordsPerSec),
				ratio:       pairedRatio(txn, plain),
				txnRoundP50: time.Duration(harness.MedianOf(txn, roundP50)),
				plainRound:  time.Duration(harness.MedianOf(plain, roundP50)),
				backoffs:    perRound(txn, func(r runResult) int64 { return r.backoffs }),
			})
		}
	}
	return out
}

// pick is the runs of one case, mode and system, in repetition order.
func pick(rs []runResult, perTxn int, mode, system string) []runResult {
	var out []runResult
	for _, r := range rs {
		if r.perTxn == perTxn && r.mode == mode && r.system == system {
			out = append(out, r)
		}
	}
	return out
}

// pairedRatio is the median over repetitions of a[i]/b[i] records/s,
// pairing runs by repetition; NaN when no repetition has both.
func pairedRatio(a, b []runResult) float64 {
	byRep := map[int]float64{}
	for _, r := range b {
		byRep[r.rep] = r.recordsPerSec()
	}
	var v []float64
	for _, r := range a {
		if d, ok := byRep[r.rep]; ok && d > 0 {
			v = append(v, r.recordsPerSec()/d)
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	return harness.Median(v)
}

// versus is Varve/Kafka for one case and mode: the median over
// repetitions of the ratio of the two systems' adjacent runs.
func versus(rs []runResult, perTxn int, mode string) float64 {
	return versusOf(rs, perTxn, mode, sysVarve, sysKafka)
}

// versusOf is system a over system b, as versus.
func versusOf(rs []runResult, perTxn int, mode, a, b string) float64 {
	return pairedRatio(pick(rs, perTxn, mode, a), pick(rs, perTxn, mode, b))
}

// roundP50 is a run's median round time (begin to commit, or produce to
// flush), in nanoseconds.
func roundP50(r runResult) float64 {
	v := make([]float64, len(r.times))
	for i, d := range r.times {
		v[i] = float64(d)
	}
	return harness.Quantile(v, 0.5)
}

// roundP99 is a run's 99th-percentile round time, in nanoseconds.
func roundP99(r runResult) float64 {
	v := make([]float64, len(r.times))
	for i, d := range r.times {
		v[i] = float64(d)
	}
	return harness.Quantile(v, 0.99)
}

// perRound is the sum of get over rs divided by their rounds; NaN for
// no rounds.
func perRound(rs []runResult, get func(runResult) int64) float64 {
	var n, rounds int64
	for _, r := range rs {
		n += get(r)
		rounds += r.rounds
	}
	if rounds == 0 {
		return math.NaN()
	}
	return float64(n) / float64(rounds)
}
