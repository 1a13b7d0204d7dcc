package segment_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/varve/varve/segment"
)

// lostCase builds a log of the given batch counts per segment (each batch
// one record), closes it cleanly or flushes and abandons it, deletes its
// active segment, reopens it, and returns the report and the log lines.
func lostCase(t *testing.T, perSegment []int, clean bool) (segment.RecoveryReport, string, *segment.Log) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "orders-3")
	l := open(t, dir, segment.DefaultConfig())
	for i, n := range perSegment {
		if i > 0 {
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
		}
		appendN(t, l, n, 1, 20, int64(i*100))
	}
	segs := l.Segments()
	active := segs[len(segs)-1].Path
	if clean {
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	} else {
		if err := l.Flush(); err != nil {
			t.Fatal(err)
		}
		l.Abandon()
	}
	if err := os.Remove(active); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cfg := segment.DefaultConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	l2 := open(t, dir, cfg)
	t.Cleanup(func() { l2.Close() })
	return l2.Recovery(), logs.String(), l2
}

// Kafka reports nothing when a log reopens shorter than its recovery
// point; NATS' filestore reports lost stream data. A deleted active
// segment loses acknowledged records: the report names the range and an
// error is logged naming the partition.
func TestLostOffsetsReported(t *testing.T) {
	for _, tc := range []struct {
		name       string
		perSegment []int
		clean      bool
		from, to   int64
	}{
		{"only_segment_clean", []int{6}, true, 0, 6},
		{"active_of_two_clean", []int{4, 6}, true, 4, 10},
		{"active_of_two_unclean", []int{4, 6}, false, 4, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, logs, l := lostCase(t, tc.perSegment, tc.clean)
			if r.LostFrom != tc.from || r.LostTo != tc.to || r.LostOffsets() != tc.to-tc.from {
				t.Fatalf("report lost [%d, %d) (%d offsets), want [%d, %d)", r.LostFrom, r.LostTo, r.LostOffsets(), tc.from, tc.to)
			}
			if l.EndOffset() != tc.from {
				t.Fatalf("end offset %d, want %d", l.EndOffset(), tc.from)
			}
			if !strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, "orders-3") ||
				!strings.Contains(logs, "lost_from="+itoa(tc.from)) || !strings.Contains(logs, "lost_to="+itoa(tc.to)) {
				t.Fatalf("no error naming the partition and range in:\n%s", logs)
			}
		})
	}
}

// A log that lost nothing reports nothing, even after a crash that tore
// an unflushed tail (data above the recovery point was never promised).
func TestNothingLostReportsNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	l := open(t, dir, segment.DefaultConfig())
	appendN(t, l, 5, 1, 20, 1)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = open(t, dir, segment.DefaultConfig())
	defer l.Close()
	if r := l.Recovery(); r.LostOffsets() != 0 || r.LostFrom != -1 || r.LostTo != -1 {
		t.Fatalf("lost [%d, %d) on a clean reopen", r.LostFrom, r.LostTo)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// A Flush right after a Roll writes the recovery-point checkpoint while
// the flusher writes it for the rolled segment; both went through the
// same .tmp file, and one rename could find it gone ("no such file or
// directory" from Flush). The writes are serialised now.
func TestFlushAfterRollWritesTheCheckpointOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-5")
	l := open(t, dir, segment.DefaultConfig())
	defer l.Close()
	for i := range 300 {
		appendN(t, l, 1, 1, 20, int64(i))
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
		if err := l.Flush(); err != nil {
			t.Fatalf("flush %d: %v", i, err)
		}
	}
}
