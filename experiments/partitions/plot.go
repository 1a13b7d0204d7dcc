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
)

// chart is one figure: partitions on a log X axis, per policy a measured
// line and the model's line dashed.
type chart struct {
	file, title, ylabel string
	measured, model     func(cell) float64
}

func (e *experiment) charts() []chart {
	return []chart{
		{"throughput", "Durable throughput: appends and the final flush of every partition", "MB/s (log)",
			func(c cell) float64 { return c.durable }, func(c cell) float64 { return c.modelDurable }},
		{"ack_throughput", "Append throughput a producer sees (before the final flush)", "MB/s (log)",
			func(c cell) float64 { return c.ack }, func(c cell) float64 { return c.modelAck }},
		{"data_at_risk", "Most data acknowledged but not fsynced at once, over all partitions", "bytes (log; 0 drawn at 1 B)",
			func(c cell) float64 { return c.r.riskBytes(c.riskMax) }, func(c cell) float64 { return c.r.riskBytes(c.modelRiskMax) }},
	}
}

// riskBytes converts messages to bytes: every batch of a run is the same.
func (r result) riskBytes(msgs float64) float64 {
	return msgs * float64(r.batchLen) / float64(r.records)
}

// writePlots renders every chart as PNG and SVG and returns the names.
func (e *experiment) writePlots(dir string) ([]string, error) {
	cells := e.medians()
	var names []string
	for _, ch := range e.charts() {
		p, err := e.lineChart(ch, cells)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", ch.file, err)
		}
		for _, ext := range []string{".png", ".svg"} {
			if err := p.Save(8*vg.Inch, 5*vg.Inch, filepath.Join(dir, ch.file+ext)); err != nil {
				return nil, fmt.Errorf("save plot %s: %w", ch.file, err)
			}
		}
		names = append(names, ch.file)
	}
	return names, nil
}

func (e *experiment) lineChart(ch chart, cells map[runSpec]cell) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = ch.title
	p.X.Label.Text = "partitions (log)"
	p.Y.Label.Text = ch.ylabel
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	for i, pol := range e.cfg.policies {
		var meas, model plotter.XYs
		for _, n := range e.cfg.partitions {
			c, ok := cells[runSpec{policy: pol, partitions: n}]
			if !ok {
				continue
			}
			meas = append(meas, plotter.XY{X: float64(n), Y: max(ch.measured(c), 1)})
			if v := ch.model(c); v > 0 && e.Model != nil {
				model = append(model, plotter.XY{X: float64(n), Y: v})
			}
		}
		if err := addLine(p, pol.name()+" measured", i, meas, false); err != nil {
			return nil, err
		}
		if err := addLine(p, pol.name()+" model", i, model, true); err != nil {
			return nil, err
		}
	}
	roomAbove(p, 0.3)
	return p, nil
}

// palette: Tableau 10.
var palette = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
	color.RGBA{214, 39, 40, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
	color.RGBA{227, 119, 194, 255}, color.RGBA{127, 127, 127, 255}, color.RGBA{188, 189, 34, 255},
	color.RGBA{23, 190, 207, 255},
}

// addLine adds a line with point markers in style i, dashed for models.
func addLine(p *plot.Plot, label string, i int, pts plotter.XYs, dashed bool) error {
	if len(pts) == 0 {
		return nil
	}
	l, s, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	c := palette[i%len(palette)]
	l.Color, s.Color, s.Shape = c, c, plotutil.Shape(i)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	p.Add(l, s)
	p.Legend.Add(label, l, s)
	return nil
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
