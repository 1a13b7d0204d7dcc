package main

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// latencyPlot: p50, p99 and p99.9 of one Append per policy for one batch
// size, measured beside the model.
func (e *experiment) latencyPlot(cells map[runSpec]cell, batch int) (*plot.Plot, error) {
	p := newPlot("Append latency, "+sizeName(batch)+" batches (dots measured, crosses model)", "policy", "µs (log)", false, true)
	p.NominalX(e.policyNames()...)
	qs := []struct {
		name       string
		meas, mode func(cell) float64
	}{
		{"p50", func(c cell) float64 { return c.p50 }, func(c cell) float64 { return c.mp50 }},
		{"p99", func(c cell) float64 { return c.p99 }, func(c cell) float64 { return c.mp99 }},
		{"p99.9", func(c cell) float64 { return c.p999 }, func(c cell) float64 { return c.mp999 }},
	}
	for i, q := range qs {
		var meas, model plotter.XYs
		for j, pol := range e.cfg.policies {
			c, ok := cells[runSpec{policy: pol, batchBytes: batch, appenders: 1}]
			if !ok {
				continue
			}
			x := float64(j) + 0.2*float64(i-1)
			meas = append(meas, plotter.XY{X: x, Y: floor(q.meas(c))})
			if v := q.mode(c); v > 0 {
				model = append(model, plotter.XY{X: x, Y: v})
			}
		}
		if err := addPoints(p, q.name+" measured", i, meas, false); err != nil {
			return nil, err
		}
		if err := addPoints(p, q.name+" model", i, model, true); err != nil {
			return nil, err
		}
	}
	roomAbove(p, 0.3)
	return p, nil
}

// seriesPlot: the data at risk over the first repetition of each policy
// run at one batch size.
func (e *experiment) seriesPlot(batch int) (*plot.Plot, error) {
	p := newPlot("Bytes acknowledged but not fsynced over a run, "+sizeName(batch)+" batches (first repetition)",
		"ms since the first append", "bytes at risk (log; 0 drawn at 1 B)", false, true)
	p.Legend.Left = true
	for i, pol := range e.cfg.policies {
		for _, r := range e.results {
			if r.group || r.rep != 0 || r.policy != pol || r.batchBytes != batch {
				continue
			}
			pts := make(plotter.XYs, 0, len(r.series))
			for _, s := range r.series {
				pts = append(pts, plotter.XY{X: float64(s.at) / 1e6, Y: floor(r.riskBytes(float64(s.acked)))})
			}
			if len(pts) == 0 {
				continue
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return nil, err
			}
			l.Color = plotColor(i)
			l.Dashes = plotDashes(pol)
			p.Add(l)
			p.Legend.Add(pol.name(), l)
		}
	}
	roomAbove(p, 0.45)
	return p, nil
}

// groupPlot: flush.messages=1 throughput against the number of concurrent
// appenders on one log, beside ideal group commit (one fsync covers one
// batch of every appender) and no sharing at all (one fsync per batch).
func (e *experiment) groupPlot(cells map[runSpec]cell) (*plot.Plot, error) {
	p := newPlot("Group commit: flush.messages=1, "+sizeName(e.cfg.groupBatch)+" batches, appenders on one log",
		"concurrent appenders (log)", "MB/s (log)", true, true)
	p.Legend.Left = true
	var meas, ideal, single plotter.XYs
	var base float64
	for _, n := range e.cfg.appenders {
		c, ok := cells[runSpec{policy: policy{messages: 1}, batchBytes: e.cfg.groupBatch, appenders: n, group: true}]
		if !ok {
			continue
		}
		meas = append(meas, plotter.XY{X: float64(n), Y: floor(c.mbps)})
		if c.modelMbps > 0 {
			ideal = append(ideal, plotter.XY{X: float64(n), Y: c.modelMbps})
		}
		if e.Model != nil && base == 0 {
			b := int64(c.r.batchLen)
			base = float64(b) / e.Model.FsyncLatency(b).Seconds() / 1e6
		}
		if base > 0 {
			single = append(single, plotter.XY{X: float64(n), Y: base})
		}
	}
	if err := addLine(p, "measured", 0, meas, false); err != nil {
		return nil, err
	}
	if err := addLine(p, "model: ideal group commit (n batches per fsync)", 1, ideal, true); err != nil {
		return nil, err
	}
	if err := addLine(p, "model: no sharing (one fsync per batch)", 2, single, true); err != nil {
		return nil, err
	}
	roomAbove(p, 0.2)
	return p, nil
}
