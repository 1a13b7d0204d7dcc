package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/varve/varve/benchmarks/kafkabench"
	"github.com/varve/varve/experiments/internal/kafkadist"
)

// perfArgs is the ProducerPerformance command line of a batch-n test:
// acks=1, no idempotence, one request in flight, batch.size holding n of
// the paper's messages, linger.ms=0.
func perfArgs(libs, addr, topic string, records int64, n int) []string {
	return []string{
		"java", "-Xms256m", "-Xmx512m", "-XX:+UseG1GC", "-cp", filepath.Join(libs, "*"), kafkadist.PerfClass,
		"--topic", topic, "--num-records", strconv.FormatInt(records, 10),
		"--record-size", strconv.Itoa(messageSize), "--throughput", "-1",
		"--producer-props", "bootstrap.servers=" + addr, "acks=1", "enable.idempotence=false",
		"max.in.flight.requests.per.connection=1", "batch.size=" + strconv.Itoa(javaBatchSize(n)),
		"linger.ms=0", "compression.type=none",
	}
}

// perfSummary is ProducerPerformance's final line.
type perfSummary struct {
	records          int64
	perSec, mbPerSec float64
	avgMs, maxMs     float64
	p50, p95, p99    float64
	p999             float64
}

// "1000 records sent, 123.4 records/sec (0.02 MB/sec), 1.23 ms avg latency,
// 45.00 ms max latency, 1 ms 50th, 2 ms 95th, 3 ms 99th, 4 ms 99.9th."
var perfFinal = regexp.MustCompile(`^(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th\.`)

// A window line: "51234 records sent, 10246.8 records/sec (1.95 MB/sec), ..."
var perfWindow = regexp.MustCompile(`^(\d+) records sent, [\d.]+ records/sec \([\d.]+ MB/sec\), [\d.]+ ms avg latency, [\d.]+ ms max latency\.$`)

// parsePerfFinal parses the final line, or reports that line is not one.
func parsePerfFinal(line string) (perfSummary, bool) {
	m := perfFinal.FindStringSubmatch(line)
	if m == nil {
		return perfSummary{}, false
	}
	f := func(i int) float64 { v, _ := strconv.ParseFloat(m[i], 64); return v }
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return perfSummary{records: n, perSec: f(2), mbPerSec: f(3), avgMs: f(4), maxMs: f(5),
		p50: f(6), p95: f(7), p99: f(8), p999: f(9)}, true
}

// parsePerfWindow returns the record count of a progress line.
func parsePerfWindow(line string) (int64, bool) {
	m := perfWindow.FindStringSubmatch(line)
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	return n, err == nil
}

// runPerf runs ProducerPerformance and returns its final figures; the
// progress task follows its 5-second window lines.
func runPerf(ctx context.Context, e *env, argv []string, logPath string, records int64) (perfSummary, error) {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.testTimeout)
	defer cancel()
	logf, err := os.Create(logPath)
	if err != nil {
		return perfSummary{}, err
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return perfSummary{}, err
	}
	if err := cmd.Start(); err != nil {
		return perfSummary{}, fmt.Errorf("ProducerPerformance: %w", err)
	}
	sum, found := followPerf(io.TeeReader(out, logf), e.prog.Start(e.phase, records))
	if err := cmd.Wait(); err != nil {
		return sum, fmt.Errorf("ProducerPerformance: %w; see %s", err, logPath)
	}
	if !found {
		return sum, fmt.Errorf("ProducerPerformance printed no final line; see %s", logPath)
	}
	return sum, nil
}

// followPerf reads the tool's output to its end, advancing task.
func followPerf(r io.Reader, task kafkabench.Task) (perfSummary, bool) {
	defer task.Done()
	var done int64
	var sum perfSummary
	found := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if s, ok := parsePerfFinal(sc.Text()); ok {
			sum, found = s, true
			task.SetCurrent(s.records)
		} else if n, ok := parsePerfWindow(sc.Text()); ok {
			done += n
			task.SetCurrent(done)
		}
	}
	io.Copy(io.Discard, r)
	return sum, found
}

// perfResult turns the tool's summary into a result.
func perfResult(s perfSummary, n int) result {
	r := result{Client: clientJava, Test: testProduce, Batch: n, Records: s.records,
		Bytes: s.records * messageSize, LatP50: s.p50, LatP99: s.p99}
	if s.perSec > 0 {
		r.Seconds = float64(s.records) / s.perSec
	}
	return r
}
