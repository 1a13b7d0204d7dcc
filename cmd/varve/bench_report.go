package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/varve/varve/benchmarks/kafkabench"
)

// clientBenchReport is what varve bench prints: as JSON with --json,
// otherwise as lines in the manner of Kafka's perf tools.
type clientBenchReport struct {
	Command string                    `json:"command"` // e.g. "varve bench produce"
	Target  string                    `json:"target"`  // "kfake" or "brokers"
	Brokers []string                  `json:"brokers"`
	Flags   map[string]string         `json:"flags"`
	LoadAvg [2]float64                `json:"load_avg_1"` // at start and at end: other work on the machine
	Produce *kafkabench.ProduceResult `json:"produce,omitempty"`
	Consume *kafkabench.ConsumeResult `json:"consume,omitempty"`
	E2E     *kafkabench.E2EResult     `json:"e2e,omitempty"`
	Error   string                    `json:"error,omitempty"`
}

func newClientBenchReport(cmd *cobra.Command, o *clientBenchOptions, name string) *clientBenchReport {
	r := &clientBenchReport{Command: commandLine(cmd), Target: "brokers", Flags: flagValues(cmd)}
	if o.kfake {
		r.Target = "kfake"
	}
	r.LoadAvg[0] = kafkabench.LoadAvg1()
	return r
}

func (r *clientBenchReport) print(w io.Writer, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s against %s %s (load average %.2f -> %.2f)\n", r.Command, r.Target,
		strings.Join(r.Brokers, ","), r.LoadAvg[0], r.LoadAvg[1])
	if p := r.Produce; p != nil {
		fmt.Fprintf(&b, "%d records sent, %s, %s latency%s.\n", p.Records, rates(p.Throughput),
			latencyText(p.Latency), failures(p.Errors))
		serverLine(&b, p.Server, "produced")
	}
	if c := r.Consume; c != nil {
		if c.Fill != nil {
			fmt.Fprintf(&b, "fill: %d records sent first (untimed), %s.\n", c.Fill.Records, rates(c.Fill.Throughput))
		}
		fmt.Fprintf(&b, "%d records consumed (%.2f MB), %s, first record after %.3f s, %d polls waiting %s.\n",
			c.Records, float64(c.Bytes)/kafkabench.MB, rates(c.Throughput), c.FirstRecordSec, c.Polls, latencyText(c.PollLatency))
		serverLine(&b, c.Server, "consumed")
	}
	if e := r.E2E; e != nil {
		fmt.Fprintf(&b, "%d round trips, end to end %s; produce acknowledged %s.\n", e.Records,
			latencyText(e.Latency), latencyText(e.ProduceLatency))
	}
	if r.Error != "" {
		fmt.Fprintf(&b, "error: %s\n", r.Error)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func rates(t kafkabench.Throughput) string {
	return fmt.Sprintf("%.1f records/sec (%.2f MB/sec) over %.3f s, %.0f records per process CPU second",
		t.RecordsPerSec, t.MBPerSec, t.ElapsedSec, t.RecordsPerCPUSec)
}

func latencyText(l kafkabench.Latency) string {
	return fmt.Sprintf("avg %.3f ms, p50 %.3f, p95 %.3f, p99 %.3f, p99.9 %.3f, max %.3f ms",
		l.Avg, l.P50, l.P95, l.P99, l.P999, l.Max)
}

func failures(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d FAILED", n)
}

// serverLine prints the broker's CPU per GB, when --server-metrics was given.
func serverLine(b *strings.Builder, s *kafkabench.ServerReport, verb string) {
	if s == nil {
		return
	}
	fmt.Fprintf(b, "broker: %.3f CPU s, %.3f CPU s per GB %s (bytes from the %s", s.CPUSeconds, s.CPUSecondsPerGB, verb, s.BytesSource)
	if len(s.Missing) > 0 {
		fmt.Fprintf(b, "; not exposed: %s", strings.Join(s.Missing, ", "))
	}
	b.WriteString(")\n")
}
