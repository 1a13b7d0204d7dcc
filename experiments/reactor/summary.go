package main

import (
	"bytes"
	"fmt"
	"os"
	"time"
)

// writeSummary writes summary.md: what ran, where, the medians, ratios and
// anything that did not go as planned.
func writeSummary(path string, cfg config, m machine, rows []row, plots []string, elapsed time.Duration) error {
	var b bytes.Buffer
	med := medians(rows)
	fmt.Fprintf(&b, "# Reactor vs goroutine-per-connection\n\n")
	fmt.Fprintf(&b, "Command: `%s`  \n", commandLine())
	fmt.Fprintf(&b, "Run: %s, %d repetition(s), %v warm-up, %v window per point; took %v.\n\n",
		mode(cfg), cfg.reps, cfg.warmup, cfg.duration, elapsed.Round(time.Second))
	writeEstimate(&b, cfg, len(rows), elapsed)
	writeMachine(&b, m)
	fmt.Fprintf(&b, "Server: Kafka's network defaults (num.network.threads=3, num.io.threads=8, queued.max.requests=500, "+
		"socket.send/receive.buffer.bytes=102400), a handler that answers at once. Server and load generator are separate "+
		"processes on the same machine and share its CPUs; every connection has one request outstanding.\n\n")
	for _, w := range cfg.workloads {
		writeTable(&b, cfg, med, w)
	}
	writeProblems(&b, rows)
	fmt.Fprintf(&b, "## Plots\n\n")
	for _, p := range plots {
		fmt.Fprintf(&b, "![%s](%s.png)\n", p, p)
	}
	fmt.Fprintf(&b, "\nColumns: req/s and MB/s over the window; p50/p99/p99.9 round-trip latency seen by the load generator; "+
		"server CPU in cores (getrusage over the window) and per response; RSS (VmRSS) and Go heap+stacks of the server at "+
		"the end of the window; idle = processors' share of time in epoll_wait (Reactor only).\n")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// writeEstimate extrapolates a full run from this run's per-point overhead
// (process start, connecting, reporting).
func writeEstimate(b *bytes.Buffer, cfg config, points int, elapsed time.Duration) {
	if points == 0 {
		return
	}
	overhead := max(elapsed/time.Duration(points)-cfg.warmup-cfg.duration, 0)
	full, _ := parseFlags(nil)
	n := len(plan(full))
	est := time.Duration(n) * (full.warmup + full.duration + overhead)
	fmt.Fprintf(b, "Per point, starting the processes, connecting and reporting took %v beyond the window; "+
		"a full run (%d points: %d repetitions, %v warm-up + %v window each) would take about %v.\n\n",
		overhead.Round(10*time.Millisecond), n, full.reps, full.warmup, full.duration, est.Round(time.Minute))
}

func mode(cfg config) string {
	if cfg.quick {
		return "-quick"
	}
	return "full"
}

func writeMachine(b *bytes.Buffer, m machine) {
	fmt.Fprintf(b, "Machine: %d CPUs (%s), GOMAXPROCS %d, %s, %s, RLIMIT_NOFILE %d.  \n",
		m.CPUs, m.CPUModel, m.GOMAXPROCS, m.Kernel, m.GoVersion, m.NofileMax)
	fmt.Fprintf(b, "Load average at start: %s; at end: %s. A load above the CPU count means other work "+
		"shared the machine and every figure below is lower (and noisier) than on an idle machine.\n\n", m.LoadStart, m.LoadEnd)
}

// writeTable writes one workload's medians, with the Reactor's ratio to
// the goroutine server.
func writeTable(b *bytes.Buffer, cfg config, med map[cellKey]row, w string) {
	fmt.Fprintf(b, "## Workload %s (100-byte request, %d-byte response)\n\n", w, responseSize(w))
	fmt.Fprintf(b, "| conns | design | connected (client/server) | req/s | MB/s | p50 µs | p99 µs | p99.9 µs | server cores | CPU µs/req | RSS MiB | heap+stacks MiB | goroutines | idle |\n")
	fmt.Fprintf(b, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, n := range cfg.conns {
		for _, d := range cfg.designs {
			r, ok := med[cellKey{w, d, n}]
			if !ok {
				continue
			}
			idle := "-"
			if r.IdleRatio >= 0 {
				idle = fmt.Sprintf("%.2f", r.IdleRatio)
			}
			fmt.Fprintf(b, "| %d | %s | %d/%d | %.0f | %.1f | %.0f | %.0f | %.0f | %.2f | %.1f | %.1f | %.1f | %d | %s |\n",
				n, d, r.Connected, r.ServerConns, r.Throughput, r.MBps, r.P50, r.P99, r.P999, r.ServerCores, r.CPUPerReqUs,
				r.RSSMB, r.HeapStackMB, r.Goroutines, idle)
		}
	}
	fmt.Fprintf(b, "\nReactor / goroutine:\n\n| conns | throughput | p99 | RSS | CPU per request |\n|---:|---:|---:|---:|---:|\n")
	for _, n := range cfg.conns {
		re, ok1 := med[cellKey{w, designReactor, n}]
		gr, ok2 := med[cellKey{w, designGoroutine, n}]
		if !ok1 || !ok2 {
			continue
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s |\n", n, ratio(re.Throughput, gr.Throughput),
			ratio(re.P99, gr.P99), ratio(re.RSSMB, gr.RSSMB), ratio(re.CPUPerReqUs, gr.CPUPerReqUs))
	}
	fmt.Fprintln(b)
}

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// writeProblems lists runs that did not reach their connection count or saw
// errors.
func writeProblems(b *bytes.Buffer, rows []row) {
	var lines []string
	for _, r := range rows {
		if r.Connected < r.conns || r.Errors > 0 {
			lines = append(lines, fmt.Sprintf("- %s: connected %d of %d (%s); %d errors (%s)",
				r.spec, r.Connected, r.conns, r.DialError, r.Errors, r.FirstError))
		}
	}
	if len(lines) == 0 {
		fmt.Fprintf(b, "Every run reached its connection count without errors.\n\n")
		return
	}
	fmt.Fprintf(b, "## Problems\n\n")
	for _, l := range lines {
		fmt.Fprintln(b, l)
	}
	fmt.Fprintln(b)
}
