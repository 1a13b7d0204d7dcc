package main

import (
	"fmt"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// chart is one grouped bar chart: groups along X, one bar per series.
type chart struct {
	file, title, ylabel string
	groups, series      []string
	// value is the bar of series s in group g; NaN leaves a gap.
	value func(g, s int) float64
}

// save renders c as PNG and SVG under dir.
func (c chart) save(dir string) error {
	p := plot.New()
	p.Title.Text = c.title
	p.Y.Label.Text = c.ylabel
	p.Legend.Top = true
	width := vg.Points(min(36, 240/float64(max(1, len(c.series)*len(c.groups)))*float64(len(c.groups))/2+8))
	for s, name := range c.series {
		vals := make(plotter.Values, len(c.groups))
		for g := range c.groups {
			v := c.value(g, s)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				v = 0
			}
			vals[g] = v
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
	}
	p.NominalX(c.groups...)
	p.Y.Min = 0
	p.Y.Max *= 1.35 // room for the legend
	for _, ext := range []string{".png", ".svg"} {
		if err := p.Save(8*vg.Inch, 4.5*vg.Inch, filepath.Join(dir, c.file+ext)); err != nil {
			return fmt.Errorf("save chart %s: %w", c.file, err)
		}
	}
	return nil
}
