package main

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/varve/varve/experiments/internal/harness"
)

// metric is one figure a trial yields, as the summary and plot show it.
type metric struct {
	scenario, name, label string
	get                   func(trial) time.Duration
}

// metrics are the figures reported per scenario, in table order.
var metrics = []metric{
	{scnKill, "first-ack", "SIGKILL leader → first ack by a new leader", func(t trial) time.Duration { return t.Ack }},
	{scnKill, "leader-moved", "SIGKILL leader → new leader in Metadata", func(t trial) time.Duration { return t.Moved }},
	{scnKill, "first-read", "SIGKILL leader → first consumer read of a new leader's record", readOf},
	{scnTerm, "leader-moved", "SIGTERM leader → new leader in Metadata", func(t trial) time.Duration { return t.Moved }},
	{scnTerm, "first-ack", "SIGTERM leader → first ack by a new leader", func(t trial) time.Duration { return t.Ack }},
	{scnTerm, "first-read", "SIGTERM leader → first consumer read of a new leader's record", readOf},
	{scnTerm, "exit", "SIGTERM leader → process exited", func(t trial) time.Duration { return t.Exit }},
	{scnController, "new-controller", "SIGKILL controller → new leader in DescribeQuorum", func(t trial) time.Duration { return t.Moved }},
}

// readOf is a trial's first consumer read past the fault, -1 when it
// has none (or was measured before the consumer was).
func readOf(t trial) time.Duration {
	if t.Read <= 0 {
		return -1
	}
	return t.Read
}

// values are m's figures in milliseconds over the trials of system
// that have one.
func (m metric) values(o outcome) []float64 {
	var v []float64
	for _, t := range o.trials {
		if t.Scenario == m.scenario && t.Err == "" {
			if x := ms(m.get(t)); !math.IsNaN(x) {
				v = append(v, x)
			}
		}
	}
	return v
}

func writeResults(s *harness.Session, cfg config, outs []outcome) error {
	if err := writeTrials(resultsDir(s, "trials.csv"), outs); err != nil {
		return err
	}
	if err := writeSummaryCSV(resultsDir(s, "summary.csv"), outs); err != nil {
		return err
	}
	if err := plotTrials(s.Out, "failover", outs); err != nil {
		return err
	}
	return os.WriteFile(resultsDir(s, "summary.md"), []byte(summary(s, cfg, outs)), 0o644)
}

func writeTrials(path string, outs []outcome) error {
	header := []string{"system", "scenario", "trial", "victim", "victim_also", "old_epoch",
		"leader_moved_ms", "first_ack_ms", "first_read_ms", "exit_ms", "error"}
	var rows [][]string
	for _, o := range outs {
		for _, t := range o.trials {
			rows = append(rows, []string{t.System, t.Scenario, strconv.Itoa(t.N), strconv.Itoa(int(t.Victim)),
				strconv.FormatBool(t.Also), strconv.Itoa(int(t.OldEpoch)),
				csvMs(t.Moved), csvMs(t.Ack), csvMs(t.Read), csvMs(t.Exit), t.Err})
		}
	}
	return harness.WriteCSV(path, header, rows)
}

func csvMs(d time.Duration) string {
	if d < 0 || d == 0 {
		return ""
	}
	return harness.G(ms(d))
}

func writeSummaryCSV(path string, outs []outcome) error {
	header := []string{"system", "scenario", "metric", "trials", "p50_ms", "p99_ms", "min_ms", "max_ms"}
	var rows [][]string
	for _, m := range metrics {
		for _, o := range outs {
			v := m.values(o)
			if len(v) == 0 {
				continue
			}
			rows = append(rows, []string{o.system, m.scenario, m.name, strconv.Itoa(len(v)),
				harness.G(harness.Quantile(v, 0.5)), harness.G(harness.Quantile(v, 0.99)),
				harness.G(harness.Quantile(v, 0)), harness.G(harness.Quantile(v, 1))})
		}
	}
	return harness.WriteCSV(path, header, rows)
}

// summary is summary.md: the profile, the p50/p99 table side by side,
// each system's verdict and the plot.
func summary(s *harness.Session, cfg config, outs []outcome) string {
	var b strings.Builder
	s.WriteHeader(&b, "Failover: Varve beside Apache Kafka", "failover", nil)
	b.WriteString("\n## Profile (both systems)\n\n")
	for _, k := range sortedKeys(cfg.profile.props()) {
		fmt.Fprintf(&b, "- `%s=%s`\n", k, cfg.profile.props()[k])
	}
	fmt.Fprintf(&b, "- topic `%s`: 1 partition, replication factor 3, `min.insync.replicas=2`\n", topic)
	b.WriteString("- client: franz-go, acks=all, idempotent, one record in flight, linger 0, metadata refresh at most every 100 ms, retry backoff 100 ms doubling to 1 s; one consumer assigned the partition from its end (no group), the same client settings, fetches waiting at most 100 ms\n")
	fmt.Fprintf(&b, "- %d trials per scenario; %v settle with a full ISR before each\n\n", cfg.trials, cfg.settle)
	for _, o := range outs {
		fmt.Fprintf(&b, "- **%s**: %s\n", o.system, o.settings)
	}
	b.WriteString("\n## Figures (ms; p99 is nearest-rank: with 20 trials, the largest)\n\n| figure |")
	for _, o := range outs {
		fmt.Fprintf(&b, " %s p50 | %s p99 |", o.system, o.system)
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|---:|", len(outs)) + "\n")
	for _, m := range metrics {
		fmt.Fprintf(&b, "| %s |", m.label)
		for _, o := range outs {
			v := m.values(o)
			fmt.Fprintf(&b, " %s | %s |", cell(harness.Quantile(v, 0.5)), cell(harness.Quantile(v, 0.99)))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## Acknowledged records read back\n\n")
	for _, o := range outs {
		writeVerdict(&b, o)
	}
	b.WriteString("\n")
	harness.WritePlots(&b, []string{"failover"})
	return b.String()
}

func writeVerdict(b *strings.Builder, o outcome) {
	v := o.verdict
	fmt.Fprintf(b, "- **%s**: %d acknowledged, %d distinct values read, %d missing, %d duplicated, %d at another offset than acknowledged; %d produces failed",
		o.system, v.acked, v.stored, v.missing, v.duplicated, v.moved, o.failed)
	if o.err != nil {
		fmt.Fprintf(b, "; run ended early: %v", o.err)
	}
	b.WriteString("\n")
}

func cell(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.0f", v)
}
