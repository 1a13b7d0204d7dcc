package main

import (
	"time"

	"github.com/varve/varve/experiments/internal/harness"
)

// cell is the median over repetitions of one run spec.
type cell struct {
	r                  result // the first repetition: shape and policy
	mbps, mbpsMin      float64
	mbpsMax, modelMbps float64
	ratio              float64
	p50, p99, p999     float64 // µs
	mp50, mp99, mp999  float64 // model, µs
	riskMean, riskMax  float64 // messages
	modelRiskMean      float64
	modelRiskMax       float64
	unsyncedMax        float64
	fsyncsPerSec       float64
	batchesPerFsync    float64
	drainMs            float64
	fsyncMBps          float64
	n                  int
}

// medians aggregates the results by spec without repetition.
func (e *experiment) medians() map[runSpec]cell {
	groups := map[runSpec][]result{}
	var order []runSpec
	for _, r := range e.results {
		k := r.key()
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	out := map[runSpec]cell{}
	for _, k := range order {
		out[k] = cellOf(groups[k])
	}
	return out
}

func cellOf(rs []result) cell {
	f := func(get func(result) float64) float64 { return harness.MedianOf(rs, get) }
	usOf := func(get func(result) time.Duration) float64 {
		return f(func(r result) float64 { return float64(get(r)) / 1e3 })
	}
	return cell{
		r: rs[0], n: len(rs),
		mbps:            f(result.mbps),
		mbpsMin:         harness.MinOf(rs, result.mbps),
		mbpsMax:         harness.MaxOf(rs, result.mbps),
		modelMbps:       f(func(r result) float64 { return r.model.mbps(r) }),
		ratio:           f(func(r result) float64 { return r.model.ratio }),
		p50:             usOf(func(r result) time.Duration { return r.lat.P50 }),
		p99:             usOf(func(r result) time.Duration { return r.lat.P99 }),
		p999:            usOf(func(r result) time.Duration { return r.lat.P999 }),
		mp50:            usOf(func(r result) time.Duration { return r.model.p50 }),
		mp99:            usOf(func(r result) time.Duration { return r.model.p99 }),
		mp999:           usOf(func(r result) time.Duration { return r.model.p999 }),
		riskMean:        f(func(r result) float64 { return r.risk.mean }),
		riskMax:         f(func(r result) float64 { return r.risk.max }),
		modelRiskMean:   f(func(r result) float64 { return r.model.riskMean }),
		modelRiskMax:    f(func(r result) float64 { return r.model.riskMax }),
		unsyncedMax:     f(func(r result) float64 { return r.risk.unsynced }),
		fsyncsPerSec:    f(func(r result) float64 { return float64(r.fsyncs) / r.seconds }),
		batchesPerFsync: f(result.batchesPerFsync),
		drainMs:         f(func(r result) float64 { return r.drain * 1e3 }),
		fsyncMBps:       f(result.fsyncMBps),
	}
}
