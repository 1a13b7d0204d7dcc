package main

import (
	"fmt"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// chart is one grouped bar chart: consumer counts on X, one bar per path.
type chart struct {
	file, title, ylabel string
	workload            string
	value               func(cell) float64
}

func (e *experiment) charts() []chart {
	var out []chart
	for _, w := range e.cfg.workloads {
		out = append(out,
			chart{"gbps_" + w, "Delivered throughput, " + w + " reads", "GB/s (median)", w, func(c cell) float64 { return c.gbps }},
			chart{"cpu_per_gb_" + w, "Sending CPU per GB, " + w + " reads", "CPU s / GB (getrusage)", w, func(c cell) float64 { return c.cpuPerGB }})
	}
	if e.model != nil && contains(e.cfg.workloads, workloadCatchup) {
		out = append(out, chart{"model_ratio_catchup", "Catch-up vs disk model (cold buffered read)",
			"predicted / measured time", workloadCatchup, func(c cell) float64 { return c.ratioCold }})
	}
	return out
}

// writePlots renders every chart as PNG and SVG and returns the base names.
func (e *experiment) writePlots(dir string) ([]string, error) {
	cells := e.medians()
	var names []string
	for _, ch := range e.charts() {
		p, err := e.groupedBars(ch, cells)
		if err != nil {
			return nil, err
		}
		for _, ext := range []string{".png", ".svg"} {
			if err := p.Save(7*vg.Inch, 4*vg.Inch, filepath.Join(dir, ch.file+ext)); err != nil {
				return nil, fmt.Errorf("save plot %s: %w", ch.file, err)
			}
		}
		names = append(names, ch.file)
	}
	return names, nil
}

func (e *experiment) groupedBars(ch chart, cells map[runSpec]cell) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = ch.title
	p.Y.Label.Text = ch.ylabel
	p.X.Label.Text = "concurrent consumers"
	p.Legend.Top = true
	width := vg.Points(96 / float64(len(e.cfg.paths)))
	for i, path := range e.cfg.paths {
		vals := make(plotter.Values, len(e.cfg.consumers))
		for j, n := range e.cfg.consumers {
			vals[j] = ch.value(cells[runSpec{workload: ch.workload, path: path, consumers: n}])
		}
		b, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, err
		}
		b.LineStyle.Width = vg.Length(0)
		b.Color = plotutil.Color(i)
		b.Offset = width * vg.Length(float64(i)-float64(len(e.cfg.paths)-1)/2)
		p.Add(b)
		p.Legend.Add(path, b)
	}
	labels := make([]string, len(e.cfg.consumers))
	for j, n := range e.cfg.consumers {
		labels[j] = strconv.Itoa(n)
	}
	p.NominalX(labels...)
	p.Y.Min = 0
	p.Y.Max *= 1.4 // headroom for the legend
	return p, nil
}
