package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

func (r *report) write(dir string, o options) error {
	if err := r.writeCSV(filepath.Join(dir, "results.csv")); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.md"), []byte(r.summary(o)), 0o644)
}

func (r *report) writeCSV(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	w.Write([]string{"case", "broker", "record_size", "acks", "producers", "records", "records_per_sec", "mb_per_sec", "p50_ms", "p99_ms", "broker_cpu_s_per_gb", "note"})
	for _, x := range r.rows {
		w.Write([]string{x.Case, x.Broker, fmt.Sprint(x.RecordSize), x.Acks, fmt.Sprint(x.Producers), fmt.Sprint(x.Records),
			fmt.Sprintf("%.0f", x.RecsPerSec), fmt.Sprintf("%.2f", x.MBPerSec), fmt.Sprintf("%.3f", x.P50ms),
			fmt.Sprintf("%.3f", x.P99ms), fmt.Sprintf("%.3f", x.CPUPerGB), x.Note})
	}
	w.Flush()
	return w.Error()
}

// find returns the row of a case and broker with the given shape.
func (r *report) find(c, broker string, size int, acks string, producers int) (row, bool) {
	for _, x := range r.rows {
		if x.Case == c && x.Broker == broker && x.RecordSize == size && x.Acks == acks && x.Producers == producers {
			return x, true
		}
	}
	return row{}, false
}

func (r *report) summary(o options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Broker benchmark: Varve beside kfake\n\n")
	cmd := "go run ./experiments/brokerbench"
	if o.quick {
		cmd += " -quick"
	}
	fmt.Fprintf(&b, "Command: `%s` (%d records per produce case, %d per sync case, %d MiB consumed). ", cmd, o.records, o.syncRecords, o.consumeBytes>>20)
	fmt.Fprintf(&b, "Run %s, took %s. Machine: %d CPUs, %s/%s, %s. Load average %.2f before, %.2f after: ", r.started.Format(time.RFC3339), r.took.Round(time.Second), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(), r.loadBefore, r.loadAfter)
	b.WriteString("the machine is shared, so the absolute figures move from run to run; the ratios within one run are the result.\n\n")
	b.WriteString("kfake is franz-go's in-memory fake cluster in the benchmark's own process (no disk; fetches copy). Varve is `varve server` in a child process with its defaults (no fsync per append unless stated), data on disk.\n\n")
	b.WriteString("## Produce\n\n| record | acks | producers | Varve rec/s | kfake rec/s | Varve / kfake | Varve p99 ms | Varve broker CPU s/GB |\n|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, x := range r.rows {
		if x.Case != "produce" || x.Broker != "varve" {
			continue
		}
		k, _ := r.find("produce", "kfake", x.RecordSize, x.Acks, x.Producers)
		fmt.Fprintf(&b, "| %d B | %s | %d | %.0f | %.0f | %.2f | %.2f | %.2f |\n", x.RecordSize, x.Acks, x.Producers, x.RecsPerSec, k.RecsPerSec, ratio(x.RecsPerSec, k.RecsPerSec), x.P99ms, x.CPUPerGB)
	}
	b.WriteString("\n## One record per request\n\n")
	fmt.Fprintf(&b, "A bare TCP ping-pong of 100 bytes on loopback: %.0f round trips/s between two goroutines of one process (as the bench and kfake are), %.0f between two processes (as the bench and `varve server` are).\n\n", r.pingPong, r.pingPongProcs)
	b.WriteString("| broker | rec/s | p50 ms | p99 ms | / ping-pong, one process | / ping-pong, two processes |\n|---|---:|---:|---:|---:|---:|\n")
	for _, x := range r.rows {
		if x.Case == "sync" {
			fmt.Fprintf(&b, "| %s | %.0f | %.3f | %.3f | %.2f | %.2f |\n", x.Broker, x.RecsPerSec, x.P50ms, x.P99ms, ratio(x.RecsPerSec, r.pingPong), ratio(x.RecsPerSec, r.pingPongProcs))
		}
	}
	b.WriteString("\n## Consume from the start of the topic\n\n| broker | rec/s | MB/s | Varve broker CPU s/GB |\n|---|---:|---:|---:|\n")
	var v, k row
	for _, x := range r.rows {
		if x.Case == "consume" {
			fmt.Fprintf(&b, "| %s | %.0f | %.1f | %.2f |\n", x.Broker, x.RecsPerSec, x.MBPerSec, x.CPUPerGB)
			if x.Broker == "varve" {
				v = x
			} else {
				k = x
			}
		}
	}
	fmt.Fprintf(&b, "\nVarve / kfake consuming: %.2f.\n", ratio(v.RecsPerSec, k.RecsPerSec))
	b.WriteString("\n## Group commit: log.flush.interval.messages=1, acks=all, 100 B, one record per request, one partition\n\n| producers | rec/s | p50 ms | p99 ms |\n|---:|---:|---:|---:|\n")
	for _, x := range r.rows {
		if x.Case == "groupcommit" {
			fmt.Fprintf(&b, "| %d | %.0f | %.3f | %.3f |\n", x.Producers, x.RecsPerSec, x.P50ms, x.P99ms)
		}
	}
	return b.String()
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
