package main

import (
	"image/color"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/varve/varve/chaos"
	"github.com/varve/varve/experiments/internal/plots"
)

// faultWords are the first words of the events that start a fault (the
// Runner notes "<kind> <node>..." when a fault strikes; heals are
// "started", "resumed", "healed ...").
var faultWords = []string{"kill", "pause", "restart", "cut", "isolate",
	chaos.KillAtISRChange.String(), chaos.KillMidReassign.String(), chaos.DropTailThenKill.String()}

// second is one second of a history: the appends acknowledged in it and
// their p99 latency (invoke to acknowledgement), in milliseconds.
type second struct {
	acked int
	p99   float64
}

// perSecond buckets the acknowledged appends by the second they
// completed, from 0 to the last.
func perSecond(h *chaos.History) []second {
	by := map[int][]time.Duration{}
	last := -1
	for _, a := range h.Appends() {
		if a.Outcome == chaos.OK {
			s := int(a.Complete / time.Second)
			by[s] = append(by[s], a.Complete-a.Invoke)
			last = max(last, s)
		}
	}
	out := make([]second, last+1)
	for s := range out {
		lat := by[s]
		slices.Sort(lat)
		out[s].acked = len(lat)
		if len(lat) > 0 {
			out[s].p99 = ms64(lat[min(len(lat)-1, len(lat)*99/100)])
		}
	}
	return out
}

// faultTimes are the times, in seconds, at which faults struck and were
// healed.
func faultTimes(h *chaos.History) (struck, healed []float64) {
	for _, e := range h.Events() {
		first, _, _ := strings.Cut(e.What, " ")
		switch {
		case slices.Contains(faultWords, first):
			struck = append(struck, e.At.Seconds())
		case first == "started" || first == "resumed" || first == "healed":
			healed = append(healed, e.At.Seconds())
		}
	}
	return struck, healed
}

// plotSoak draws throughput and p99 latency over the run, one above the
// other on one time axis, with a red line where each fault struck and a
// dashed grey one where it healed: dir/soak.png and dir/soak.svg.
func plotSoak(dir string, h *chaos.History) error {
	secs := perSecond(h)
	acked, p99 := make(plotter.XYs, 0, len(secs)), make(plotter.XYs, 0, len(secs))
	topAcked, topP99 := 1.0, 1.0
	for s, v := range secs {
		acked = append(acked, plotter.XY{X: float64(s) + 0.5, Y: float64(v.acked)})
		topAcked = max(topAcked, float64(v.acked))
		if v.acked > 0 {
			p99 = append(p99, plotter.XY{X: float64(s) + 0.5, Y: v.p99})
			topP99 = max(topP99, v.p99)
		}
	}
	struck, healed := faultTimes(h)
	top := plot.New()
	top.Title.Text = "Faults soak: acks=all appends acknowledged per second, faults marked"
	top.Y.Label.Text = "appends/s"
	bottom := plot.New()
	bottom.Title.Text = "p99 latency of the appends acknowledged in each second"
	bottom.Y.Label.Text = "ms"
	bottom.X.Label.Text = "seconds from the start of the run"
	for _, x := range []struct {
		p      *plot.Plot
		xys    plotter.XYs
		peak   float64
		points bool
	}{{top, acked, topAcked, false}, {bottom, p99, topP99, true}} {
		if err := series(x.p, x.xys, x.peak, x.points, struck, healed); err != nil {
			return err
		}
	}
	return plots.SaveStacked([]*plot.Plot{top, bottom}, 12*vg.Inch, 7*vg.Inch, dir, "soak")
}

// series adds one time series to p, as a line or (points: seconds with
// no acknowledgement have no latency, and a line would bridge them) as
// points, and the fault markers up to peak.
func series(p *plot.Plot, xys plotter.XYs, peak float64, points bool, struck, healed []float64) error {
	p.Y.Min, p.Legend.Top = 0, true
	blue := color.RGBA{B: 160, A: 255}
	switch {
	case len(xys) == 0:
	case points:
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return err
		}
		sc.Color, sc.Radius = blue, vg.Points(1.5)
		p.Add(sc)
	default:
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.Color, l.Width = blue, vg.Points(1)
		p.Add(l)
	}
	if err := plots.Markers(p, struck, peak*1.05, color.RGBA{R: 220, A: 255}, false, "fault"); err != nil {
		return err
	}
	return plots.Markers(p, healed, peak*1.05, color.Gray{Y: 140}, true, "healed")
}

func ms64(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
