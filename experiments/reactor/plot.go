package main

import (
	"fmt"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// chart is one figure: connections on a log X axis, one line per
// design and workload.
type chart struct {
	file, title, ylabel string
	logY                bool
	value               func(row) float64
}

var charts = []chart{
	{"throughput", "Throughput", "responses / s", false, func(r row) float64 { return r.Throughput }},
	{"p99_latency", "p99 round-trip latency", "µs (log)", true, func(r row) float64 { return r.P99 }},
	{"server_rss", "Server memory (VmRSS)", "MiB", false, func(r row) float64 { return r.RSSMB }},
	{"cpu_per_request", "Server CPU per response", "µs of CPU", false, func(r row) float64 { return r.CPUPerReqUs }},
}

// writePlots renders every chart as PNG and SVG and returns the base names.
func writePlots(dir string, cfg config, rows []row) ([]string, error) {
	med := medians(rows)
	var names []string
	for _, ch := range charts {
		p, err := lineChart(ch, cfg, med)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", ch.file, err)
		}
		for _, ext := range []string{".png", ".svg"} {
			if err := p.Save(7*vg.Inch, 4.5*vg.Inch, filepath.Join(dir, ch.file+ext)); err != nil {
				return nil, fmt.Errorf("save plot %s: %w", ch.file, err)
			}
		}
		names = append(names, ch.file)
	}
	return names, nil
}

func lineChart(ch chart, cfg config, med map[cellKey]row) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = ch.title
	p.Y.Label.Text = ch.ylabel
	p.X.Label.Text = "connections (log)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{}
	if ch.logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{}
	}
	p.Legend.Top = true
	p.Legend.Left = true
	i := 0
	for _, w := range cfg.workloads {
		for _, d := range cfg.designs {
			pts := points(ch, med, w, d, cfg.conns)
			if len(pts) == 0 {
				continue
			}
			line, scatter, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, err
			}
			line.Color = plotutil.Color(i)
			line.Dashes = plotutil.Dashes(i / len(cfg.designs))
			scatter.Color = plotutil.Color(i)
			scatter.Shape = plotutil.Shape(i)
			p.Add(line, scatter)
			p.Legend.Add(d+" "+w, line, scatter)
			i++
		}
	}
	leaveRoomForLegend(p, ch.logY)
	return p, nil
}

// leaveRoomForLegend raises the Y axis so the legend (top left) does not
// cover the lines, and starts linear axes at zero.
func leaveRoomForLegend(p *plot.Plot, logY bool) {
	if logY {
		p.Y.Max *= 6
		return
	}
	p.Y.Min = 0
	p.Y.Max *= 1.4
}

// points collects the chart's values; non-positive values are left out of
// log axes.
func points(ch chart, med map[cellKey]row, w, d string, conns []int) plotter.XYs {
	var pts plotter.XYs
	for _, n := range conns {
		r, ok := med[cellKey{w, d, n}]
		if !ok {
			continue
		}
		v := ch.value(r)
		if ch.logY && v <= 0 {
			continue
		}
		pts = append(pts, plotter.XY{X: float64(n), Y: v})
	}
	return pts
}
