package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	stdnet "net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPlanAlternatesDesigns(t *testing.T) {
	cfg, err := parseFlags([]string{"-quick", "-reps", "2", "-conns", "10,100", "-workloads", "small"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.warmup != 500*time.Millisecond || cfg.duration != 2*time.Second {
		t.Errorf("-quick defaults: warmup %v duration %v", cfg.warmup, cfg.duration)
	}
	p := plan(cfg)
	if len(p) != 2*2*2 {
		t.Fatalf("%d points, want 8", len(p))
	}
	if p[0].design != designReactor || p[4].design != designGoroutine {
		t.Errorf("designs do not alternate between repetitions: %v", p)
	}
}

func TestLoadgenOnlyTargetsLoopback(t *testing.T) {
	for _, addr := range []string{"10.0.0.1:9092", "localhost:9092", "[::1]:9092", "example.com:80"} {
		cfg := config{addr: addr, conns: []int{1}, workload: workloadSmall}
		if err := loadgenMain(cfg, strings.NewReader(""), io.Discard); err == nil {
			t.Errorf("load generator accepted %s", addr)
		}
	}
}

// The load generator and a server of each design, in process: every
// response is counted and the reports add up.
func TestLoadgenAgainstServers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "region")
	if err := os.WriteFile(path, make([]byte, regionFile), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{designReactor, designGoroutine} {
		for _, w := range []string{workloadSmall, workloadRegion} {
			t.Run(d+"/"+w, func(t *testing.T) {
				h, closeFile, err := workloadHandler(w, path)
				if err != nil {
					t.Fatal(err)
				}
				defer closeFile()
				srv, err := newServer(d, h)
				if err != nil {
					t.Fatal(err)
				}
				ln, err := stdnet.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				go srv.Serve(ln)
				defer srv.Shutdown(context.Background())

				m := takeMark(srv)
				cfg := config{addr: ln.Addr().String(), conns: []int{8}, workload: w,
					warmup: 50 * time.Millisecond, duration: 300 * time.Millisecond, maxRequests: 1 << 40}
				var out bytes.Buffer
				if err := loadgenMain(cfg, strings.NewReader("close\n"), &out); err != nil {
					t.Fatal(err)
				}
				sr := m.report(srv)
				lines := strings.Split(strings.TrimSpace(out.String()), "\n")
				if len(lines) != 4 || lines[0] != "connected 8" || lines[1] != lineStart || lines[2] != lineStop {
					t.Fatalf("protocol lines: %q", lines)
				}
				var lr loadReport
				if err := json.Unmarshal([]byte(lines[3]), &lr); err != nil {
					t.Fatal(err)
				}
				if lr.Responses == 0 || lr.Errors != 0 || lr.P99us < lr.P50us || lr.P50us <= 0 {
					t.Fatalf("load report %+v", lr)
				}
				if lr.ResponseBytes != lr.Responses*int64(responseSize(w)) {
					t.Errorf("response bytes %d for %d responses", lr.ResponseBytes, lr.Responses)
				}
				if sr.Requests < lr.Responses {
					t.Errorf("server saw %d requests, load generator %d responses", sr.Requests, lr.Responses)
				}
				r := makeRow(spec{workload: w, design: d, conns: 8}, sr, lr)
				if r.Throughput <= 0 || r.CPUPerReqUs <= 0 {
					t.Errorf("row %+v", r)
				}
			})
		}
	}
}

// results.csv reads back into the rows it was written from (-replot).
func TestCSVRoundTrip(t *testing.T) {
	rows := []row{
		{spec: spec{workload: workloadSmall, design: designReactor, conns: 10, rep: 0}, Connected: 10, ServerConns: 10,
			Throughput: 1234, MBps: 0.1, P50: 10.5, P99: 99.5, P999: 200, ServerCores: 0.5, CPUPerReqUs: 12.25,
			RSSMB: 15.5, RSSPeakMB: 16.5, HeapStackMB: 3.5, Goroutines: 13, Threads: 9, IdleRatio: 0.25, ClientCores: 0.75,
			WindowSecond: 2.5},
		{spec: spec{workload: workloadRegion, design: designGoroutine, conns: 10000, rep: 2}, Connected: 9000,
			DialError: "connect: cannot assign requested address", IdleRatio: -1, Errors: 3, FirstError: "EOF, again"},
	}
	path := filepath.Join(t.TempDir(), "results.csv")
	if err := writeCSV(path, rows); err != nil {
		t.Fatal(err)
	}
	got, err := readCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("%d rows back", len(got))
	}
	for i := range rows {
		if got[i] != rows[i] {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, got[i], rows[i])
		}
	}
}
