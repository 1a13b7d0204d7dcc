package main

import (
	"fmt"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// chart is one grouped bar chart: groups along X, one bar per series,
// on a logarithmic Y axis (the figures span three decades), each bar
// labelled with its value.
type chart struct {
	file, title, ylabel string
	groups, series      []string
	// value is the bar of series s in group g; NaN leaves a gap.
	value func(g, s int) float64
}

// clampLog is a log scale that draws values below the axis minimum (a
// bar's base at 0, a missing bar) at the minimum instead of failing.
type clampLog struct{}

func (clampLog) Normalize(min, max, x float64) float64 {
	return plot.LogScale{}.Normalize(min, max, math.Max(x, min))
}

// save renders c as PNG and SVG under dir.
func (c chart) save(dir string) error {
	p := plot.New()
	p.Title.Text = c.title
	p.Y.Label.Text = c.ylabel + " (log scale)"
	p.Legend.Top = true
	width := vg.Points(math.Min(40, 420/float64(max(1, len(c.series)*len(c.groups)))))
	lo, hi := math.Inf(1), 0.0
	for s, name := range c.series {
		vals := make(plotter.Values, len(c.groups))
		for g := range c.groups {
			vals[g] = c.value(g, s)
			if !(vals[g] > 0) || math.IsInf(vals[g], 0) {
				vals[g] = 0
				continue
			}
			lo, hi = math.Min(lo, vals[g]), math.Max(hi, vals[g])
		}
		b, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return fmt.Errorf("chart %s: %w", c.file, err)
		}
		b.LineStyle.Width = 0
		b.Color = plotutil.Color(s)
		b.Offset = width * vg.Length(float64(s)-float64(len(c.series)-1)/2)
		p.Add(b)
		p.Legend.Add(name, b)
		if l, err := barLabels(vals, b.Offset); err == nil {
			p.Add(l)
		}
	}
	if hi == 0 {
		lo, hi = 1, 10
	}
	p.Y.Scale, p.Y.Tick.Marker = clampLog{}, plot.LogTicks{Prec: -1}
	p.Y.Min = math.Pow(10, math.Floor(math.Log10(lo)))
	p.Y.Max = math.Pow(10, math.Ceil(math.Log10(hi*8))) // room for labels and legend
	p.NominalX(c.groups...)
	for _, ext := range []string{".png", ".svg"} {
		if err := p.Save(9*vg.Inch, 4.5*vg.Inch, filepath.Join(dir, c.file+ext)); err != nil {
			return fmt.Errorf("save chart %s: %w", c.file, err)
		}
	}
	return nil
}

// barLabels writes each non-zero bar's value just above it.
func barLabels(vals plotter.Values, offset vg.Length) (*plotter.Labels, error) {
	var xys plotter.XYs
	var texts []string
	for g, v := range vals {
		if v > 0 {
			xys = append(xys, plotter.XY{X: float64(g), Y: v})
			texts = append(texts, compact(v))
		}
	}
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: texts})
	if err != nil {
		return nil, err
	}
	for i := range l.TextStyle {
		l.TextStyle[i].XAlign = draw.XCenter
		l.TextStyle[i].Font.Size = vg.Points(7)
	}
	l.Offset = vg.Point{X: offset, Y: vg.Points(2)}
	return l, nil
}

// compact prints v in three significant figures with k/M suffixes.
func compact(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.3g", v)
}
