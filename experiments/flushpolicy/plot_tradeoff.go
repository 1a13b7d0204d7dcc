package main

import (
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// tradeoffBatchPlot: for one batch size, throughput against mean data at
// risk with one curve per policy family (flush.messages through N,
// flush.ms through T) and Kafka's default as a point; the model's curves
// dashed beside them. Each point is labelled with its N or T.
func (e *experiment) tradeoffBatchPlot(cells map[runSpec]cell, batch int) (*plot.Plot, error) {
	p := newPlot("Throughput against data at risk, "+sizeName(batch)+" batches (labels: N of flush.messages, T ms of flush.ms)",
		"mean bytes acknowledged but not fsynced (log; 0 drawn at 1 B)", "append MB/s (log)", true, true)
	p.Legend.Left = true
	for i, fam := range []string{"messages", "ms", "never"} {
		meas, model, labels := e.familyPoints(cells, batch, fam, false)
		peer, _, _ := e.familyPoints(cells, batch, fam, true)
		name := map[string]string{"messages": "flush.messages=N", "ms": "flush.ms=T", "never": "never (Kafka's default)"}[fam]
		if err := addLine(p, name+" measured", i, meas, false); err != nil {
			return nil, err
		}
		if err := addLine(p, name+" model", i, model, true); err != nil {
			return nil, err
		}
		if err := addPeerLine(p, name+" raw peer", i, peer); err != nil {
			return nil, err
		}
		if err := addLabels(p, meas, labels); err != nil {
			return nil, err
		}
	}
	roomAbove(p, 0.45)
	return p, nil
}

// familyPoints collects the measured and modelled (risk, throughput)
// points of the policies of one family, in the configured order.
func (e *experiment) familyPoints(cells map[runSpec]cell, batch int, fam string, raw bool) (meas, model plotter.XYs, labels []string) {
	for _, pol := range e.cfg.policies {
		if pol.family() != fam {
			continue
		}
		c, ok := cells[runSpec{policy: pol, batchBytes: batch, appenders: 1, raw: raw}]
		if !ok {
			continue
		}
		meas = append(meas, plotter.XY{X: floor(c.r.riskBytes(c.riskMean)), Y: floor(c.mbps)})
		if c.modelMbps > 0 {
			model = append(model, plotter.XY{X: floor(c.r.riskBytes(c.modelRiskMean)), Y: c.modelMbps})
		}
		_, v, _ := strings.Cut(pol.name(), "=")
		labels = append(labels, v)
	}
	return meas, model, labels
}

// addPeerLine draws a raw peer's curve dotted, with hollow squares.
func addPeerLine(p *plot.Plot, label string, i int, pts plotter.XYs) error {
	if len(pts) == 0 {
		return nil
	}
	l, s, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	l.Color, s.Color, s.Shape = plotColor(i), plotColor(i), draw.BoxGlyph{}
	l.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
	p.Add(l, s)
	p.Legend.Add(label, l, s)
	return nil
}

// addLabels writes a small label beside each point.
func addLabels(p *plot.Plot, pts plotter.XYs, labels []string) error {
	if len(pts) == 0 || len(labels) != len(pts) || labels[0] == "" {
		return nil
	}
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: pts, Labels: labels})
	if err != nil {
		return err
	}
	for i := range l.TextStyle {
		l.TextStyle[i].Font.Size = vg.Points(8)
		l.TextStyle[i].XAlign = 0.15 // a little right of the point
	}
	p.Add(l)
	return nil
}
