package main

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// plotRatios draws txn-over-plain (transactional / plain records/s per
// case, a bar per system) and varve-over-kafka (Varve / Kafka per case,
// a bar per mode), each as PNG and SVG.
func plotRatios(dir string, cfg config, cs []cell, rs []runResult) error {
	var names []string
	for _, n := range cfg.cases {
		names = append(names, strconv.Itoa(n)+" records per txn")
	}
	var series []bars
	for _, s := range cfg.systems {
		var v plotter.Values
		for _, n := range cfg.cases {
			v = append(v, finite(lookup(cs, n, s).ratio))
		}
		series = append(series, bars{s, v})
	}
	if err := barPlot(dir, "txn-over-plain", "Transactional / plain records/s (1 = no cost)", names, series); err != nil {
		return err
	}
	if !slices.Contains(cfg.systems, sysVarve) || !slices.Contains(cfg.systems, sysKafka) {
		return nil
	}
	series = nil
	for _, m := range modes {
		var v plotter.Values
		for _, n := range cfg.cases {
			v = append(v, finite(versus(rs, n, m)))
		}
		series = append(series, bars{m, v})
	}
	return barPlot(dir, "varve-over-kafka", "Varve / Kafka records/s (1 = as fast)", names, series)
}

// bars is one series of a grouped bar chart.
type bars struct {
	label  string
	values plotter.Values
}

func barPlot(dir, file, title string, names []string, series []bars) error {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "ratio"
	p.Legend.Top = true
	w := vg.Points(24)
	for i, s := range series {
		b, err := plotter.NewBarChart(s.values, w)
		if err != nil {
			return fmt.Errorf("plot %s: %w", file, err)
		}
		b.Offset = w * vg.Length(float64(i)-float64(len(series)-1)/2)
		b.Color = plotutil.Color(i)
		p.Add(b)
		p.Legend.Add(s.label, b)
	}
	p.NominalX(names...)
	p.Y.Min = 0
	p.Y.Max *= 1.25 // room for the legend above the tallest bar
	for _, ext := range []string{".png", ".svg"} {
		if err := p.Save(8*vg.Inch, 4*vg.Inch, filepath.Join(dir, file+ext)); err != nil {
			return fmt.Errorf("save plot %s: %w", file, err)
		}
	}
	return nil
}

func lookup(cs []cell, perTxn int, system string) cell {
	for _, c := range cs {
		if c.perTxn == perTxn && c.system == system {
			return c
		}
	}
	return cell{ratio: math.NaN()}
}

// finite is v, or 0 for a figure that was not measured.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}
