package main

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// summary renders summary.md: setup, tables of medians, the targets of
// issue 4 with pass/fail, plots, and for -quick the expected length of a
// full run.
func (e *experiment) summary(plots []string) string {
	var b strings.Builder
	cells := e.medians()
	e.writeHeader(&b)
	e.writeModel(&b)
	for _, w := range e.cfg.workloads {
		e.writeTable(&b, w, cells)
	}
	e.writeTargets(&b, cells)
	e.writeTLS(&b, cells)
	fmt.Fprintf(&b, "\n## Plots\n\n")
	for _, p := range plots {
		fmt.Fprintf(&b, "![%s](%s.png) ([svg](%s.svg))\n\n", p, p, p)
	}
	if e.cfg.quick {
		e.writeEstimate(&b, cells)
	}
	b.WriteString(methodNotes)
	return b.String()
}

func (e *experiment) writeHeader(b *strings.Builder) {
	kind := "full run"
	if e.cfg.quick {
		kind = "quick smoke run (-quick): small sizes, figures are indicative only"
	}
	m := e.machine
	fmt.Fprintf(b, "# Read-path experiment, %s\n\n", e.started.Format("2006-01-02"))
	fmt.Fprintf(b, "%s. Command: `go run ./experiments/readpath %s`\n\n", kind, strings.Join(os.Args[1:], " "))
	fmt.Fprintf(b, "- Machine: %s, %d CPUs, %s RAM, %s, %s", m.CPUModel, m.CPUs, m.MemTotal, m.Kernel, m.GoVersion)
	if e.model != nil {
		fmt.Fprintf(b, ", file system %s", e.model.FSType)
	}
	fmt.Fprintf(b, ".\n- Load average (1/5/15 min) at start %s, at end %s. The machine was shared with other work\n"+
		"  during the run, so every figure is measured under contention.\n", m.LoadStart, m.LoadEnd)
	fmt.Fprintf(b, "- Log: %s in segments of %s (written and fsynced in %.1f s). Tail reads: the newest %s, read %d times\n"+
		"  by the consumers together. Catch-up reads: the whole log, evicted (fdatasync + fadvise DONTNEED) before each run.\n",
		size(e.cfg.catchupBytes), size(e.cfg.segmentBytes), e.writeSec, size(e.cfg.tailBytes), e.cfg.tailPasses)
	fmt.Fprintf(b, "- Fetch responses of at most %s, one in flight per consumer; block cache bound %s (64 KiB blocks);\n"+
		"  %d repetition(s), medians shown; consumers in %s.\n- Elapsed: %s.\n\n",
		size(e.cfg.fetchBytes), size(e.cfg.cacheBytes), e.cfg.reps, e.consumerPlace(), e.ended.Sub(e.started).Round(time.Second))
}

func (e *experiment) consumerPlace() string {
	if e.cfg.inproc {
		return "this process (CPU per GB includes them)"
	}
	return "a separate process (CPU per GB counts only the sending side)"
}

func (e *experiment) writeModel(b *strings.Builder) {
	if e.model == nil {
		b.WriteString("Disk model: skipped (-no-model).\n\n")
		return
	}
	c := e.model
	fmt.Fprintf(b, "## Disk model (diskmodel, taken %s, quick=%v)\n\n", c.Taken.Format(time.RFC3339), c.Quick)
	fmt.Fprintf(b, "| sequential read | cold buffered read | page-cache read | random 4 KiB read | read method | resident after DONTNEED |\n|---|---|---|---|---|---|\n")
	fmt.Fprintf(b, "| %.2f GB/s | %.2f GB/s | %.2f GB/s | %s | %s | %.3f |\n\n",
		c.SeqReadBps/1e9, c.ColdBufferedReadBps/1e9, c.PageCacheReadBps/1e9, c.RandRead4K, c.ReadMethod, c.ColdResident)
}

