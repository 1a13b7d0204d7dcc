package main

import (
	"fmt"
	"strings"

	"github.com/varve/varve/experiments/internal/harness"
)

// summary renders summary.md: setup, machine and disk model, one table
// per batch size, the group-commit table, the plots and the method.
func (e *experiment) summary(plots []string) string {
	var b strings.Builder
	cells := e.medians()
	e.writeHeader(&b)
	e.WriteModel(&b)
	for _, size := range e.cfg.batchSizes {
		e.writePolicyTable(&b, cells, size)
	}
	if !e.cfg.noGroup {
		e.writeGroupTable(&b, cells)
	}
	harness.WritePlots(&b, plots)
	b.WriteString(methodNotes)
	return b.String()
}

func (e *experiment) writeHeader(b *strings.Builder) {
	e.WriteHeader(b, "Flush-policy experiment", "flushpolicy", e.load1s())
	fmt.Fprintf(b, "- Each run: a new log (segment.bytes %s), %v or %s appended, whichever comes first; records of about %d bytes\n"+
		"  (flush.messages counts records); data at risk sampled every %v; %d repetition(s), medians shown. Elapsed %s.\n\n",
		sizeName(int(e.cfg.segmentBytes)), e.cfg.duration, sizeName(int(e.cfg.maxBytes)), e.cfg.recordBytes,
		e.cfg.sampleEvery, e.cfg.reps, e.Elapsed())
}

// load1s is the 1-minute load average at the start of each run.
func (e *experiment) load1s() []float64 {
	v := make([]float64, len(e.results))
	for i, r := range e.results {
		v[i] = r.load1
	}
	return v
}

