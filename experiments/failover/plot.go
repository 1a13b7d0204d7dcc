package main

import (
	"fmt"
	"maps"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/varve/varve/experiments/internal/plots"
)

// plotTrials draws every trial's figures as box plots, one group per
// figure and one box per system side by side, in seconds.
func plotTrials(dir, file string, outs []outcome) error {
	p := plot.New()
	p.Title.Text = "Failover: time from the fault (each box: the trials of one system)"
	p.Y.Label.Text = "seconds"
	p.Legend.Top = true
	width := vg.Points(18)
	var names []string
	for _, m := range metrics {
		names = append(names, m.scenario+"\n"+m.name)
	}
	for s, o := range outs {
		drawn := false
		for g, m := range metrics {
			v := m.values(o)
			if len(v) == 0 {
				continue
			}
			vals := make(plotter.Values, len(v))
			for i, x := range v {
				vals[i] = x / 1e3
			}
			box, err := plotter.NewBoxPlot(width, float64(g), vals)
			if err != nil {
				return fmt.Errorf("plot %s: %w", file, err)
			}
			box.Offset = width * vg.Length(float64(s)-float64(len(outs)-1)/2) * 1.2
			box.FillColor = plotutil.Color(s)
			p.Add(box)
			if !drawn {
				p.Legend.Add(o.system, plots.Swatch{C: plotutil.Color(s)})
				drawn = true
			}
		}
	}
	p.NominalX(names...)
	p.Y.Min = 0
	return plots.Save(p, 11*vg.Inch, 5*vg.Inch, dir, file)
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