func (e *experiment) writeTable(b *strings.Builder, w string, cells map[runSpec]cell) {
	fmt.Fprintf(b, "## %s reads\n\n", strings.ToUpper(w[:1])+w[1:])
	if w == workloadTail {
		b.WriteString("| consumers | path | GB/s (min-max) | CPU s/GB | x best raw | resident before | x page-cache model |\n|---|---|---|---|---|---|---|\n")
	} else {
		b.WriteString("| consumers | path | GB/s (min-max) | CPU s/GB | x best raw | resident before -> after | x seq model | x cold-buffered model | x seek model |\n|---|---|---|---|---|---|---|---|---|\n")
	}
	for _, n := range e.cfg.consumers {
		raw := e.bestRaw(cells, w, n)
		for _, p := range e.cfg.paths {
			c := cells[runSpec{workload: w, path: p, consumers: n}]
			fmt.Fprintf(b, "| %d | %s | %.2f (%.2f-%.2f) | %.3f | %s | ", n, p, c.gbps, c.gbpsMin, c.gbpsMax, c.cpuPerGB, ratio(c.gbps, raw))
			if w == workloadTail {
				fmt.Fprintf(b, "%.2f | %s |\n", c.resBefore, e.modelCell(c.ratioPageCache))
			} else {
				fmt.Fprintf(b, "%.2f -> %.2f | %s | %s | %s |\n", c.resBefore, c.resAfter,
					e.modelCell(c.ratioSeq), e.modelCell(c.ratioCold), e.modelCell(c.ratioSeeks))
			}
		}
	}
	b.WriteString("\n")
}

// bestRaw is the limit a path is held to: the faster of the two raw
// sendfile loops measured in the same run for the same workload and
// consumer count. On loopback the push loop is not always the faster: a
// fetch lets the receiver take a whole response per wake-up.
func (e *experiment) bestRaw(cells map[runSpec]cell, w string, n int) float64 {
	raw := cells[runSpec{workload: w, path: pathRaw, consumers: n}].gbps
	return max(raw, cells[runSpec{workload: w, path: pathRawFetch, consumers: n}].gbps)
}

// writeTargets checks the two targets of issue 4 for every measured cell.
func (e *experiment) writeTargets(b *strings.Builder, cells map[runSpec]cell) {
	b.WriteString("## Targets (issue 4)\n\n")
	b.WriteString("Medians over the repetitions. Where the min-max ranges in the tables overlap, a PASS or FAIL is\n" +
		"within this run's noise: sendfile and raw-fetch make the same syscalls.\n\n")
	for _, w := range e.cfg.workloads {
		for _, n := range e.cfg.consumers {
			get := func(p string) cell { return cells[runSpec{workload: w, path: p, consumers: n}] }
			sf, raw, rf := get(pathSendfile), get(pathRaw), get(pathRawFetch)
			if best := e.bestRaw(cells, w, n); sf.n > 0 && best > 0 {
				fmt.Fprintf(b, "- %s, %d consumer(s): sendfile %.2f GB/s = %s of the faster raw sendfile loop (target >= 0.90): **%s** "+
					"(raw push %.2f GB/s, raw under the fetch protocol %.2f GB/s).\n",
					w, n, sf.gbps, ratio(sf.gbps, best), passFail(sf.gbps >= 0.9*best), raw.gbps, rf.gbps)
			}
			rw := get(pathReadWrite)
			if w == workloadTail && sf.n > 0 && rw.n > 0 {
				fmt.Fprintf(b, "- tail, %d consumer(s): sendfile %.3f CPU s/GB = %s of read+write's %.3f (target <= 0.50): **%s**.\n",
					n, sf.cpuPerGB, ratio(sf.cpuPerGB, rw.cpuPerGB), rw.cpuPerGB, passFail(sf.cpuPerGB <= 0.5*rw.cpuPerGB))
			}
		}
	}
}

