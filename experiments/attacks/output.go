package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/varve/varve/experiments/internal/harness"
)

func (e *experiment) writeOutputs(dir string) error {
	if err := harness.WriteCSV(filepath.Join(dir, "attacks.csv"), csvHeader, e.rows()); err != nil {
		return err
	}
	if err := e.plot(dir); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.md"), []byte(e.summary()), 0o644)
}

var csvHeader = []string{"attack", "scale", "baseline_rss_bytes", "peak_rss_bytes", "ceiling_bytes", "under_ceiling",
	"killed", "serves_after", "attack_s", "detail", "after"}

func (e *experiment) rows() [][]string {
	var out [][]string
	for _, r := range e.results {
		out = append(out, []string{r.attack, strconv.Itoa(r.scale), strconv.FormatInt(r.baseline, 10),
			strconv.FormatInt(r.peak, 10), strconv.FormatInt(e.cfg.ceiling, 10), strconv.FormatBool(e.under(r)),
			strconv.FormatBool(r.killed), strconv.FormatBool(r.serves), harness.G(r.seconds), r.detail, r.after})
	}
	return out
}

func (e *experiment) under(r result) bool { return !r.killed && r.peak <= e.cfg.ceiling }

func (e *experiment) summary() string {
	var b strings.Builder
	e.WriteHeader(&b, "Attacks on one broker: peak memory and service", "attacks", nil)
	fmt.Fprintf(&b, "- Each run starts a fresh `varve server` with GOMEMLIMIT=%s and defaults otherwise; VmRSS sampled every 20 ms;\n"+
		"  the broker is killed past %s (a container's limit). Ceiling: %s of peak RSS. Elapsed %s.\n\n",
		e.cfg.goMemLimit, harness.BytesName(float64(e.cfg.killAt)), harness.BytesName(float64(e.cfg.ceiling)), e.Elapsed())
	b.WriteString("| attack | scale | RSS before | peak RSS | under ceiling | serves after | what the attack did | after |\n|---|---|---|---|---|---|---|---|\n")
	pass := true
	for _, r := range e.results {
		ok := e.under(r) && r.serves
		pass = pass && ok
		peak := harness.BytesName(float64(r.peak))
		if r.killed {
			peak = "> " + harness.BytesName(float64(e.cfg.killAt)) + " (killed)"
		}
		fmt.Fprintf(&b, "| %s | %dx | %s | %s | %s | %s | %s | %s |\n", r.attack, r.scale, harness.BytesName(float64(r.baseline)),
			peak, yes(e.under(r)), yes(r.serves), r.detail, r.after)
	}
	verdict := "every run stayed under the ceiling and the broker served afterwards"
	if !pass {
		verdict = "NOT every run stayed under the ceiling and served afterwards (see the table)"
	}
	fmt.Fprintf(&b, "\nVerdict: %s.\n\n", verdict)
	harness.WritePlots(&b, []string{"peak_rss"})
	return b.String()
}

func yes(v bool) string {
	if v {
		return "yes"
	}
	return "**no**"
}

// plot draws peak RSS per attack, one bar per scale, and the ceiling.
func (e *experiment) plot(dir string) error {
	p := plot.New()
	p.Title.Text = "Peak broker RSS under attack (killed runs drawn at the kill limit)"
	p.Y.Label.Text = "MiB"
	p.Legend.Top = true
	w := vg.Points(18)
	for i, sc := range e.cfg.scales {
		vals := make(plotter.Values, len(e.cfg.attacks))
		for j, a := range e.cfg.attacks {
			for _, r := range e.results {
				if r.attack == a && r.scale == sc {
					vals[j] = float64(r.peak) / (1 << 20)
				}
			}
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return err
		}
		bars.LineStyle.Width = 0
		bars.Color = plotutil.Color(i)
		bars.Offset = w * vg.Length(float64(i)-float64(len(e.cfg.scales)-1)/2)
		p.Add(bars)
		p.Legend.Add(fmt.Sprintf("%dx", sc), bars)
	}
	ceil := float64(e.cfg.ceiling) / (1 << 20)
	line, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: ceil}, {X: float64(len(e.cfg.attacks)) - 0.5, Y: ceil}})
	if err != nil {
		return err
	}
	line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	line.Color = plotutil.Color(3)
	p.Add(line)
	p.Legend.Add("ceiling", line)
	p.NominalX(e.cfg.attacks...)
	p.Y.Min, p.Y.Max = 0, math.Max(p.Y.Max, ceil)*1.2 // room above the ceiling for the legend
	for _, ext := range []string{".png", ".svg"} {
		if err := p.Save(9*vg.Inch, 4.5*vg.Inch, filepath.Join(dir, "peak_rss"+ext)); err != nil {
			return err
		}
	}
	return nil
}
