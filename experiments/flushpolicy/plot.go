package main

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// logFloor stands in for zero on log axes (a run with nothing at risk).
const logFloor = 1.0

// figure is one plot to render.
type figure struct {
	name string
	make func(map[runSpec]cell) (*plot.Plot, error)
}

// figures lists the plots in the order summary.md shows them.
func (e *experiment) figures() []figure {
	figs := []figure{{"throughput_vs_risk", e.tradeoffPlot}, {"throughput", e.throughputPlot}}
	for _, b := range e.cfg.batchSizes {
		figs = append(figs,
			figure{"tradeoff_" + sizeName(b), func(c map[runSpec]cell) (*plot.Plot, error) { return e.tradeoffBatchPlot(c, b) }},
			figure{"latency_" + sizeName(b), func(c map[runSpec]cell) (*plot.Plot, error) { return e.latencyPlot(c, b) }},
			figure{"risk_over_time_" + sizeName(b), func(map[runSpec]cell) (*plot.Plot, error) { return e.seriesPlot(b) }})
	}
	if !e.cfg.noGroup {
		figs = append(figs, figure{"group_commit", e.groupPlot})
	}
	return figs
}

// writePlots renders every figure as PNG and SVG and returns the base
// names.
func (e *experiment) writePlots(dir string) ([]string, error) {
	cells := e.medians()
	var names []string
	for _, f := range e.figures() {
		p, err := f.make(cells)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", f.name, err)
		}
		if err := save(p, dir, f.name); err != nil {
			return nil, err
		}
		names = append(names, f.name)
	}
	return names, nil
}

func save(p *plot.Plot, dir, name string) error {
	for _, ext := range []string{".png", ".svg"} {
		if err := p.Save(8*vg.Inch, 5*vg.Inch, filepath.Join(dir, name+ext)); err != nil {
			return fmt.Errorf("save plot %s: %w", name, err)
		}
	}
	return nil
}

func newPlot(title, x, y string, logX, logY bool) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	if logX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	}
	if logY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	}
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	return p
}

// roomAbove raises the Y axis so the top frac of the plot is free for the
// legend. Call it after the data are added.
func roomAbove(p *plot.Plot, frac float64) {
	lo, hi := p.Y.Min, p.Y.Max
	if hi <= lo*1.000001 { // one value: give the axis a decade around it
		p.Y.Min, p.Y.Max, lo, hi = lo/3, hi*3, lo/3, hi*3
	}
	if _, isLog := p.Y.Scale.(plot.LogScale); isLog && lo > 0 {
		p.Y.Max = hi * math.Pow(hi/lo, frac/(1-frac))
		return
	}
	p.Y.Max = lo + (hi-lo)/(1-frac)
}

// addLine adds a line with point markers in style i.
func addLine(p *plot.Plot, label string, i int, pts plotter.XYs, dashed bool) error {
	if len(pts) == 0 {
		return nil
	}
	l, s, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	l.Color, s.Color, s.Shape = plotColor(i), plotColor(i), plotutil.Shape(i)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	p.Add(l, s)
	p.Legend.Add(label, l, s)
	return nil
}

// addPoints adds markers only, filled for measurements and hollow for
// model predictions.
func addPoints(p *plot.Plot, label string, i int, pts plotter.XYs, model bool) error {
	if len(pts) == 0 {
		return nil
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	s.Color = plotColor(i)
	s.Shape = draw.CircleGlyph{}
	s.Radius = vg.Points(3.5)
	if model {
		s.Shape = draw.CrossGlyph{}
	}
	p.Add(s)
	p.Legend.Add(label, s)
	return nil
}

func floor(v float64) float64 { return max(v, logFloor) }

// tradeoffPlot: throughput against the mean data at risk, one curve per
// policy through its batch sizes.
func (e *experiment) tradeoffPlot(cells map[runSpec]cell) (*plot.Plot, error) {
	p := newPlot("Throughput against data at risk (one curve per policy, points = batch sizes)",
		"mean bytes acknowledged but not fsynced (log; 0 drawn at 1 B)", "append MB/s (log)", true, true)
	p.Legend.Left = true
	for i, pol := range e.cfg.policies {
		var pts plotter.XYs
		for _, b := range e.cfg.batchSizes {
			c, ok := cells[runSpec{policy: pol, batchBytes: b, appenders: 1}]
			if ok {
				pts = append(pts, plotter.XY{X: floor(c.r.riskBytes(c.riskMean)), Y: c.mbps})
			}
		}
		if err := addLine(p, pol.name(), i, pts, pol.family() == "ms"); err != nil {
			return nil, err
		}
	}
	roomAbove(p, 0.45)
	return p, nil
}

// throughputPlot: measured throughput per policy and batch size, with
// the model's prediction beside each.
func (e *experiment) throughputPlot(cells map[runSpec]cell) (*plot.Plot, error) {
	p := newPlot("Append throughput per policy (dots measured, crosses model)", "policy", "MB/s (log)", false, true)
	p.NominalX(e.policyNames()...)
	for i, b := range e.cfg.batchSizes {
		var meas, model plotter.XYs
		for j, pol := range e.cfg.policies {
			c, ok := cells[runSpec{policy: pol, batchBytes: b, appenders: 1}]
			if !ok {
				continue
			}
			x := float64(j) + 0.2*(float64(i)-float64(len(e.cfg.batchSizes)-1)/2)
			meas = append(meas, plotter.XY{X: x, Y: floor(c.mbps)})
			if c.modelMbps > 0 {
				model = append(model, plotter.XY{X: x, Y: c.modelMbps})
			}
		}
		if err := addPoints(p, sizeName(b)+" measured", i, meas, false); err != nil {
			return nil, err
		}
		if err := addPoints(p, sizeName(b)+" model", i, model, true); err != nil {
			return nil, err
		}
	}
	roomAbove(p, 0.3)
	return p, nil
}

func (e *experiment) policyNames() []string {
	out := make([]string, len(e.cfg.policies))
	for i, p := range e.cfg.policies {
		out[i] = p.name()
	}
	return out
}

// palette has ten distinct colours (Tableau 10), enough for every
// default policy to have its own.
var palette = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
	color.RGBA{214, 39, 40, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
	color.RGBA{227, 119, 194, 255}, color.RGBA{127, 127, 127, 255}, color.RGBA{188, 189, 34, 255},
	color.RGBA{23, 190, 207, 255},
}

func plotColor(i int) color.Color { return palette[i%len(palette)] }

// plotDashes draws flush.ms policies dashed, the others solid.
func plotDashes(p policy) []vg.Length {
	if p.family() == "ms" {
		return []vg.Length{vg.Points(4), vg.Points(3)}
	}
	return nil
}
