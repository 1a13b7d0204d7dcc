package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/varve/varve/experiments/internal/harness"
)

// summary renders summary.md: setup, machine and disk model, one table
// per policy with where its curve bends, the plots and the method.
func (e *experiment) summary(plots []string) string {
	var b strings.Builder
	cells := e.medians()
	e.writeHeader(&b)
	e.writeModel(&b)
	for _, pol := range e.cfg.policies {
		e.writeTable(&b, cells, pol)
	}
	harness.WritePlots(&b, plots)
	b.WriteString(methodNotes)
	return b.String()
}

func (e *experiment) writeHeader(b *strings.Builder) {
	e.WriteHeader(b, "Partitions experiment", "partitions", e.load1s())
	fmt.Fprintf(b, "- Each run appends %s in %s batches of records of about %d bytes, round-robin over the partitions (one\n"+
		"  segment.Log each, segment.bytes %s, segment.index.bytes %s), then flushes every log. %d repetition(s), medians shown.\n"+
		"  Elapsed %s.\n\n", sizeName(e.cfg.totalBytes), sizeName(int64(e.cfg.batchBytes)), e.cfg.recordBytes,
		sizeName(e.cfg.segmentBytes), e.indexBytesText(), e.cfg.reps, e.Elapsed())
}

func (e *experiment) indexBytesText() string {
	if e.cfg.indexBytes > 0 {
		return sizeName(int64(e.cfg.indexBytes))
	}
	return fmt.Sprintf("sized per run from %s (1 partition) to %s (%d partitions) instead of Kafka's 10 MiB",
		sizeName(int64(indexBytesFor(e.cfg.totalBytes, e.cfg.partitions[0], e.cfg.batchBytes))),
		sizeName(int64(indexBytesFor(e.cfg.totalBytes, e.cfg.partitions[len(e.cfg.partitions)-1], e.cfg.batchBytes))),
		e.cfg.partitions[len(e.cfg.partitions)-1])
}

// load1s is the 1-minute load average at the start of each run.
func (e *experiment) load1s() []float64 {
	v := make([]float64, len(e.results))
	for i, r := range e.results {
		v[i] = r.load1
	}
	return v
}

func (e *experiment) writeModel(b *strings.Builder) {
	if e.Model == nil {
		b.WriteString("Disk model: skipped (-no-model).\n\n")
		return
	}
	c := e.Model
	fmt.Fprintf(b, "## Disk model (diskmodel, taken %s, quick=%v, load average %.2f)\n\n",
		c.Taken.Format(time.RFC3339), c.Quick, c.LoadAvg1)
	b.WriteString("| sequential write | page-cache write | write+fdatasync 4 KiB | write+fdatasync 1 MiB | random 4 KiB read (the seek) |\n|---|---|---|---|---|\n")
	fmt.Fprintf(b, "| %.0f MB/s | %.0f MB/s | %.0f µs | %.0f µs | %.0f µs |\n\n",
		c.SeqWriteBps/1e6, c.PageCacheWriteBps/1e6, micros(c.Fsync4K), micros(c.Fsync1M), micros(c.RandRead4K))
}

func (e *experiment) writeTable(b *strings.Builder, cells map[runSpec]cell, pol policy) {
	fmt.Fprintf(b, "## Policy %s\n\n", pol.name())
	b.WriteString("| partitions | durable MB/s (min-max) | model MB/s | x model | append MB/s (model) | append s | flush s | fsyncs (model) | µs per fsync | append p99 µs | max at risk (model) | fds | mappings |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, n := range e.cfg.partitions {
		c, ok := cells[runSpec{policy: pol, partitions: n}]
		if !ok {
			continue
		}
		fmt.Fprintf(b, "| %d | %.0f (%.0f-%.0f) | %s | %s | %.0f (%s) | %.3f | %.3f | %.0f (%s) | %.0f | %.0f | %s (%s) | %d | %d |\n",
			n, c.durable, c.durMin, c.durMax, e.num(c.modelDurable, "%.0f"), e.num(c.ratio, "%.2f"),
			c.ack, e.num(c.modelAck, "%.0f"), c.appendSec, c.flushSec, c.fsyncs, e.num(c.modelFsync, "%.0f"),
			c.fsyncUs, c.p99, bytesName(c.r.riskBytes(c.riskMax)), e.bytesOrNA(c.r.riskBytes(c.modelRiskMax)), c.r.fds, c.r.maps)
	}
	b.WriteString("\n")
	e.writeBend(b, cells, pol)
}

// writeBend states where the durable-throughput curve bends, measured and
// modelled (bend: below 80% of the best at fewer partitions).
func (e *experiment) writeBend(b *strings.Builder, cells map[runSpec]cell, pol policy) {
	at := func(get func(cell) float64) func(int) float64 {
		return func(n int) float64 { return get(cells[runSpec{policy: pol, partitions: n}]) }
	}
	say := func(n int) string {
		if n == 0 {
			return "does not bend (never below 80% of its best)"
		}
		return fmt.Sprintf("bends at %d partitions (first count below 80%% of the best at fewer)", n)
	}
	fmt.Fprintf(b, "Durable throughput, measured: %s.", say(bend(e.cfg.partitions, at(func(c cell) float64 { return c.durable }))))
	if e.Model != nil {
		fmt.Fprintf(b, " Model: %s.", say(bend(e.cfg.partitions, at(func(c cell) float64 { return c.modelDurable }))))
	}
	b.WriteString("\n\n")
}

// num formats a model figure, or n/a without a model.
func (e *experiment) num(v float64, format string) string {
	if e.Model == nil {
		return "n/a"
	}
	return fmt.Sprintf(format, v)
}

func (e *experiment) bytesOrNA(v float64) string {
	if e.Model == nil {
		return "n/a"
	}
	return bytesName(v)
}

func micros(d time.Duration) float64 { return float64(d) / 1e3 }

func sizeName(n int64) string { return harness.SizeName(n) }

var bytesName = harness.BytesName

const methodNotes = `## Method

- A run opens one segment.Log per partition (directories partitions-0, partitions-1, ...), under a log manager's
  view (Config.Managed: the per-log checkpoint files are a manager's, as in Kafka, which keeps one per log dir),
  then one goroutine appends the same total bytes, one pre-built RecordBatch v2 at a time, to partition i mod P.
  Opening the logs is not timed. After the last append every log is flushed (Log.Flush, one after another, as
  Kafka's flusher and shutdown do); "durable" throughput counts the appends and that flush, "append" throughput
  the appends alone.
- flush.messages is per partition, as in Kafka: with P partitions each log sees 1/P of the messages, so a
  threshold that fires every few batches on one partition may not fire at all on a thousand.
- Model: every fsync costs diskmodel's FsyncLatency of the bytes it makes durable, and one that goes to another
  file than the previous one also pays RandRead4K, the calibrated cost of a random device access, as the seek.
  The policy fixes the fsyncs: per partition, floor(n/g) in the run and one for the rest at the final flush (g =
  ceil(flush.messages / records per batch); never: one of everything). A new log's first flush also fsyncs its
  directory, costed Fsync4K, one per partition. The model knows no CPU cost per append or
  per partition. Ratios are predicted/measured time: 1 = as fast as the model.
- "Bends" marks the first partition count whose throughput falls below 80% of the best at fewer partitions.
- fds and mappings are /proc/self/fd entries and /proc/self/maps lines with every log of the run open.
`
