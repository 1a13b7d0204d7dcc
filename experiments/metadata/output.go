package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/varve/varve/experiments/internal/harness"
)

// write writes the CSVs, the plot and summary.md into the results folder.
func (e *experiment) write() error {
	if err := e.writeCreateCSV(); err != nil {
		return err
	}
	if err := e.writePropagateCSV(); err != nil {
		return err
	}
	if err := e.plot(); err != nil {
		return err
	}
	var b strings.Builder
	e.s.WriteHeader(&b, "Metadata operations on three varve server processes", "metadata", nil)
	e.summaryCreate(&b)
	e.summaryPropagate(&b)
	harness.WritePlots(&b, []string{"propagation"})
	return os.WriteFile(filepath.Join(e.s.Out, "summary.md"), []byte(b.String()), 0o644)
}

func ms(d time.Duration) string { return harness.G(float64(d) / 1e6) }

// msText is a duration in ms for the summary's tables.
func msText(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/1e6) }

func (e *experiment) writeCreateCSV() error {
	header := []string{"partitions_per_topic", "mode", "topics", "requests", "elapsed_s", "topics_per_s",
		"partitions_per_s", "request_p50_ms", "request_p99_ms"}
	var rows [][]string
	for _, r := range e.creates {
		rows = append(rows, []string{strconv.Itoa(r.c.partitions), r.c.mode(), strconv.Itoa(r.c.topics),
			strconv.Itoa(len(r.requests)), harness.G(r.elapsed.Seconds()), harness.G(r.topicsPerSec()),
			harness.G(r.partitionsPerSec()), ms(percentile(r.requests, 50)), ms(percentile(r.requests, 99))})
	}
	return harness.WriteCSV(filepath.Join(e.s.Out, "create.csv"), header, rows)
}

func (e *experiment) writePropagateCSV() error {
	header := []string{"partitions", "kind", "probe", "node", "active_controller", "controller_answer_us",
		"from_answer_us", "from_send_us"}
	var rows [][]string
	for _, r := range e.probes {
		rows = append(rows, []string{strconv.Itoa(r.size), r.kind, strconv.Itoa(r.probe), strconv.Itoa(int(r.node)),
			strconv.FormatBool(r.controller), harness.US(r.answer), harness.US(r.fromAnswer), harness.US(r.fromSend)})
	}
	return harness.WriteCSV(filepath.Join(e.s.Out, "propagate.csv"), header, rows)
}

func (e *experiment) summaryCreate(b *strings.Builder) {
	b.WriteString("## Topic creations (replication factor 3, through kadm, a fresh cluster per case)\n\n")
	b.WriteString("| partitions per topic | mode | topics | topics/s | partitions/s | request p50 | request p99 |\n|---|---|---|---|---|---|---|\n")
	for _, r := range e.creates {
		fmt.Fprintf(b, "| %d | %s | %d | %.1f | %.0f | %s ms | %s ms |\n", r.c.partitions, r.c.mode(), r.c.topics,
			r.topicsPerSec(), r.partitionsPerSec(), msText(percentile(r.requests, 50)), msText(percentile(r.requests, 99)))
	}
	b.WriteString("\nSequential: one topic per CreateTopics, each sent after the previous one was answered; batched: 100 topics per CreateTopics. A broker answers once its own image shows the topics.\n\n")
}

// group is the probes of one size, kind and role (the active
// controller's own broker or a follower).
type group struct {
	size       int
	kind       string
	controller bool
}

func (e *experiment) groups() (order []group, by map[group][]probeResult) {
	by = map[group][]probeResult{}
	for _, r := range e.probes {
		g := group{r.size, r.kind, r.controller}
		if _, ok := by[g]; !ok {
			order = append(order, g)
		}
		by[g] = append(by[g], r)
	}
	return order, by
}

func fromAnswer(rs []probeResult) []time.Duration {
	out := make([]time.Duration, len(rs))
	for i, r := range rs {
		out[i] = r.fromAnswer
	}
	return out
}

func (e *experiment) summaryPropagate(b *strings.Builder) {
	b.WriteString("## Metadata propagation (controller's answer to a broker's first answer showing the change)\n\n")
	b.WriteString("| partitions | change | broker | probes | p50 | p99 | max | controller round trip p50 |\n|---|---|---|---|---|---|---|---|\n")
	order, by := e.groups()
	for _, g := range order {
		rs := by[g]
		role := "followers"
		if g.controller {
			role = "active controller's"
		}
		var answers []time.Duration
		for _, r := range rs {
			answers = append(answers, r.answer)
		}
		d := fromAnswer(rs)
		fmt.Fprintf(b, "| %d | %s | %s | %d | %s ms | %s ms | %s ms | %s ms |\n", g.size, g.kind, role, len(rs),
			msText(percentile(d, 50)), msText(percentile(d, 99)), msText(percentile(d, 100)), msText(percentile(answers, 50)))
	}
	b.WriteString("\nNothing is subtracted: a poll's round trip is inside each figure. The active controller's own broker publishes the image before the controller's answer is sent, so its figure can be negative.\n\n")
	for _, c := range e.sizes {
		if c.skip != "" {
			fmt.Fprintf(b, "- %d partitions: skipped, %s.\n", c.size, c.skip)
		}
	}
	b.WriteString("\n")
}
