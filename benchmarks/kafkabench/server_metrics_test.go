package kafkabench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const scrape1 = `# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 10.5
# TYPE varve_broker_bytes_in_total counter
varve_broker_bytes_in_total{topic="a"} 1e9
varve_broker_bytes_in_total{topic="b}\" x"} 1000000000 1700000000000
varve_broker_bytes_out_total{topic="a"} 5
process_cpu_seconds_total_other 99
garbage line
`

func TestParseServerMetricsSumsLabelSets(t *testing.T) {
	s, err := ParseServerMetrics(strings.NewReader(scrape1))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{MetricCPUSeconds: 10.5, MetricBytesIn: 2e9, MetricBytesOut: 5}
	for k, v := range want {
		if s.Values[k] != v {
			t.Errorf("%s = %v, want %v", k, s.Values[k], v)
		}
	}
	if len(s.Values) != len(want) {
		t.Errorf("values %v, want only %v", s.Values, want)
	}
}

// Broker CPU per GB produced uses the broker's byte counter when it has
// one and the bench's own count when it does not.
func TestServerReport(t *testing.T) {
	before := ServerSample{Values: map[string]float64{MetricCPUSeconds: 10, MetricBytesIn: 1e9, MetricBytesOut: 0}}
	after := ServerSample{Values: map[string]float64{MetricCPUSeconds: 13, MetricBytesIn: 3e9, MetricBytesOut: 5e8}}
	r := NewServerReport("u", before, after, In, 123)
	if r.CPUSeconds != 3 || r.BytesIn != 2e9 || r.CPUSecondsPerGB != 1.5 || r.BytesSource != "broker" || len(r.Missing) != 0 {
		t.Errorf("in: %+v", r)
	}
	r = NewServerReport("u", before, after, Out, 123)
	if r.CPUSecondsPerGB != 6 || r.BytesOut != 5e8 {
		t.Errorf("out: %+v", r)
	}
	cpuOnly := func(v float64) ServerSample { return ServerSample{Values: map[string]float64{MetricCPUSeconds: v}} }
	r = NewServerReport("u", cpuOnly(1), cpuOnly(2), Out, 2e9)
	if r.BytesSource != "client" || r.BytesOut != 2e9 || r.CPUSecondsPerGB != 0.5 || len(r.Missing) != 2 {
		t.Errorf("no byte counters: %+v", r)
	}
}

func TestScrapeServerOverHTTP(t *testing.T) {
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n++
		fmt.Fprintf(w, "process_cpu_seconds_total %d\n", n)
	}))
	defer srv.Close()
	ctx := context.Background()
	p, err := startProbe(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.end(ctx, In, 1e9)
	if err != nil {
		t.Fatal(err)
	}
	if r.CPUSeconds != 1 || r.CPUSecondsPerGB != 1 {
		t.Errorf("report %+v", r)
	}
	if _, err := ScrapeServer(ctx, srv.URL+"/x\x00"); err == nil {
		t.Error("bad URL scraped")
	}
}
