package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
)

// TestMain lets the test binary play the consumer process, so the
// child-process mode is tested as it runs.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "-role" && os.Args[2] == "consumer" {
		os.Exit(consumerMain(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

func tinyConfig(t *testing.T) config {
	t.Helper()
	cfg, err := parseFlags([]string{
		"-quick", "-no-model", "-no-progress", "-dir", t.TempDir(), "-out", t.TempDir(),
		"-catchup-bytes", "6MiB", "-tail-bytes", "2MiB", "-segment-bytes", "2MiB",
		"-fetch-bytes", "300KiB", "-consumers", "1,3", "-reps", "1",
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// The whole experiment, every path and workload, with consumers in a child
// process: every consumer must receive exactly its bytes (hash-checked), and
// the outputs must be written.
func TestExperimentEndToEnd(t *testing.T) {
	cfg := tinyConfig(t)
	dir, err := run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	rows := readCSV(t, filepath.Join(dir, "readpath.csv"))
	if want := 1 + len(allPaths)*2*2; len(rows) != want {
		t.Fatalf("%d CSV rows, want %d", len(rows), want)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, r := range rows[1:] {
		if r[col["verified"]] != "true" {
			t.Fatalf("run not verified: %v", r)
		}
		if r[col["consumer_cpu_s"]] == "-1" {
			t.Fatalf("consumer CPU missing in child-process mode: %v", r)
		}
	}
	summary, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil || !bytes.Contains(summary, []byte("## Targets")) {
		t.Fatalf("summary.md missing or without targets: %v", err)
	}
	for _, f := range []string{"gbps_tail.png", "gbps_catchup.svg", "cpu_per_gb_tail.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
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

// shiftSender sends the wrong bytes (one byte later), as a buggy read path
// would; verification must catch it.
type shiftSender struct{ regionSender }

func (s shiftSender) send(c net.Conn, seg *segment, off, n int64) (int64, error) {
	if off+1+n <= seg.size {
		off++
	} else {
		off--
	}
	return s.regionSender.send(c, seg, off, n)
}

func TestVerificationCatchesWrongBytes(t *testing.T) {
	cfg := tinyConfig(t)
	cfg.inproc = true
	e := &experiment{cfg: cfg, progress: newProgress(io.Discard, 0, false)}
	ds, err := writeDataset(t.TempDir(), cfg.catchupBytes, cfg.segmentBytes, func(int64) {})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.close()
	e.ds = ds
	streams := ds.streams(0, ds.total/2, 2, 1, true)
	res := result{runSpec: runSpec{workload: workloadCatchup, path: pathSendfile, consumers: 2}}
	err = e.measure(context.Background(), &res, streams, shiftSender{})
	if err == nil || !strings.Contains(err.Error(), "wrong bytes") {
		t.Fatalf("a path sending shifted bytes passed verification: %v", err)
	}
}

// Streams partition the range exactly, start on pages, and their expected
// hash is the hash of the bytes on disk (the generator and the files agree).
func TestStreamsPartitionRangeAndMatchFiles(t *testing.T) {
	ds, err := writeDataset(t.TempDir(), 5<<20+8192, 2<<20, func(int64) {})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.close()
	start, end := int64(4096), ds.total
	streams := ds.streams(start, end, 3, 2, true)
	var sum int64
	for i, st := range streams {
		sum += st.bytes
		h := xxhash.New()
		for range st.passes {
			for _, p := range st.pieces {
				b := make([]byte, p.len)
				if _, err := p.seg.f.ReadAt(b, p.off); err != nil {
					t.Fatal(err)
				}
				h.Write(b)
			}
		}
		if h.Sum64() != st.hash {
			t.Fatalf("stream %d: expected hash does not match the files", i)
		}
		if (ds.pieces(0, ds.total)[0].seg.base+st.pieces[0].off)%alignBytes != 0 && i > 0 {
			t.Fatalf("stream %d starts off a page boundary", i)
		}
	}
	if sum != end-start {
		t.Fatalf("streams cover %d bytes, want %d", sum, end-start)
	}
}

func TestLocateStaysInsidePieces(t *testing.T) {
	a, b := &segment{size: 100}, &segment{size: 100}
	st := stream{pieces: []piece{{a, 40, 60}, {b, 0, 30}}, bytes: 90, passes: 2}
	cases := []struct {
		pos, max       int64
		seg            *segment
		wantOff, wantN int64
	}{
		{0, 1000, a, 40, 60},
		{59, 10, a, 99, 1},
		{60, 1000, b, 0, 30},
		{95, 10, a, 45, 10}, // second pass
		{180, 10, nil, 0, 0},
	}
	for _, c := range cases {
		p, off, n := st.locate(c.pos, c.max)
		if p.seg != c.seg || off != c.wantOff || n != c.wantN {
			t.Errorf("locate(%d,%d) = (%p,%d,%d), want (%p,%d,%d)", c.pos, c.max, p.seg, off, n, c.seg, c.wantOff, c.wantN)
		}
	}
}

func TestParseSize(t *testing.T) {
	cases := map[string]int64{"4GiB": 4 << 30, "64MiB": 64 << 20, "300KiB": 300 << 10, "1e6": 1e6, "2GB": 2e9, "512": 512}
	for s, want := range cases {
		if got, err := parseSize(s); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "x", "-1MiB", "MiB"} {
		if _, err := parseSize(s); err == nil {
			t.Errorf("parseSize(%q) accepted", s)
		}
	}
}

// failSender fails after part of a response, like a segment truncated
// during a send.
type failSender struct{ regionSender }

func (s failSender) send(c net.Conn, seg *segment, off, n int64) (int64, error) {
	m, _ := s.regionSender.send(c, seg, off, n/2)
	return m, io.ErrUnexpectedEOF
}

// A failed send closes the consumer's connection (Kafka does the same), so
// the run fails promptly instead of waiting for bytes that never come.
func TestFailingPathFailsFast(t *testing.T) {
	cfg := tinyConfig(t)
	e := &experiment{cfg: cfg, progress: newProgress(io.Discard, 0, false)}
	ds, err := writeDataset(t.TempDir(), cfg.catchupBytes, cfg.segmentBytes, func(int64) {})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.close()
	e.ds = ds
	done := make(chan error, 1)
	go func() {
		res := result{runSpec: runSpec{workload: workloadCatchup, path: pathSendfile, consumers: 2}}
		done <- e.measure(context.Background(), &res, ds.streams(0, ds.total, 2, 1, true), failSender{})
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a failing path passed")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run hung after a failed send")
	}
}
