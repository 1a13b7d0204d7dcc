package harness

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// WriteHeader writes a summary's title, the command that produced it, the
// machine and the load average at both ends of the run; load1 is the
// 1-minute load at the start of each run, for the range it gives.
func (s *Session) WriteHeader(b *strings.Builder, title, name string, load1 []float64) {
	kind := "Full run"
	if s.Quick {
		kind = "Quick smoke run (-quick): small sizes, figures are indicative only"
	}
	m := s.Machine
	fmt.Fprintf(b, "# %s, %s\n\n", title, s.Started.UTC().Format(time.DateOnly))
	fmt.Fprintf(b, "%s. Command: `go run ./experiments/%s %s`\n\n", kind, name, strings.Join(os.Args[1:], " "))
	fmt.Fprintf(b, "- Machine: %s, %d CPUs, %s RAM, %s, %s", m.CPUModel, m.CPUs, m.MemTotal, m.Kernel, m.GoVersion)
	if s.Model != nil {
		fmt.Fprintf(b, ", file system %s", s.Model.FSType)
	}
	fmt.Fprintf(b, ".\n- Load average (1/5/15 min) at start %s, at end %s", m.LoadStart, m.LoadEnd)
	if len(load1) > 0 {
		fmt.Fprintf(b, "; 1-minute load at the start of each run %.2f to %.2f", minFloat(load1), maxFloat(load1))
	}
	b.WriteString(".\n  The machine was shared with other work, so every figure is measured under contention.\n")
}

// WriteModel writes the disk model's write-side figures as a table.
func (s *Session) WriteModel(b *strings.Builder) {
	c := s.Model
	if c == nil {
		b.WriteString("Disk model: skipped (-no-model).\n\n")
		return
	}
	fmt.Fprintf(b, "## Disk model (diskmodel, taken %s, quick=%v, load average %.2f)\n\n",
		c.Taken.Format(time.RFC3339), c.Quick, c.LoadAvg1)
	b.WriteString("| sequential write | page-cache write | write+fdatasync 4 KiB (p99) | write+fdatasync 1 MiB (p99) |\n|---|---|---|---|\n")
	fmt.Fprintf(b, "| %.0f MB/s | %.0f MB/s | %.0f µs (%.0f µs) | %.0f µs (%.0f µs) |\n\n",
		c.SeqWriteBps/1e6, c.PageCacheWriteBps/1e6, micros(c.Fsync4K), micros(c.Fsync4KP99), micros(c.Fsync1M), micros(c.Fsync1MP99))
}

// WritePlots links each plot's PNG and SVG under a "Plots" heading.
func WritePlots(b *strings.Builder, plots []string) {
	b.WriteString("## Plots\n\n")
	for _, p := range plots {
		fmt.Fprintf(b, "![%s](%s.png) ([svg](%s.svg))\n\n", p, p, p)
	}
}

func micros(d time.Duration) float64 { return float64(d) / 1e3 }

func minFloat(v []float64) float64 {
	m := v[0]
	for _, x := range v[1:] {
		m = min(m, x)
	}
	return m
}

func maxFloat(v []float64) float64 {
	m := v[0]
	for _, x := range v[1:] {
		m = max(m, x)
	}
	return m
}
