package compaction_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/varve/varve/compaction"
	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

// Kafka (C7, LocalLog.replaceSegments + LogLoader): a crash at any step
// of the swap (.cleaned -> .swap, old -> .deleted, .swap -> live, the
// delayed deletes, the checkpoint) leaves, after reopening, the old
// segments or the new ones: no record lost, no offset twice, no .cleaned
// or .swap file left. Each run lets k file operations (renames and
// removes) succeed and fails the rest, for k = 0 .. all of them, then
// forgets unsynced bytes and reopens the directory.
func TestCrashAtEveryStepOfTheSwap(t *testing.T) {
	for _, tc := range []struct {
		name         string
		segmentBytes int64
		groups       int
	}{
		{"one group", 1 << 20, 1},
		{"three groups", 1300, 3}, // segments are about 600 bytes
	} {
		t.Run(tc.name, func(t *testing.T) {
			seed := filepath.Join(t.TempDir(), "seed-0")
			writeCrashLog(t, seed, tc.segmentBytes)
			pre := snapshotRecords(t, seed, tc.segmentBytes)
			post, nOps, st := cleanCopy(t, seed, tc.segmentBytes, -1)
			if nOps < 4 || st.SegmentsWritten != tc.groups {
				t.Fatalf("a successful pass made %d file operations and %d segments, expected at least 4 and %d", nOps, st.SegmentsWritten, tc.groups)
			}
			for k := 0; k <= nOps; k++ {
				got, _, _ := cleanCopy(t, seed, tc.segmentBytes, k)
				checkCrashOutcome(t, k, pre, post, got, tc.segmentBytes >= 1<<20)
			}
		})
	}
}

// writeCrashLog writes 6 sealed segments of keyed records with
// duplicates across segments, tombstones and mixed codecs, plus an
// active segment, and closes the log.
func writeCrashLog(t *testing.T, dir string, segmentBytes int64) {
	cfg := logConfig()
	cfg.SegmentBytes = segmentBytes
	l := openLog(t, dir, cfg)
	codecs := []record.Compression{record.CompressionNone, record.CompressionLZ4, record.CompressionZstd}
	for s := range 6 {
		for b := range 4 {
			var recs []kv
			for i := range 5 {
				k := fmt.Sprint("key-", (s*7+b*3+i)%11)
				if (s+b+i)%9 == 0 {
					recs = append(recs, tomb(k))
				} else {
					recs = append(recs, rec(k, fmt.Sprint("v", s, b, i)))
				}
			}
			appendKV(t, l, codecs[(s+b)%3], t0, recs...)
		}
		roll(t, l)
	}
	appendKV(t, l, record.CompressionNone, t0, rec("key-1", "active"))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// snapshotRecords reads a copy of the log.
func snapshotRecords(t *testing.T, seed string, segmentBytes int64) []stored {
	dir := filepath.Join(t.TempDir(), "copy-0")
	segmenttest.CopyDir(t, seed, dir)
	cfg := logConfig()
	cfg.SegmentBytes = segmentBytes
	l := openLog(t, dir, cfg)
	defer l.Close()
	return readAll(t, l)
}

// cleanCopy cleans a copy of seed through a FaultFS that lets failAfter
// file operations succeed (all of them when negative), crashes without
// closing, reopens and returns what the log holds then, with the number
// of operations the pass made.
func cleanCopy(t *testing.T, seed string, segmentBytes int64, failAfter int) ([]stored, int, compaction.Stats) {
	dir := filepath.Join(t.TempDir(), "crash-0")
	segmenttest.CopyDir(t, seed, dir)
	fs := segmenttest.NewFaultFS()
	cfg := logConfig()
	cfg.SegmentBytes = segmentBytes
	cfg.FS = fs
	cfg.FileDeleteDelay = time.Millisecond
	l := openLog(t, dir, cfg)
	before := len(fs.Ops())
	if failAfter >= 0 {
		fs.FailOpsAfter(int64(failAfter))
	}
	cc := compaction.DefaultConfig()
	cc.Logger = quiet
	st, err := compaction.Clean(l, cc, t0)
	if failAfter < 0 && err != nil {
		t.Fatalf("pass without faults: %v", err)
	}
	waitForOps(fs) // the delayed deletes of the old segments
	n := len(fs.Ops()) - before
	if err := fs.Crash(); err != nil { // l is abandoned, never closed
		t.Fatal(err)
	}
	cfg = logConfig()
	cfg.SegmentBytes = segmentBytes
	l2 := openLog(t, dir, cfg)
	defer l2.Close()
	for _, suffix := range []string{segment.CleanedSuffix, segment.SwapSuffix} {
		if left := filesWithSuffix(t, dir, suffix); len(left) > 0 {
			t.Fatalf("failAfter=%d: %v left after reopening", failAfter, left)
		}
	}
	got, err := readAllErr(l2)
	if err != nil {
		t.Fatalf("failAfter=%d: read after reopening: %v", failAfter, err)
	}
	return got, n, st
}

// checkCrashOutcome checks one reopened log against the log before and
// after a successful pass.
func checkCrashOutcome(t *testing.T, k int, pre, post, got []stored, exact bool) {
	t.Helper()
	byOffset := map[int64]stored{}
	for _, r := range pre {
		byOffset[r.Offset] = r
	}
	for _, r := range got { // nothing invented, offsets and content unchanged
		o, ok := byOffset[r.Offset]
		if !ok || string(o.Key) != string(r.Key) || string(o.Value) != string(r.Value) || (o.Value == nil) != (r.Value == nil) || o.Timestamp != r.Timestamp {
			t.Fatalf("k=%d: record at %d is %q=%q, was %q=%q", k, r.Offset, r.Key, r.Value, o.Key, o.Value)
		}
	}
	gotOffsets := map[int64]bool{}
	for _, r := range got {
		gotOffsets[r.Offset] = true
	}
	for _, r := range post { // nothing the cleaning keeps is lost
		if !gotOffsets[r.Offset] {
			t.Fatalf("k=%d: record %q at %d lost", k, r.Key, r.Offset)
		}
	}
	want, have := latest(pre), latest(got)
	for key, r := range want { // every key reads its last value
		if h, ok := have[key]; !ok || h.Offset != r.Offset {
			t.Fatalf("k=%d: key %s last at %d, want %d", k, key, h.Offset, r.Offset)
		}
	}
	if exact && !sameRecords(got, pre) && !sameRecords(got, post) {
		t.Fatalf("k=%d: %d records, neither the old log (%d) nor the cleaned one (%d)", k, len(got), len(pre), len(post))
	}
}

func sameRecords(a, b []stored) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Offset != b[i].Offset {
			return false
		}
	}
	return true
}

// waitForOps waits until fs has made no new operation for 30 ms.
func waitForOps(fs *segmenttest.FaultFS) {
	n := -1
	for n != len(fs.Ops()) {
		n = len(fs.Ops())
		time.Sleep(30 * time.Millisecond)
	}
}

func filesWithSuffix(t *testing.T, dir, suffix string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), suffix) {
			out = append(out, e.Name())
		}
	}
	return out
}
