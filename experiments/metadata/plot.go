package main

import (
	"fmt"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// plot draws propagation.{png,svg}: the followers' p50 and p99 per
// change against the partitions in the cluster (log X).
func (e *experiment) plot() error {
	order, by := e.groups()
	p := plot.New()
	p.Title.Text = "Metadata propagation to the followers' brokers"
	p.X.Label.Text = "partitions in the cluster (log)"
	p.Y.Label.Text = "ms from the controller's answer"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	var lines []any
	for _, kind := range []string{"create", "config"} {
		for _, q := range []float64{50, 99} {
			var pts plotter.XYs
			for _, g := range order {
				if g.kind == kind && !g.controller {
					d := percentile(fromAnswer(by[g]), q)
					pts = append(pts, plotter.XY{X: float64(g.size), Y: float64(d) / 1e6})
				}
			}
			slices.SortFunc(pts, func(a, b plotter.XY) int { return int(a.X - b.X) })
			if len(pts) > 0 {
				lines = append(lines, fmt.Sprintf("%s p%.0f", kind, q), pts)
			}
		}
	}
	if len(lines) == 0 {
		return nil
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return err
	}
	for _, ext := range []string{".png", ".svg"} {
		if err := p.Save(7*vg.Inch, 4*vg.Inch, filepath.Join(e.s.Out, "propagation"+ext)); err != nil {
			return err
		}
	}
	return nil
}
