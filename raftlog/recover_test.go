package raftlog

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/varve/varve/segment"
)

// segmentsOf lists the .log files in dir.
func segmentsOf(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*"+segment.LogSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// Recovery step 3: a segment that a truncation removed but whose removal
// did not reach the disk is dropped at Open, whether a gap or a lower
// term shows it cannot follow the log.
// Kafka: KIP-101, entries past a divergence point are truncated.
func TestOpenDropsStaleTail(t *testing.T) {
	for _, c := range []struct {
		name     string
		newLast  uint64 // the overwrite writes 8..newLast in term 2
		wantLast uint64
	}{
		{"gap", 8, 8},        // 1..7 t1, 8 t2, then stale 10.. (9 missing)
		{"lower_term", 9, 9}, // 1..7 t1, 8..9 t2, then stale 10.. t1
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			st, err := Open(dir, Options{SegmentBytes: 300, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Append(ents(1, 14, 1)); err != nil {
				t.Fatal(err)
			}
			stale := map[string][]byte{}
			for _, p := range segmentsOf(t, dir) {
				if b, _ := os.ReadFile(p); len(b) > 0 {
					stale[p] = b
				}
			}
			if err := st.Append(ents(8, c.newLast, 2)); err != nil {
				t.Fatal(err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			// The removed segments come back, as after a crash that lost
			// their renames; the one the log kept keeps its new content.
			kept := map[string]bool{}
			for _, p := range segmentsOf(t, dir) {
				kept[p] = true
			}
			restored := 0
			for p, b := range stale {
				if !kept[p] {
					if err := os.WriteFile(p, b, 0o644); err != nil {
						t.Fatal(err)
					}
					restored++
				}
			}
			if restored == 0 {
				t.Fatal("the overwrite removed no segment; the test needs one")
			}
			re, err := Open(dir, Options{SegmentBytes: 300, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			defer re.Close()
			last, _ := re.LastIndex()
			term, _ := re.Term(last)
			if last != c.wantLast || term != 2 {
				t.Fatalf("last entry %d/%d, want %d/2", last, term, c.wantLast)
			}
			if _, err := re.Entries(1, last+1, 1<<30); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Recovery step 5: a hard state that commits past the log is corruption,
// never the result of a crash (entries are persisted before the hard
// state that commits them).
func TestOpenRejectsCommitPastLog(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(dir, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := must(st.Append(ents(1, 3, 1)), st.SetHardState(newHardState(1, 1, 9)), st.Close()); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{Logger: quiet}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open with commit 9 past last index 3: %v, want ErrCorrupt", err)
	}
}
