package main

import (
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/varve/varve/experiments/internal/harness"
)

// writeOutputs writes flushpolicy.csv, risk_timeseries.csv,
// calibration.json, the plots and summary.md into dir.
func (e *experiment) writeOutputs(dir string) error {
	if err := harness.WriteCSV(filepath.Join(dir, "flushpolicy.csv"), csvHeader, e.rows()); err != nil {
		return err
	}
	if err := harness.WriteCSV(filepath.Join(dir, "risk_timeseries.csv"), seriesHeader, e.seriesRows()); err != nil {
		return err
	}
	if err := e.WriteCalibration(dir); err != nil {
		return err
	}
	plots, err := e.writePlots(dir)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.md"), []byte(e.summary(plots)), 0o644)
}

// csvHeader names the columns of flushpolicy.csv: one row per run.
var csvHeader = []string{
	"date", "kind", "policy", "flush_messages", "flush_ms", "batch_bytes", "records_per_batch", "appenders", "rep",
	"appends", "bytes", "messages", "seconds", "mbps", "model_mbps", "ratio_model",
	"p50_us", "p99_us", "p999_us", "max_us", "model_p50_us", "model_p99_us", "model_p999_us",
	"risk_mean_msgs", "risk_p99_msgs", "risk_max_msgs", "risk_mean_bytes", "risk_max_bytes",
	"model_risk_mean_msgs", "model_risk_max_msgs", "unsynced_mean_msgs", "unsynced_max_msgs", "risk_samples",
	"fsyncs", "model_fsyncs", "fsync_mean_us", "batches_per_fsync", "synced_bytes", "fsync_mbps", "drain_ms", "load1",
}

func (e *experiment) rows() [][]string {
	date := e.Started.Format(time.RFC3339)
	out := make([][]string, 0, len(e.results))
	for _, r := range e.results {
		kind := "policy"
		switch {
		case r.group:
			kind = "group"
		case r.raw:
			kind = "raw"
		}
		m, k := r.model, r.risk
		out = append(out, []string{
			date, kind, r.policy.name(), strconv.FormatInt(r.policy.messages, 10), strconv.FormatInt(r.policy.ms.Milliseconds(), 10),
			strconv.Itoa(r.batchLen), strconv.Itoa(r.records), strconv.Itoa(r.appenders), strconv.Itoa(r.rep),
			strconv.FormatInt(r.appends, 10), strconv.FormatInt(r.bytes, 10), strconv.FormatInt(r.messages, 10),
			g(r.seconds), g(r.mbps()), g(m.mbps(r)), g(m.ratio),
			us(r.lat.P50), us(r.lat.P99), us(r.lat.P999), us(r.lat.Max), us(m.p50), us(m.p99), us(m.p999),
			g(k.mean), g(k.p99), g(k.max), g(r.riskBytes(k.mean)), g(r.riskBytes(k.max)),
			g(m.riskMean), g(m.riskMax), g(k.unsyncedMean), g(k.unsynced), strconv.Itoa(k.samples),
			strconv.FormatInt(r.fsyncs, 10), g(m.fsyncs), g(r.fsyncMeanUs()), g(r.batchesPerFsync()),
			strconv.FormatInt(r.syncedBytes, 10), g(r.fsyncMBps()),
			g(r.drain * 1e3), g(r.load1),
		})
	}
	return out
}

// mbps is the model's throughput for r's bytes, 0 without a model.
func (p prediction) mbps(r result) float64 {
	if !p.ok || p.seconds <= 0 {
		return 0
	}
	return float64(r.bytes) / p.seconds / 1e6
}

func (r result) fsyncMeanUs() float64 {
	if r.fsyncs == 0 {
		return 0
	}
	return r.fsyncSec / float64(r.fsyncs) * 1e6
}

// fsyncMBps is the rate at which the run's fsyncs made bytes durable:
// syncedBytes over the time spent in fsyncs.
func (r result) fsyncMBps() float64 {
	if r.fsyncSec <= 0 {
		return 0
	}
	return float64(r.syncedBytes) / r.fsyncSec / 1e6
}

// batchesPerFsync is how many appends one fsync covered on average.
func (r result) batchesPerFsync() float64 {
	if r.fsyncs == 0 {
		return 0
	}
	return float64(r.appends) / float64(r.fsyncs)
}

// seriesHeader names the columns of risk_timeseries.csv: every sample of
// the first repetition of each policy run.
var seriesHeader = []string{"policy", "batch_bytes", "t_ms", "risk_msgs", "risk_bytes", "unsynced_msgs"}

func (e *experiment) seriesRows() [][]string {
	var out [][]string
	for _, r := range e.results {
		name := r.policy.name()
		if r.raw {
			name += " raw"
		}
		for _, s := range r.series {
			out = append(out, []string{name, strconv.Itoa(r.batchLen), g(float64(s.at) / 1e6),
				strconv.FormatInt(s.acked, 10), g(r.riskBytes(float64(s.acked))), strconv.FormatInt(s.unsynced, 10)})
		}
	}
	return out
}

var (
	g  = harness.G
	us = harness.US
)
