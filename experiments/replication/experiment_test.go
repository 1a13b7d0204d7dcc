package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/varve/varve/experiments/internal/harness"
)

// /proc/<pid>/stat's utime and stime are counted after the command
// name, which may hold spaces and parentheses.
func TestParseStatCPU(t *testing.T) {
	line := "4242 (varve (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 12 0 100 0 0"
	got, err := parseStatCPU(line)
	if err != nil || got != 3.0 {
		t.Fatalf("parseStatCPU = %v, %v; want 3 s (300 ticks)", got, err)
	}
	if _, err := parseStatCPU("4242 (varve) S 1"); err == nil {
		t.Fatal("a short line parsed")
	}
	self, err := cpuSeconds(os.Getpid())
	if err != nil || self < 0 {
		t.Fatalf("cpuSeconds(self) = %v, %v", self, err)
	}
}

func TestNetField(t *testing.T) {
	text := "Ip: Forwarding TTL\nIp: 1 64\nTcp: RtoMin InSegs RetransSegs\nTcp: 200 10 7\n"
	if got := netField(bufio.NewScanner(strings.NewReader(text)), "Tcp:", "RetransSegs"); got != 7 {
		t.Fatalf("RetransSegs = %d, want 7", got)
	}
	if got := netField(bufio.NewScanner(strings.NewReader(text)), "Tcp:", "Nope"); got != -1 {
		t.Fatalf("an absent counter = %d, want -1", got)
	}
}

// The throughput model is the smallest of its three terms and names the
// one that binds; the latency model adds the round trip and the
// follower's append (and its fsync) to the acks=1 median.
func TestModels(t *testing.T) {
	var s samples
	for rep, v := range []float64{100, 120, 90} {
		s = append(s, sample{"throughput", "rf1", rep, "mb_per_s", v, "MB/s"}, sample{"throughput", "rf3", rep, "mb_per_s", v / 2, "MB/s"})
	}
	s = append(s, sample{"latency", "rf3", 0, "acks1_p50_ms", 0.1, "ms"}, sample{"latency", "rf3", 0, "acksall_p50_ms", 0.3, "ms"},
		sample{"latency", "rf3-flush", 0, "acks1_p50_ms", 1, "ms"})
	cal := calibration{RTT: 20 * time.Microsecond, LoopbackBps: 1000e6, AppendBps: 800e6, Append: 5 * time.Microsecond, DiskFsync4K: time.Millisecond, Cores: 2}
	f := compute(s, cal)
	if f.RF1 != 100 || f.RF3 != 50 || f.TputModel != 100 || !strings.Contains(f.TputBound, "leader") {
		t.Fatalf("throughput: rf1 %v rf3 %v model %v (%s)", f.RF1, f.RF3, f.TputModel, f.TputBound)
	}
	cal.LoopbackBps = 100e6 // 50 MB/s for each of two followers
	if f := compute(s, cal); f.TputModel != 50 || !strings.Contains(f.TputBound, "loopback") {
		t.Fatalf("loopback-bound model %v (%s)", f.TputModel, f.TputBound)
	}
	if got, want := f.Lat.Model, 0.1+0.020+0.005; !near(got, want) {
		t.Fatalf("latency model %v, want %v", got, want)
	}
	if got, want := f.LatFlush.Model, 1+0.020+0.005+1; !near(got, want) {
		t.Fatalf("latency model with fsync %v, want %v", got, want)
	}
	if got, want := f.CatchUpModel, 1/(1/1000.0+1/800.0); !near(got, want) {
		t.Fatalf("catch-up model %v, want %v", got, want)
	}
	if r := ratio(f.Lat.AcksAllP50, f.Lat.Model); !near(r, 0.3/0.125) {
		t.Fatalf("latency ratio %v", r)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// The calibrations measure something on this machine.
func TestCalibrations(t *testing.T) {
	if testing.Short() {
		t.Skip("measures loopback and the disk")
	}
	dir := t.TempDir()
	bw, err := loopbackBandwidth(t.Context(), 100*time.Millisecond)
	if err != nil || bw <= 0 {
		t.Fatalf("loopback: %v, %v", bw, err)
	}
	sf, err := sendfileBandwidth(t.Context(), dir, 4<<20, 100*time.Millisecond)
	if err != nil || sf <= 0 {
		t.Fatalf("sendfile: %v, %v", sf, err)
	}
	ap, err := followerAppendRate(dir, 4<<20)
	if err != nil || ap <= 0 {
		t.Fatalf("follower append: %v, %v", ap, err)
	}
	lat, err := followerAppendLatency(dir, 20, 1)
	if err != nil || lat <= 0 {
		t.Fatalf("follower append latency: %v, %v", lat, err)
	}
}

// The report's files hold every sample, and summary.md every section.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	s, err := harness.Start(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	s.End()
	e := &experiment{cfg: config{reps: 1}, s: s, cal: calibration{RTT: time.Microsecond, SendfileBps: 1e9, Cores: 2}}
	e.out = samples{{"throughput", "rf1", 0, "mb_per_s", 100, "MB/s"}, {"throughput", "rf3", 0, "mb_per_s", 70, "MB/s"},
		{"catchup", "rf3", 0, "mb_per_s", 900, "MB/s"},
		{"catchup_throttled", "rf3", 0, "mb_per_s", 18, "MB/s"}, {"catchup_throttled", "rf3", 0, "throttle_mb_per_s", 20, "MB/s"}}
	if err := e.write(); err != nil {
		t.Fatal(err)
	}
	csv, _ := os.ReadFile(filepath.Join(s.Out, "results.csv"))
	if n := strings.Count(string(csv), "\n"); n != 6 {
		t.Fatalf("results.csv has %d lines, want a header and 5 samples:\n%s", n, csv)
	}
	md, _ := os.ReadFile(filepath.Join(s.Out, "summary.md"))
	for _, want := range []string{"## 1. Throughput", "| 100.0 MB/s | 70.0 MB/s | **0.70** |", "## 2. acks=all latency", "## 3. Follower catch-up", "**0.90**", "| 20.0 MB/s | 18.0 MB/s | **0.90** | 50.00 |", "## 4. CPU", "ratios.png"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	if _, err := os.Stat(filepath.Join(s.Out, "ratios.png")); err != nil {
		t.Fatal(err)
	}
}
