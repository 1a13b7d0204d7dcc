package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/varve/varve/benchmarks/storage"
	"github.com/varve/varve/diskmodel"
)

// The run command of the README must work on a fresh machine: calibrate,
// run every workload, print every figure, leave nothing but the cached
// calibration behind. This runs it in-process with --quick --json on a
// small log (the figures' values are not checked, only their presence).
func TestBenchQuickJSONProducesEveryFigure(t *testing.T) {
	dir := t.TempDir()
	cmd := newBenchCmd()
	var out, errOut bytes.Buffer
	cmd.SetArgs([]string{"--quick", "--json", "--dir", dir, "--size", "8MiB", "--budget", "20ms"})
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("log bench: %v\n%s", err, errOut.String())
	}
	var res benchResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out.String())
	}
	if err := res.Calibration.Validate(); err != nil {
		t.Errorf("calibration: %v", err)
	}
	want := []string{"validate/1MiB", "allocs/append 1000 records", "append/64KiB", "append/256KiB", "append/1MiB",
		"append-fsync/4KiB", "append-fsync/1MiB", "read-seq/page-cache", "read-batch/region p99", "recovery/device"}
	got := map[string]storage.Figure{}
	for _, f := range res.Report.Figures {
		got[f.Name] = f
	}
	for _, name := range want {
		f, ok := got[name]
		if !ok {
			t.Errorf("figure %q missing", name)
			continue
		}
		if f.Status != storage.Pass && f.Status != storage.Below {
			t.Errorf("%s: status %q, want PASS or BELOW", name, f.Status)
		}
	}
	if res.Report.LogBytes != 8<<20 || !strings.Contains(res.Command, "--quick") {
		t.Errorf("report: %d bytes, command %q", res.Report.LogBytes, res.Command)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != diskmodel.CacheFileName {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	if errOut.Len() == 0 {
		t.Error("no progress shown on stderr")
	}
}

func TestParseBenchSize(t *testing.T) {
	for in, want := range map[string]int64{"": 0, "1GiB": 1 << 30, "64MiB": 64 << 20, "64m": 64 << 20, "4096": 4096, "8 KiB": 8 << 10} {
		if got, err := parseBenchSize(in); err != nil || got != want {
			t.Errorf("parseBenchSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"x", "-1GiB", "1.5GiB", "0", "GiB"} {
		if _, err := parseBenchSize(bad); err == nil {
			t.Errorf("parseBenchSize(%q) accepted", bad)
		}
	}
}

func TestBenchTableShowsEveryColumn(t *testing.T) {
	res := benchResult{
		Command: "varve log bench",
		Report: storage.Report{LogBytes: 1 << 30, Budget: 2 * time.Second, Figures: []storage.Figure{
			{Name: "append/64KiB", Unit: "MB/s", Measured: 1400, Model: 1500, Ratio: 1400.0 / 1500, Target: ">= 0.90x seq write", Status: storage.Pass,
				Peer: 1600, VsPeer: 1400.0 / 1600, Detail: "note"},
			{Name: "validate/1MiB", Unit: "MB/s", Measured: 2500, Target: ">= 3000 MB/s", Status: storage.Below},
			{Name: "allocs/append 1 record", Unit: "allocs/append", Measured: 0, Target: "-", Status: storage.Info},
		}},
	}
	var out bytes.Buffer
	printBenchTable(&out, res)
	s := out.String()
	for _, want := range []string{
		"$ varve log bench\n",
		"figure                  measured   model      ratio  target              status  raw peer   vs peer\n",
		"append/64KiB            1400 MB/s  1500 MB/s  0.93   >= 0.90x seq write  PASS    1600 MB/s  0.88\n",
		"validate/1MiB           2500 MB/s  -          -      >= 3000 MB/s        BELOW   -          -\n",
		"allocs/append 1 record  0.00       -          -      -                   INFO    -          -\n",
		"  append/64KiB: note\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("table lacks %q:\n%s", want, s)
		}
	}
}
