package main

import "github.com/varve/varve/experiments/internal/harness"

// cell is the median over repetitions of one (policy, partitions).
type cell struct {
	r                        result // the first repetition
	durable, durMin, durMax  float64
	ack, modelDurable        float64
	modelAck, ratio          float64
	appendSec, flushSec      float64
	fsyncs, fsyncUs, p99     float64
	riskMean, riskMax        float64
	modelRiskMax, modelFsync float64
	n                        int
}

// medians aggregates the results by spec without repetition.
func (e *experiment) medians() map[runSpec]cell {
	groups := map[runSpec][]result{}
	for _, r := range e.results {
		groups[r.key()] = append(groups[r.key()], r)
	}
	out := map[runSpec]cell{}
	for k, rs := range groups {
		f := func(get func(result) float64) float64 { return harness.MedianOf(rs, get) }
		out[k] = cell{
			r: rs[0], n: len(rs),
			durable:      f(result.durableMBps),
			durMin:       harness.MinOf(rs, result.durableMBps),
			durMax:       harness.MaxOf(rs, result.durableMBps),
			ack:          f(result.ackMBps),
			modelDurable: f(result.modelMBps),
			modelAck:     f(result.modelAckMBps),
			ratio:        f(func(r result) float64 { return r.model.ratio }),
			appendSec:    f(func(r result) float64 { return r.appendSec }),
			flushSec:     f(func(r result) float64 { return r.flushSec }),
			fsyncs:       f(func(r result) float64 { return float64(r.fsyncs) }),
			fsyncUs:      f(result.fsyncMeanUs),
			p99:          f(func(r result) float64 { return float64(r.lat.P99) / 1e3 }),
			riskMean:     f(func(r result) float64 { return r.risk.mean }),
			riskMax:      f(func(r result) float64 { return r.risk.max }),
			modelRiskMax: f(func(r result) float64 { return r.model.riskMax }),
			modelFsync:   f(func(r result) float64 { return float64(r.model.fsyncs) }),
		}
	}
	return out
}
