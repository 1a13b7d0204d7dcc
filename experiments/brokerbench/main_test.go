package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The report's files carry every case that ran, and the ping-pong
// measures something.
func TestReportFiles(t *testing.T) {
	r := &report{started: time.Now(), pingPong: 20000, pingPongProcs: 10000}
	r.add(row{Case: "produce", Broker: "varve", RecordSize: 100, Acks: "1", Producers: 1, RecsPerSec: 200})
	r.add(row{Case: "produce", Broker: "kfake", RecordSize: 100, Acks: "1", Producers: 1, RecsPerSec: 100})
	r.add(row{Case: "sync", Broker: "varve-reactor", RecordSize: 100, Acks: "1", Producers: 1, RecsPerSec: 10000})
	dir := t.TempDir()
	if err := r.write(dir, options{}); err != nil {
		t.Fatal(err)
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "results.csv"))
	if n := strings.Count(string(csv), "\n"); n != 4 {
		t.Fatalf("results.csv has %d lines, want a header and 3 rows", n)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	if !strings.Contains(string(md), "| 100 B | 1 | 1 | 200 | 100 | 2.00 |") || !strings.Contains(string(md), "| varve-reactor | 10000 |") {
		t.Fatalf("summary.md lacks the rows:\n%s", md)
	}
}
