package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/varve/varve/chaos"
	"github.com/varve/varve/experiments/internal/harness"
)

// unavailableOver is the shortest window of unavailability reported.
const unavailableOver = 200 * time.Millisecond

// write writes the run's results; on an anomaly or a stuck cluster it
// keeps the nodes' logs beside them.
func (s *soak) write(tmp string) error {
	out := s.session.Out
	windows := chaos.Unavailability(s.history, unavailableOver)
	if err := writeEvents(filepath.Join(out, "events.csv"), s.history); err != nil {
		return err
	}
	if err := writeWindows(filepath.Join(out, "unavailability.csv"), windows); err != nil {
		return err
	}
	if err := writeThroughput(filepath.Join(out, "throughput.csv"), s.history); err != nil {
		return err
	}
	if err := plotSoak(out, s.history); err != nil {
		return err
	}
	if !s.report.OK() || s.stuck != nil {
		for _, n := range s.cluster.Local.Nodes() {
			if b, err := n.Log(); err == nil {
				os.WriteFile(filepath.Join(out, n.Name()+".log"), b, 0o644)
			}
		}
	}
	return os.WriteFile(filepath.Join(out, "summary.md"), []byte(s.summary(windows)), 0o644)
}

func (s *soak) summary(windows []chaos.Window) string {
	var b strings.Builder
	s.session.WriteHeader(&b, "Faults soak: three nodes, acks=all, min.insync.replicas=2", "faults", nil)
	fmt.Fprintf(&b, "\nSeed %d (replay: `go run ./experiments/faults --duration %v --seed %d`); faults applied for %v, %d events.\n",
		s.cfg.Seed, s.cfg.Duration, s.cfg.Seed, s.cfg.Duration, len(s.history.Events()))
	fmt.Fprintf(&b, "Timeouts: %s.\n", timeouts())
	b.WriteString("\n## History\n\n" + historyLine(s.history) + "\n")
	b.WriteString("\n## Verdict\n\n")
	if s.stuck != nil {
		fmt.Fprintf(&b, "**The cluster did not recover**: %v\n\n", s.stuck)
	}
	b.WriteString("```\n" + s.report.String() + "\n```\n")
	fmt.Fprintf(&b, "\n## Unavailability (windows over %v with appends waiting and none acknowledged)\n\n", unavailableOver)
	var total time.Duration
	for _, w := range windows {
		total += w.To - w.From
		b.WriteString("- " + w.String() + "\n")
	}
	fmt.Fprintf(&b, "\n%d windows, %v in all, of a %v history.\n", len(windows), total.Round(time.Millisecond),
		s.session.Ended.Sub(s.session.Started).Round(time.Second))
	b.WriteString("\n")
	harness.WritePlots(&b, []string{"soak"})
	b.WriteString("\n## Events\n\n```\n")
	for _, e := range s.history.Events() {
		fmt.Fprintf(&b, "%10v  %s\n", e.At.Round(time.Millisecond), e.What)
	}
	b.WriteString("```\n")
	return b.String()
}

func timeouts() string {
	var kv []string
	for k, v := range chaos.ShortTimeouts() {
		kv = append(kv, k+"="+v)
	}
	slices.Sort(kv)
	return strings.Join(kv, ", ")
}

// historyLine counts what the appends and polls did.
func historyLine(h *chaos.History) string {
	inFinal := map[string]bool{}
	final := 0
	for _, recs := range h.Final {
		final += len(recs)
		for _, r := range recs {
			inFinal[r.Value] = true
		}
	}
	outcomes, unknownWritten := map[chaos.Outcome]int{}, 0
	for _, a := range h.Appends() {
		outcomes[a.Outcome]++
		if a.Outcome == chaos.Unknown && inFinal[a.Value] {
			unknownWritten++
		}
	}
	read := 0
	for _, p := range h.Polls() {
		read += len(p.Records)
	}
	return fmt.Sprintf("Appends: %d acknowledged, %d unknown (%d of them written), %d refused, %d pending. "+
		"Consumers read %d records in %d polls; the final read holds %d records.",
		outcomes[chaos.OK], outcomes[chaos.Unknown], unknownWritten, outcomes[chaos.Failed], outcomes[chaos.Pending],
		read, len(h.Polls()), final)
}

func writeEvents(path string, h *chaos.History) error {
	var rows [][]string
	for _, e := range h.Events() {
		rows = append(rows, []string{ms(e.At), e.What})
	}
	return harness.WriteCSV(path, []string{"at_ms", "event"}, rows)
}

func writeWindows(path string, ws []chaos.Window) error {
	var rows [][]string
	for _, w := range ws {
		var ev []string
		for _, e := range w.Events {
			ev = append(ev, e.What)
		}
		rows = append(rows, []string{ms(w.From), ms(w.To), ms(w.To - w.From), strconv.Itoa(w.Waiting), strings.Join(ev, "; ")})
	}
	return harness.WriteCSV(path, []string{"from_ms", "to_ms", "duration_ms", "appends_waiting", "events"}, rows)
}

// writeThroughput writes, per second of the history, the appends
// acknowledged in it and their median and p99 latency (invoke to
// acknowledgement).
func writeThroughput(path string, h *chaos.History) error {
	bySecond := map[int][]time.Duration{}
	last := 0
	for _, a := range h.Appends() {
		if a.Outcome == chaos.OK {
			sec := int(a.Complete / time.Second)
			bySecond[sec] = append(bySecond[sec], a.Complete-a.Invoke)
			last = max(last, sec)
		}
	}
	var rows [][]string
	for sec := 0; sec <= last; sec++ {
		lat := bySecond[sec]
		slices.Sort(lat)
		p50, p99 := "", ""
		if len(lat) > 0 {
			p50, p99 = ms(lat[len(lat)/2]), ms(lat[min(len(lat)-1, len(lat)*99/100)])
		}
		rows = append(rows, []string{strconv.Itoa(sec), strconv.Itoa(len(lat)), p50, p99})
	}
	return harness.WriteCSV(path, []string{"second", "acknowledged", "p50_ms", "p99_ms"}, rows)
}

func ms(d time.Duration) string { return harness.G(float64(d) / float64(time.Millisecond)) }
