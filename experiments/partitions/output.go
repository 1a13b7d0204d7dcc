package main

import (
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/varve/varve/experiments/internal/harness"
)

// writeOutputs writes partitions.csv, calibration.json, the plots and
// summary.md into dir.
func (e *experiment) writeOutputs(dir string) error {
	if err := harness.WriteCSV(filepath.Join(dir, "partitions.csv"), csvHeader, e.rows()); err != nil {
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

// csvHeader names the columns of partitions.csv: one row per run.
var csvHeader = []string{
	"date", "policy", "flush_messages", "partitions", "rep", "batch_bytes", "records_per_batch", "index_bytes",
	"batches", "bytes", "open_s", "append_s", "flush_s", "ack_mbps", "durable_mbps",
	"model_s", "model_ack_s", "model_mbps", "ratio_model", "fsyncs", "model_fsyncs", "model_seeks", "fsync_mean_us", "dir_fsyncs", "model_dir_fsyncs", "dir_fsync_mean_us",
	"p50_us", "p99_us", "p999_us", "risk_mean_msgs", "risk_max_msgs", "model_risk_max_msgs", "risk_samples",
	"open_fds", "mappings", "load1",
}

func (e *experiment) rows() [][]string {
	date := e.Started.Format(time.RFC3339)
	out := make([][]string, 0, len(e.results))
	for _, r := range e.results {
		m := r.model
		out = append(out, []string{
			date, r.policy.name(), strconv.FormatInt(r.policy.messages, 10), strconv.Itoa(r.partitions), strconv.Itoa(r.rep),
			strconv.Itoa(r.batchLen), strconv.Itoa(r.records), strconv.Itoa(r.indexBytes),
			strconv.FormatInt(r.batches, 10), strconv.FormatInt(r.bytes, 10), g(r.openSec), g(r.appendSec), g(r.flushSec),
			g(r.ackMBps()), g(r.durableMBps()),
			g(m.seconds), g(m.ackSeconds), g(r.modelMBps()), g(m.ratio), strconv.FormatInt(r.fsyncs, 10),
			strconv.FormatInt(m.fsyncs, 10), strconv.FormatInt(m.seeks, 10), g(r.fsyncMeanUs()),
			strconv.FormatInt(r.dirSyncs, 10), strconv.FormatInt(m.dirSyncs, 10), g(r.dirSyncMeanUs()),
			us(r.lat.P50), us(r.lat.P99), us(r.lat.P999), g(r.risk.mean), g(r.risk.max), g(m.riskMax), strconv.Itoa(r.risk.samples),
			strconv.Itoa(r.fds), strconv.Itoa(r.maps), g(r.load1),
		})
	}
	return out
}

// modelMBps is the model's durable throughput for r's bytes.
func (r result) modelMBps() float64 {
	if r.model.seconds <= 0 {
		return 0
	}
	return float64(r.bytes) / r.model.seconds / 1e6
}

// modelAckMBps is the model's append-phase throughput.
func (r result) modelAckMBps() float64 {
	if r.model.ackSeconds <= 0 {
		return 0
	}
	return float64(r.bytes) / r.model.ackSeconds / 1e6
}

func (r result) fsyncMeanUs() float64 {
	if r.fsyncs == 0 {
		return 0
	}
	return r.fsyncSec / float64(r.fsyncs) * 1e6
}

func (r result) dirSyncMeanUs() float64 {
	if r.dirSyncs == 0 {
		return 0
	}
	return r.dirSyncSec / float64(r.dirSyncs) * 1e6
}

var (
	g  = harness.G
	us = harness.US
)