// writeTLS compares the ssl path with the plaintext ones in the same run:
// what a broker's SSL listener costs against its PLAINTEXT listener
// (sendfile), and against the copying path (readwrite), which isolates
// the encryption from the lost zero-copy. It also records the kTLS
// probe.
func (e *experiment) writeTLS(b *strings.Builder, cells map[runSpec]cell) {
	b.WriteString("\n## SSL against PLAINTEXT\n\n")
	if !contains(e.cfg.paths, pathSSL) {
		b.WriteString("The ssl path was not run (-paths).\n\n")
	} else {
		suite := e.tls.suiteName()
		fmt.Fprintf(b, "ssl: crypto/tls (TLS 1.3, %s), Region's copying path writing into the TLS connection; handshakes before the clock.\n"+
			"Ratios are ssl over the plaintext path, medians of this run.\n\n", suite)
		b.WriteString("| workload | consumers | ssl GB/s | sendfile GB/s | ssl/sendfile GB/s | ssl/sendfile CPU per GB | readwrite GB/s | ssl/readwrite GB/s | ssl/readwrite CPU per GB |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, w := range e.cfg.workloads {
			for _, n := range e.cfg.consumers {
				get := func(p string) cell { return cells[runSpec{workload: w, path: p, consumers: n}] }
				ssl, sf, rw := get(pathSSL), get(pathSendfile), get(pathReadWrite)
				fmt.Fprintf(b, "| %s | %d | %.2f | %.2f | %s | %s | %.2f | %s | %s |\n", w, n, ssl.gbps, sf.gbps, ratio(ssl.gbps, sf.gbps),
					ratio(ssl.cpuPerGB, sf.cpuPerGB), rw.gbps, ratio(ssl.gbps, rw.gbps), ratio(ssl.cpuPerGB, rw.cpuPerGB))
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "Kernel TLS (kTLS), which would keep sendfile after a user-space handshake: %s. ", e.ktls)
	if e.ktls.ok() {
		b.WriteString("The kernel offers it; this experiment has no kTLS path yet.\n")
	} else {
		b.WriteString("This kernel does not offer the tls ULP, so there is no kTLS path to measure here.\n")
	}
}

// writeEstimate projects the full run's length from the quick run's
// throughputs: full sizes divided by the measured medians, plus writing the
// log at the calibrated sequential write rate.
func (e *experiment) writeEstimate(b *strings.Builder, cells map[runSpec]cell) {
	f := fullSizes
	full := config{catchupBytes: f.catchup, tailBytes: f.tail, tailPasses: f.tailPasses}
	var secs float64
	for k, c := range cells {
		if c.gbps > 0 {
			secs += float64(f.reps) * float64(workloadBytes(full, k.workload)) / (c.gbps * 1e9)
		}
	}
	write := "unknown"
	if e.model != nil && e.model.SeqWriteBps > 0 {
		w := float64(full.catchupBytes) / e.model.SeqWriteBps
		secs += w
		write = fmt.Sprintf("%.0f s", w)
	}
	fmt.Fprintf(b, "## Expected length of a full run\n\n"+
		"With the default sizes (%s log in %s segments, %s tail read %d times, %d repetitions) and this run's\n"+
		"throughputs, the runs take about %.0f s (writing the log: %s), plus a full disk calibration (up to ~30 s)\n"+
		"and the untimed evictions and warm-ups: about %.0f minutes in all. Catch-up throughput measured on a %s log\n"+
		"may not hold for %s, so treat this as an order of magnitude.\n\n",
		size(f.catchup), size(f.segment), size(f.tail), f.tailPasses, f.reps,
		secs, write, (secs+60)/60, size(e.cfg.catchupBytes), size(f.catchup))
}

// modelCell formats a model ratio, or "n/a" without a model.
func (e *experiment) modelCell(v float64) string {
	if e.model == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", v)
}

func ratio(a, b float64) string {
	if b <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func passFail(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

func size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

const methodNotes = `## Method

- Paths: **raw** pushes each consumer's whole stream with sendfile(2) called directly on the two descriptors
  (no protocol, no pagecache code); **raw-fetch** is the same raw loop answering fetch requests. "best raw",
  the limit the targets use, is the faster of the two in the same run and cell: on a loaded 2-CPU loopback the
  push loop is often slower, because its receiver wakes for small pieces while a fetch's receiver finds a
  whole response queued; **sendfile** is pagecache.Region.WriteTo (Varve's path); **readwrite** is Region's copying
  path (pread into a 128 KiB pooled buffer, write); **mmap** writes slices of pagecache.MmapReader's mapping;
  **blockcache** reads through pagecache.BlockCache (ristretto, 64 KiB blocks), warmed with the tail for tail
  reads (as a write-through user-space cache would be) and cold for catch-up reads; **ssl** is Region.WriteTo
  on a crypto/tls connection (TLS 1.3, the handshake before the clock), where Region cannot sendfile and copies
  through a pooled buffer into the TLS writer, as the broker's SSL listeners do (Kafka's SslTransportLayer too).
- Each consumer reads one contiguous, page-aligned slice of the range (one partition each), one fetch in
  flight, over loopback TCP. Consumers hash what they receive (xxhash) and the run fails on any mismatch.
- Time runs from the "go" byte to the last consumer's "done"; CPU is getrusage(RUSAGE_SELF) user+system of
  the sending process over the same interval. On loopback the kernel often runs the receiving side's TCP
  processing in the sender's context, so part of the receive cost lands in this figure for every path.
- Model ratios are predicted/measured time (diskmodel.Ratio): 1 = as fast as the model, above 1 = faster.
  The seek model counts one seek per segment for one consumer and one per fetch for several.
- CSV: readpath.csv has one row per run and repetition; calibration.json is the disk model used.
`
