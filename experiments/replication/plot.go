package main

import (
	"fmt"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// writePlots draws measured/model for every figure: one bar each, with
// the target line where the brief of the benchmark sets one.
func writePlots(dir string, f figures) ([]string, error) {
	p := plot.New()
	p.Title.Text = "Replication: measured / model (and RF3 / RF1)"
	p.Y.Label.Text = "ratio"
	labels := []string{"RF3/RF1", "RF3/model", "RF3/RF1 / CPU model", "acks=all p50/model", "same, flush=1", "catch-up/sendfile", "catch-up/serial"}
	vals := plotter.Values{ratio(f.RF3, f.RF1), ratio(f.RF3, f.TputModel), ratio(ratio(f.RF3, f.RF1), f.CPUShareRatio), ratio(f.Lat.AcksAllP50, f.Lat.Model),
		ratio(f.LatFlush.AcksAllP50, f.LatFlush.Model), ratio(f.CatchUp, f.cal.SendfileBps/1e6), ratio(f.CatchUp, f.CatchUpModel)}
	bars, err := plotter.NewBarChart(vals, vg.Points(40))
	if err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	bars.Color = plotutil.Color(0)
	p.Add(bars, plotter.NewGrid())
	p.NominalX(labels...)
	one, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: 1}, {X: float64(len(labels)) - 0.5, Y: 1}})
	if err != nil {
		return nil, err
	}
	one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(one)
	const name = "ratios"
	for _, ext := range []string{".png", ".svg"} {
		if err := p.Save(11*vg.Inch, 4.5*vg.Inch, filepath.Join(dir, name+ext)); err != nil {
			return nil, fmt.Errorf("save plot: %w", err)
		}
	}
	return []string{name}, nil
}