func (e *experiment) writePolicyTable(b *strings.Builder, cells map[runSpec]cell, size int) {
	fmt.Fprintf(b, "## %s batches\n\n", sizeName(size))
	b.WriteString("| policy | MB/s (min-max) | x never | model MB/s | x model | raw peer MB/s | x peer | p50 / p99 / p99.9 µs | model µs | at risk mean / max (msgs) | mean / max bytes | model mean / max (msgs) | peer mean at risk | fsyncs/s | fsync MB/s | drain ms |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	base := cells[runSpec{policy: never, batchBytes: size, appenders: 1}].mbps
	for _, pol := range e.cfg.policies {
		c, ok := cells[runSpec{policy: pol, batchBytes: size, appenders: 1}]
		if !ok {
			continue
		}
		peer, hasPeer := cells[runSpec{policy: pol, batchBytes: size, appenders: 1, raw: true}]
		fmt.Fprintf(b, "| %s | %.1f (%.1f-%.1f) | %s | %s | %s | %s | %s | %.0f / %.0f / %.0f | %s | %s / %s | %s / %s | %s / %s | %s | %.0f | %s | %.1f |\n",
			pol.name(), c.mbps, c.mbpsMin, c.mbpsMax, ratioOf(c.mbps, base), e.num(c.modelMbps, "%.1f"), e.num(c.ratio, "%.2f"),
			peerNum(hasPeer, fmt.Sprintf("%.1f", peer.mbps)), peerNum(hasPeer, ratioOf(c.mbps, peer.mbps)),
			c.p50, c.p99, c.p999, e.lats(c), count(c.riskMean), count(c.riskMax),
			bytesName(c.r.riskBytes(c.riskMean)), bytesName(c.r.riskBytes(c.riskMax)),
			e.num(c.modelRiskMean, "%.0f"), e.num(c.modelRiskMax, "%.0f"),
			peerNum(hasPeer, bytesName(peer.r.riskBytes(peer.riskMean))), c.fsyncsPerSec, fsyncRate(c.fsyncMBps), c.drainMs)
	}
	b.WriteString("\n")
}

func (e *experiment) writeGroupTable(b *strings.Builder, cells map[runSpec]cell) {
	fmt.Fprintf(b, "## Group commit: flush.messages=1, %s batches, concurrent appenders on one log\n\n", sizeName(e.cfg.groupBatch))
	b.WriteString("| appenders | MB/s (min-max) | x 1 appender | ideal model MB/s | x model | batches per fsync (ideal) | p50 / p99 µs |\n|---|---|---|---|---|---|---|\n")
	var base float64
	for _, n := range e.cfg.appenders {
		c, ok := cells[runSpec{policy: policy{messages: 1}, batchBytes: e.cfg.groupBatch, appenders: n, group: true}]
		if !ok {
			continue
		}
		if base == 0 {
			base = c.mbps
		}
		fmt.Fprintf(b, "| %d | %.1f (%.1f-%.1f) | %.2f | %s | %s | %.2f (%d) | %.0f / %.0f |\n",
			n, c.mbps, c.mbpsMin, c.mbpsMax, c.mbps/base, e.num(c.modelMbps, "%.1f"), e.num(c.ratio, "%.2f"),
			c.batchesPerFsync, n, c.p50, c.p99)
	}
	b.WriteString("\n")
}

// num formats a model figure, or n/a without a model.
func (e *experiment) num(v float64, format string) string {
	if e.Model == nil {
		return "n/a"
	}
	return fmt.Sprintf(format, v)
}

func (e *experiment) lats(c cell) string {
	if e.Model == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.0f / %.0f / %.0f", c.mp50, c.mp99, c.mp999)
}

// peerNum is s, or "-" without a peer run.
func peerNum(ok bool, s string) string {
	if !ok {
		return "-"
	}
	return s
}

// fsyncRate formats the rate at which fsyncs wrote, "-" without fsyncs.
func fsyncRate(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", v)
}

// ratioOf is a/b, or n/a when b is not positive.
func ratioOf(a, b float64) string {
	if b <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func count(v float64) string { return fmt.Sprintf("%.0f", v) }

var bytesName = harness.BytesName

const methodNotes = `## Method

- A run opens a new segment.Log (standalone: its own checkpoint files) with one policy, appends one pre-built,
  uncompressed RecordBatch v2 again and again (Log.Append validates its header and CRC and assigns offsets, as for a
  producer's batch) until the run's time or byte budget is spent, then calls Log.Flush, timed as "drain": how long
  the data still at risk takes to become durable. Throughput counts the append phase only: it is what a producer
  that waits for each acknowledgement sees.
- "At risk" is sampled on a ticker: offsets whose Append has returned, at or above Log.RecoveryPoint (what an
  OS crash or power loss could take). Under flush.messages=1 it is zero by construction. unsynced_* in the CSV is
  EndOffset - RecoveryPoint, which also counts an append in progress.
- fsyncs are counted at the log's file seam (benchmarks/storage.SyncTimer): fdatasync of the .log files;
  index msyncs are not counted.
- Models (diskmodel, see doc.go of this experiment): flush.messages=N with m records per batch fsyncs
  every g = ceil(N/m) batches, so throughput is PredictWriteWithFsync(bytes, batch, g); a latency quantile q is
  FsyncLatency(g*batch) when q > 1-1/g and a page-cache write of one batch otherwise; the time-weighted risk is
  derived in doc.go. Without flush.messages, appends never wait for an fsync: PredictPageCacheWrite. flush.ms=T
  fsyncs every P = T*ceil((T+F)/T) (2T for a flush that takes F <= T), so the mean risk is r*(P/2+F) at the
  measured rate r. Ratios are predicted/measured time: 1 = as fast as the model, above 1 = faster.
- Raw peer (peer.go): the same policy without the log, run just before it: pwrite(2) of the same batch at the end
  of a file, fdatasync after every g-th write (flush.messages), or from a goroutine with the log flusher's rule
  (flush.ms), or never. "x peer" is the log's throughput over its peer's; "fsync MB/s" is the bytes the run's
  fsyncs made durable over the time spent in them: what the device absorbed while the appender kept writing.
- Group commit: n goroutines append to one log with flush.messages=1; an fsync covers every batch appended
  before it began, so concurrent appenders share fsyncs. The ideal model is one fsync per n batches.
`
