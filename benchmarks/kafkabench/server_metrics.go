package kafkabench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// The broker metrics a run scrapes. process_cpu_seconds_total comes from
// client_golang's default process collector; the byte counters are
// Varve's and may be absent (another broker, or an older Varve): the
// report then falls back to the bytes the benchmark itself counted.
const (
	MetricCPUSeconds = "process_cpu_seconds_total"
	MetricBytesIn    = "varve_broker_bytes_in_total"
	MetricBytesOut   = "varve_broker_bytes_out_total"
)

// ServerSample is one scrape of the broker's metrics: each value is the
// sum over all its label sets (per-topic byte counters add up to the
// broker's total).
type ServerSample struct {
	Values map[string]float64 // only the metrics above that were present
}

// ScrapeServer fetches url (a Prometheus text-format endpoint such as
// http://127.0.0.1:9093/metrics) and reads the metrics above from it.
func ScrapeServer(ctx context.Context, url string) (ServerSample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return ServerSample{}, fmt.Errorf("scrape %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ServerSample{}, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ServerSample{}, fmt.Errorf("scrape %s: HTTP %s", url, resp.Status)
	}
	s, err := ParseServerMetrics(resp.Body)
	if err != nil {
		return ServerSample{}, fmt.Errorf("scrape %s: %w", url, err)
	}
	return s, nil
}

// ParseServerMetrics reads Prometheus' text exposition format (version
// 0.0.4) and sums the samples of the metrics above.
func ParseServerMetrics(r io.Reader) (ServerSample, error) {
	s := ServerSample{Values: map[string]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, v, ok := parseSampleLine(sc.Text())
		if !ok {
			continue
		}
		switch name {
		case MetricCPUSeconds, MetricBytesIn, MetricBytesOut:
			s.Values[name] += v
		}
	}
	if err := sc.Err(); err != nil {
		return ServerSample{}, fmt.Errorf("read metrics: %w", err)
	}
	return s, nil
}

// parseSampleLine splits `name{labels} value [timestamp]`; comments,
// blank and malformed lines give ok=false.
func parseSampleLine(line string) (name string, v float64, ok bool) {
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' {
		return "", 0, false
	}
	end := strings.IndexAny(line, "{ \t")
	if end <= 0 {
		return "", 0, false
	}
	name, rest := line[:end], line[end:]
	if rest[0] == '{' {
		closing := labelsEnd(rest)
		if closing < 0 {
			return "", 0, false
		}
		rest = rest[closing+1:]
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return "", 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return name, v, err == nil
}

// labelsEnd returns the index of the '}' closing the label set that s
// opens, skipping quoted label values (which may hold '}' or '\"').
func labelsEnd(s string) int {
	quoted := false
	for i := 1; i < len(s); i++ {
		switch {
		case quoted && s[i] == '\\':
			i++
		case s[i] == '"':
			quoted = !quoted
		case !quoted && s[i] == '}':
			return i
		}
	}
	return -1
}

// ServerReport is the broker's cost of one timed phase: the difference of
// two scrapes taken just before and just after it.
type ServerReport struct {
	URL        string  `json:"url"`
	CPUSeconds float64 `json:"cpu_seconds"`
	BytesIn    float64 `json:"bytes_in"`  // broker counter delta, or the bench's bytes if absent
	BytesOut   float64 `json:"bytes_out"` // likewise
	// BytesSource is "broker" when the broker's byte counter for this
	// phase's direction was present, "client" when the bench's own count
	// of key and value bytes stands in for it.
	BytesSource string `json:"bytes_source"`
	// CPUSecondsPerGB is broker CPU seconds per 10^9 bytes produced (a
	// produce phase) or consumed (a consume phase).
	CPUSecondsPerGB float64  `json:"cpu_seconds_per_gb"`
	Missing         []string `json:"missing,omitempty"` // metrics the broker did not expose
}

// Direction says which way a phase moves data through the broker.
type Direction int

const (
	In  Direction = iota // produce: bytes into the broker
	Out                  // consume: bytes out of the broker
)

// NewServerReport compares two scrapes around a phase that moved
// clientBytes in direction dir.
func NewServerReport(url string, before, after ServerSample, dir Direction, clientBytes int64) ServerReport {
	r := ServerReport{URL: url, BytesSource: "broker"}
	delta := func(name string) (float64, bool) {
		a, ok1 := after.Values[name]
		b, ok2 := before.Values[name]
		if !ok1 || !ok2 {
			r.Missing = append(r.Missing, name)
			return 0, false
		}
		return a - b, true
	}
	r.CPUSeconds, _ = delta(MetricCPUSeconds)
	in, okIn := delta(MetricBytesIn)
	out, okOut := delta(MetricBytesOut)
	r.BytesIn, r.BytesOut = in, out
	moved := in
	if dir == Out {
		moved = out
	}
	if (dir == In && !okIn) || (dir == Out && !okOut) {
		r.BytesSource, moved = "client", float64(clientBytes)
		if dir == In {
			r.BytesIn = moved
		} else {
			r.BytesOut = moved
		}
	}
	if moved > 0 {
		r.CPUSecondsPerGB = r.CPUSeconds / (moved / 1e9)
	}
	return r
}

// serverProbe scrapes around a phase when a URL is set.
type serverProbe struct {
	url    string
	before ServerSample
}

// startProbe takes the first scrape; an empty url disables the probe.
func startProbe(ctx context.Context, url string) (*serverProbe, error) {
	if url == "" {
		return nil, nil
	}
	s, err := ScrapeServer(ctx, url)
	if err != nil {
		return nil, err
	}
	return &serverProbe{url: url, before: s}, nil
}

// end takes the second scrape and builds the report; nil probe gives nil.
func (p *serverProbe) end(ctx context.Context, dir Direction, clientBytes int64) (*ServerReport, error) {
	if p == nil {
		return nil, nil
	}
	after, err := ScrapeServer(ctx, p.url)
	if err != nil {
		return nil, err
	}
	r := NewServerReport(p.url, p.before, after, dir, clientBytes)
	return &r, nil
}
