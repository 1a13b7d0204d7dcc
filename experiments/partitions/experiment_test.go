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

	"github.com/varve/varve/benchmarks/storage"
	"github.com/varve/varve/diskmodel"
	"github.com/varve/varve/segment"
)

// fakeCalibration is a plausible disk, so tests need not calibrate one.
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

// The experiment at tiny sizes writes partitions.csv with the documented
// columns, every plot as PNG and SVG, and a summary stating where each
// curve bends; and the fsyncs it counts are exactly those Kafka's
// per-partition flush.messages rule implies.
func TestExperimentQuick(t *testing.T) {
	cfg, err := parseFlags([]string{
		"-quick", "-no-progress", "-dir", t.TempDir(), "-out", t.TempDir(), "-total-bytes", "2MiB",
		"-batch-bytes", "16KiB", "-partitions", "64,1,4", "-policies", "never,messages=64,messages=1",
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg.calibration = fakeCalibration()
	dir, err := run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	rows := readCSV(t, filepath.Join(dir, "partitions.csv"))
	if !slices.Equal(rows[0], csvHeader) {
		t.Fatalf("CSV header %v, want %v", rows[0], csvHeader)
	}
	if want := 1 + 3*3; len(rows) != want {
		t.Fatalf("%d CSV rows, want %d", len(rows), want)
	}
	checkRows(t, rows)
	e := &experiment{cfg: cfg}
	for _, ch := range e.charts() {
		for _, ext := range []string{".png", ".svg"} {
			if st, err := os.Stat(filepath.Join(dir, ch.file+ext)); err != nil || st.Size() == 0 {
				t.Errorf("plot %s%s missing or empty: %v", ch.file, ext, err)
			}
		}
	}
	summary, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil || strings.Count(string(summary), "Durable throughput, measured:") != 3 {
		t.Fatalf("summary.md missing or without a bend statement per policy: %v", err)
	}
}

// checkRows: Kafka flushes a partition's log once LEO - recoveryPoint >=
// flush.messages, per partition, and Log.Flush fsyncs what is left, so
// the fdatasyncs counted at the file seam must equal the model's count;
// a new log's first flush fsyncs its directory once; under
// flush.messages=1 nothing acknowledged is ever unsynced.
func checkRows(t *testing.T, rows [][]string) {
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	num := func(r []string, name string) int64 {
		v, err := strconv.ParseFloat(r[col[name]], 64)
		if err != nil {
			t.Fatalf("column %s: %v", name, err)
		}
		return int64(v)
	}
	for _, r := range rows[1:] {
		p := num(r, "partitions")
		if got, want := num(r, "fsyncs"), num(r, "model_fsyncs"); got != want {
			t.Errorf("%s x%d: %d fsyncs, the flush rule gives %d", r[col["policy"]], p, got, want)
		}
		if got := num(r, "dir_fsyncs"); got != p {
			t.Errorf("%s x%d: %d directory fsyncs, want one per new log", r[col["policy"]], p, got)
		}
		if num(r, "open_fds") < p {
			t.Errorf("x%d: %d open descriptors with every log open", p, num(r, "open_fds"))
		}
		if r[col["policy"]] == "messages=1" && num(r, "risk_max_msgs") != 0 {
			t.Errorf("messages=1 x%d: %d messages acknowledged and not fsynced", p, num(r, "risk_max_msgs"))
		}
		// Kafka's default never fsyncs before the flush: at the end of the
		// appends every message is at risk.
		if r[col["policy"]] == "never" && num(r, "risk_max_msgs") != num(r, "batches")*num(r, "records_per_batch") {
			t.Errorf("never x%d: at most %d messages at risk, want all %d", p, num(r, "risk_max_msgs"), num(r, "batches")*num(r, "records_per_batch"))
		}
		if num(r, "bytes") <= 0 || r[col["durable_mbps"]] == "0" || r[col["model_s"]] == "0" {
			t.Errorf("empty run or no model: %v", r)
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

// Kafka rolls a segment when an index is full (LogSegment.shouldRoll); the
// experiment sizes segment.index.bytes so a run never does, and a smaller
// index would.
func TestIndexBytesForAvoidsRolls(t *testing.T) {
	const total, batchBytes = 8 << 20, 4 << 10
	segments := func(indexBytes int) int {
		cfg := segment.DefaultConfig()
		cfg.SegmentIndexBytes = indexBytes
		l, err := storage.OpenLog(t.TempDir(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		batch, err := storage.MakeBatch(batchBytes, 4)
		if err != nil {
			t.Fatal(err)
		}
		for range total / batchBytes {
			if _, err := l.Append(batch); err != nil {
				t.Fatal(err)
			}
		}
		return len(l.Segments())
	}
	size := indexBytesFor(total, 1, batchBytes)
	if n := segments(size); n != 1 {
		t.Errorf("segment.index.bytes %d: %d segments, want 1", size, n)
	}
	if n := segments(size / 8); n < 2 {
		t.Errorf("an eighth of the index (%d bytes) did not roll: the test cannot tell", size/8)
	}
	if got := indexBytesFor(256<<20, 1024, 16<<10); got > 8192 {
		t.Errorf("1024 partitions of 256 MiB: index %d bytes, want a page or two", got)
	}
}

func TestParsePolicies(t *testing.T) {
	ps, err := parsePolicies("never, messages=100,messages=1")
	if err != nil || len(ps) != 3 || ps[0].name() != "never" || ps[1].messages != 100 {
		t.Fatalf("parsePolicies: %v, %v", ps, err)
	}
	for _, bad := range []string{"", "ms=10", "messages=0", "messages=x"} {
		if _, err := parsePolicies(bad); err == nil {
			t.Errorf("parsePolicies(%q) accepted", bad)
		}
	}
}

// The defaults are issue 6's partition counts, and they validate: every
// partition receives at least one batch and the run fits one segment.
func TestDefaultsAreTheIssuesGrid(t *testing.T) {
	cfg, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.partitions, []int{1, 4, 16, 64, 256, 1024}) || len(cfg.policies) != 3 || cfg.segmentBytes != 1<<30 {
		t.Errorf("defaults %+v", cfg)
	}
}
