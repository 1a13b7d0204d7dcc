package main

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/varve/varve/diskmodel"
)

// fakeCalibration is a plausible disk: 1 GB/s sequential writes, 2 GB/s
// into the page cache, 200 µs for write+fdatasync of 4 KiB, 1.2 ms for
// 1 MiB. Tests use it instead of calibrating the real disk.
func fakeCalibration() *diskmodel.Calibration {
	return &diskmodel.Calibration{
		FileSize: 256 << 20, SeqWriteBps: 1e9, PageCacheWriteBps: 2e9,
		SeqReadBps: 1e9, ColdBufferedReadBps: 1e9, PageCacheReadBps: 5e9,
		Fsync4K: 200 * time.Microsecond, Fsync4KP99: time.Millisecond,
		Fsync1M: 1200 * time.Microsecond, Fsync1MP99: 5 * time.Millisecond,
		RandRead4K: 60 * time.Microsecond, RandRead4KP99: time.Millisecond,
		FSType: "test",
	}
}

// tinyRun runs the whole experiment at tiny sizes into a temp dir.
func tinyRun(t *testing.T) (string, config) {
	t.Helper()
	cfg, err := parseFlags([]string{
		"-quick", "-no-progress", "-dir", t.TempDir(), "-out", t.TempDir(),
		"-duration", "60ms", "-max-bytes", "2MiB", "-batch-sizes", "1KiB,16KiB",
		"-policies", "messages=1,messages=10,ms=5,never", "-appenders", "1,3",
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg.calibration = fakeCalibration()
	dir, err := run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dir, cfg
}

// The experiment at tiny sizes writes its CSVs with the documented
// columns, every plot as PNG and SVG, and a summary; and its figures obey
// Kafka's flush rules where they are exact.
func TestExperimentQuick(t *testing.T) {
	dir, cfg := tinyRun(t)
	rows := readCSV(t, filepath.Join(dir, "flushpolicy.csv"))
	if !slices.Equal(rows[0], csvHeader) {
		t.Fatalf("CSV header %v, want %v", rows[0], csvHeader)
	}
	if want := 1 + 2*4*2 + 2; len(rows) != want {
		t.Fatalf("%d CSV rows, want %d (header, 2 batch sizes x 4 policies x log and raw peer, 2 group-commit runs)", len(rows), want)
	}
	checkRows(t, rows)
	series := readCSV(t, filepath.Join(dir, "risk_timeseries.csv"))
	if !slices.Equal(series[0], seriesHeader) || len(series) < 2 {
		t.Fatalf("risk_timeseries.csv: header %v, %d rows", series[0], len(series))
	}
	e := &experiment{cfg: cfg}
	for _, f := range e.figures() {
		for _, ext := range []string{".png", ".svg"} {
			if st, err := os.Stat(filepath.Join(dir, f.name+ext)); err != nil || st.Size() == 0 {
				t.Errorf("plot %s%s missing or empty: %v", f.name, ext, err)
			}
		}
	}
	summary, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil || !strings.Contains(string(summary), "## Group commit") {
		t.Fatalf("summary.md missing or without the group-commit table: %v", err)
	}
}

// checkRows checks what the flush rules make exact, whatever the timing:
//   - Kafka flushes after an append once LEO - recoveryPoint >=
//     flush.messages, so with one record per 1 KiB batch, messages=1 does
//     one fsync per append and messages=10 one per ten appends;
//   - an append under flush.messages=1 returns only once fsynced, so
//     nothing acknowledged is ever at risk;
//   - with no flush policy (Kafka's default) nothing is fsynced before the
//     final flush, so everything acknowledged stays at risk.
//
// The raw peers apply the same rules to plain writes, so they must obey
// the same equalities.
func checkRows(t *testing.T, rows [][]string) {
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	num := func(r []string, name string) float64 {
		v, err := strconv.ParseFloat(r[col[name]], 64)
		if err != nil {
			t.Fatalf("column %s: %v", name, err)
		}
		return v
	}
	for _, r := range rows[1:] {
		appends, fsyncs := num(r, "appends"), num(r, "fsyncs")
		if appends < 1 || num(r, "mbps") <= 0 || num(r, "model_mbps") <= 0 {
			t.Fatalf("empty run or no model: %v", r)
		}
		if r[col["kind"]] == "group" || r[col["batch_bytes"]] != "1024" {
			continue
		}
		switch r[col["policy"]] {
		case "messages=1":
			if fsyncs != appends || num(r, "risk_max_msgs") != 0 {
				t.Errorf("messages=1: %v fsyncs for %v appends, max risk %v; want one each, 0", fsyncs, appends, num(r, "risk_max_msgs"))
			}
		case "messages=10":
			if want := float64(int(appends) / 10); fsyncs != want {
				t.Errorf("messages=10: %v fsyncs for %v appends, want %v", fsyncs, appends, want)
			}
		case "never":
			if fsyncs != 0 || num(r, "risk_max_msgs") == 0 {
				t.Errorf("never: %v fsyncs, max risk %v; want 0 and > 0", fsyncs, num(r, "risk_max_msgs"))
			}
		}
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestParsePolicies(t *testing.T) {
	ps, err := parsePolicies(defaultPolicies)
	if err != nil || len(ps) != 9 {
		t.Fatalf("default policies: %v, %v", ps, err)
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.name()
	}
	if got := strings.Join(names, ","); got != defaultPolicies {
		t.Errorf("names round trip to %q", got)
	}
	for _, bad := range []string{"", "messages=0", "ms=-1", "bytes=3", "messages", "ms=x"} {
		if _, err := parsePolicies(bad); err == nil {
			t.Errorf("parsePolicies(%q) accepted", bad)
		}
	}
}

func TestParseSize(t *testing.T) {
	cases := map[string]int64{"1KiB": 1 << 10, "16KiB": 16 << 10, "768MiB": 768 << 20, "1GiB": 1 << 30, "1e6": 1e6, "2MB": 2e6}
	for s, want := range cases {
		if got, err := parseSize(s); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "x", "-1MiB", "KiB", "0"} {
		if _, err := parseSize(s); err == nil {
			t.Errorf("parseSize(%q) accepted", s)
		}
	}
}

// The defaults are issue 6's grid: flush.messages and flush.ms at 1, 10,
// 100 and 1000 and never, at 1, 16 and 256 KiB, and 1 to 16 appenders.
func TestDefaultsAreTheIssuesGrid(t *testing.T) {
	cfg, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.policies) != 9 || !slices.Equal(cfg.batchSizes, []int{1 << 10, 16 << 10, 256 << 10}) ||
		!slices.Equal(cfg.appenders, []int{1, 2, 4, 8, 16}) || !cfg.peers || cfg.segmentBytes != 1<<30 {
		t.Errorf("defaults %+v", cfg)
	}
}
