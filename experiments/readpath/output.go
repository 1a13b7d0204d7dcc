package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/varve/varve/experiments/internal/harness"
)

// writeOutputs writes readpath.csv, the plots, calibration.json and
// summary.md into dir.
func (e *experiment) writeOutputs(dir string) error {
	if err := e.writeCSV(filepath.Join(dir, "readpath.csv")); err != nil {
		return err
	}
	if e.model != nil {
		c := *e.model
		c.Dir = "" // a path of the measuring machine, not a result
		b, err := json.MarshalIndent(c, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "calibration.json"), b, 0o644); err != nil {
			return err
		}
	}
	plots, err := e.writePlots(dir)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.md"), []byte(e.summary(plots)), 0o644)
}

var csvHeader = []string{
	"date", "workload", "path", "consumers", "rep", "bytes", "fetch_bytes", "fetches",
	"seconds", "gbps", "cpu_s", "cpu_s_per_gb", "consumer_cpu_s",
	"resident_before", "resident_after", "verified",
	"model_pagecache_s", "ratio_pagecache", "model_seq_s", "ratio_seq",
	"model_cold_s", "ratio_cold", "model_seeks_s", "seeks", "ratio_seeks",
}

func (e *experiment) writeCSV(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(csvHeader)
	for _, r := range e.results {
		w.Write(e.csvRow(r))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

func (e *experiment) csvRow(r result) []string {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	m := r.model
	return []string{
		e.started.Format("2006-01-02T15:04:05Z07:00"), r.workload, r.path, strconv.Itoa(r.consumers),
		strconv.Itoa(r.rep), strconv.FormatInt(r.bytes, 10), strconv.FormatInt(e.cfg.fetchBytes, 10),
		strconv.FormatInt(r.fetches, 10), g(r.seconds), g(r.gbps()), g(r.cpuSeconds), g(r.cpuPerGB()),
		g(r.consumerCPU), g(r.residentBefore), g(r.residentAfter), strconv.FormatBool(r.verified),
		g(m.pageCache.Seconds()), g(m.ratioPageCache), g(m.seq.Seconds()), g(m.ratioSeq),
		g(m.cold.Seconds()), g(m.ratioCold), g(m.seeks.Seconds()), strconv.Itoa(m.seekCount), g(m.ratioSeeks),
	}
}

// cell is the median over repetitions of one (workload, path, consumers).
type cell struct {
	gbps, cpuPerGB, ratioSeq, ratioCold, ratioSeeks, ratioPageCache float64
	resBefore, resAfter                                             float64
	gbpsMin, gbpsMax                                                float64
	n                                                               int
}

// medians aggregates the results by (workload, path, consumers).
func (e *experiment) medians() map[runSpec]cell {
	groups := map[runSpec][]result{}
	for _, r := range e.results {
		k := r.runSpec
		k.rep = 0
		groups[k] = append(groups[k], r)
	}
	out := map[runSpec]cell{}
	for k, rs := range groups {
		out[k] = cell{
			gbps:           harness.MedianOf(rs, func(r result) float64 { return r.gbps() }),
			cpuPerGB:       harness.MedianOf(rs, func(r result) float64 { return r.cpuPerGB() }),
			ratioSeq:       harness.MedianOf(rs, func(r result) float64 { return r.model.ratioSeq }),
			ratioCold:      harness.MedianOf(rs, func(r result) float64 { return r.model.ratioCold }),
			ratioSeeks:     harness.MedianOf(rs, func(r result) float64 { return r.model.ratioSeeks }),
			ratioPageCache: harness.MedianOf(rs, func(r result) float64 { return r.model.ratioPageCache }),
			resBefore:      harness.MedianOf(rs, func(r result) float64 { return r.residentBefore }),
			resAfter:       harness.MedianOf(rs, func(r result) float64 { return r.residentAfter }),
			gbpsMin:        quantile(rs, 0, func(r result) float64 { return r.gbps() }),
			gbpsMax:        quantile(rs, 1, func(r result) float64 { return r.gbps() }),
			n:              len(rs),
		}
	}
	return out
}

// quantile returns the minimum (q=0) or maximum (q=1) of f over rs.
func quantile(rs []result, q int, f func(result) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	return v[q*(len(v)-1)]
}
