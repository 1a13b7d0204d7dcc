package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// benchJSON runs varve bench with --json --no-progress and decodes the report.
func benchJSON(t *testing.T, args ...string) clientBenchReport {
	t.Helper()
	out := mustVarve(t, "", append(append([]string{"bench"}, args...), "--json", "--no-progress")...)
	var r clientBenchReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("decode %q: %v", out, err)
	}
	if r.Error != "" || len(r.Brokers) == 0 || r.LoadAvg[0] < 0 || r.LoadAvg[1] < 0 {
		t.Errorf("report header: error %q, brokers %v, load %v", r.Error, r.Brokers, r.LoadAvg)
	}
	return r
}

// Kafka's kafka-producer-perf-test: N records of --record-size bytes,
// all acknowledged, with a rate and ordered latency percentiles.
func TestClientBenchProduceJSON(t *testing.T) {
	r := benchJSON(t, "produce", "--kfake", "--records", "3000", "--record-size", "200", "--producers", "2", "--compression", "zstd", "--partitions", "4")
	if r.Target != "kfake" || r.Command != "varve bench produce" || r.Flags["compression"] != "zstd" || r.Flags["records"] != "3000" {
		t.Errorf("report: target %q command %q flags %v", r.Target, r.Command, r.Flags)
	}
	p := r.Produce
	if p == nil {
		t.Fatal("no produce result")
	}
	if p.Records != 3000 || p.Bytes != 600000 || p.Errors != 0 || p.RecordsPerSec <= 0 || p.MBPerSec <= 0 || p.ElapsedSec <= 0 {
		t.Errorf("produce: %+v", p.Throughput)
	}
	plausibleLatency(t, "produce", p.Latency.Count, 3000, p.Latency.P50, p.Latency.P95, p.Latency.P99, p.Latency.P999, p.Latency.Max)
	if r.Consume != nil || r.E2E != nil || p.Server != nil {
		t.Error("produce report carries other sections")
	}
}

func plausibleLatency(t *testing.T, name string, count, want int64, ps ...float64) {
	t.Helper()
	if count != want {
		t.Errorf("%s: %d latency samples, want %d", name, count, want)
	}
	for i := 1; i < len(ps); i++ {
		if ps[i] < ps[i-1] || ps[0] <= 0 {
			t.Errorf("%s: percentiles p50..max %v not positive and ordered", name, ps)
			return
		}
	}
}

// Kafka's kafka-consumer-perf-test reading from the start; the empty
// topic is filled first and the fill is reported apart. The broker's
// metrics endpoint is scraped around the timed phase.
func TestClientBenchConsumeJSON(t *testing.T) {
	var scrapes atomic.Int64
	metrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n := scrapes.Add(1)
		fmt.Fprintf(w, "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %d\n", n)
	}))
	defer metrics.Close()
	r := benchJSON(t, "consume", "--kfake", "--records", "4000", "--record-size", "50", "--server-metrics", metrics.URL)
	c := r.Consume
	if c == nil || c.Fill == nil {
		t.Fatalf("consume %+v", c)
	}
	if c.Fill.Records != 4000 || c.Records != 4000 || c.Bytes != 4000*50 || c.RecordsPerSec <= 0 || c.TimedOut {
		t.Errorf("consume: fill %d, %+v", c.Fill.Records, c.Throughput)
	}
	if c.Polls < 1 || c.PollLatency.Count != c.Polls || c.FirstRecordSec <= 0 || c.FirstRecordSec > c.ElapsedSec {
		t.Errorf("consume polls %d, poll latency %+v, first record %v of %v s", c.Polls, c.PollLatency, c.FirstRecordSec, c.ElapsedSec)
	}
	s := c.Server
	if s == nil || s.CPUSeconds != 1 || s.BytesSource != "client" || s.BytesOut != 4000*50 || s.CPUSecondsPerGB <= 0 || len(s.Missing) != 2 {
		t.Errorf("server report %+v", s)
	}
	if c.Fill.Server != nil {
		t.Error("the untimed fill was scraped")
	}
}

// Kafka's EndToEndLatency, and the produce round trip of --sync.
func TestClientBenchE2EAndSyncJSON(t *testing.T) {
	r := benchJSON(t, "e2e", "--kfake", "--records", "40", "--record-size", "10", "--acks", "1")
	e := r.E2E
	if e == nil || e.Records != 40 {
		t.Fatalf("e2e %+v", e)
	}
	plausibleLatency(t, "e2e", e.Latency.Count, 40, e.Latency.P50, e.Latency.P95, e.Latency.P99, e.Latency.P999, e.Latency.Max)
	plausibleLatency(t, "e2e ack", e.ProduceLatency.Count, 40, e.ProduceLatency.P50, e.ProduceLatency.Max)
	r = benchJSON(t, "produce", "--kfake", "--sync", "--records", "40", "--throughput", "1000")
	if p := r.Produce; p == nil || p.Records != 40 || p.Latency.Count != 40 {
		t.Fatalf("sync produce %+v", p)
	}
}

// The text report reads like Kafka's perf tools.
func TestClientBenchText(t *testing.T) {
	out := mustVarve(t, "", "bench", "produce", "--kfake", "--records", "500", "--record-size", "20", "--no-progress")
	if !strings.Contains(out, "\n500 records sent, ") || !strings.Contains(out, "records/sec (") || !strings.Contains(out, "p99.9 ") {
		t.Errorf("text report:\n%s", out)
	}
	if _, _, err := varve(t, "", "bench", "produce", "--kfake", "--acks", "2", "--records", "5"); err == nil {
		t.Error("acks=2 accepted")
	}
}
