package chaos_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/varve/varve/chaos"
	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// writeLog writes batches of three records each to dir, across several
// segments, and closes the log; it leaves no clean-shutdown marker or
// checkpoint of its own behind, as a node killed before any flush.
func writeLog(t *testing.T, dir string, batches int) {
	t.Helper()
	cfg := segment.DefaultConfig()
	cfg.SegmentBytes = 400
	l, err := segment.Open(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range batches {
		b := record.NewBatchBuilder(record.CompressionNone)
		for j := range 3 {
			b.Append(record.Record{Value: fmt.Appendf(nil, "v%d", 3*i+j)})
		}
		batch, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{segment.CleanShutdownFile, segment.RecoveryPointCheckpointFile, segment.LogStartOffsetCheckpointFile} {
		os.Remove(filepath.Join(dir, f))
	}
}

// Kafka keeps a log's tail in the page cache until it rolls or a flush
// policy fsyncs it (log.flush.interval.messages unset): a power failure
// takes everything past the recovery point. DropUnflushed does that to
// a log directory: the partitions of the named topic end at their
// checkpointed recovery point (0 when none is checkpointed), whole
// batches, and the log opens there with every record below it intact;
// other topics are left alone.
func TestDropUnflushedCutsEachPartitionAtItsRecoveryPoint(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"t-0", "t-1", "t2-0"} {
		writeLog(t, filepath.Join(root, p), 10)
	}
	if segs, _ := filepath.Glob(filepath.Join(root, "t-0", "*.log")); len(segs) < 3 {
		t.Fatalf("the log has %d segments; the test needs several", len(segs))
	}
	cp := "0\n3\nt 0 12\nt2 0 3\nother 1 5\n"
	if err := os.WriteFile(filepath.Join(root, "recovery-point-offset-checkpoint"), []byte(cp), 0o644); err != nil {
		t.Fatal(err)
	}
	dropped, err := chaos.DropUnflushed(root, "t")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(dropped) != "[p0 [12,30) p1 [0,30)]" {
		t.Fatalf("dropped %v", dropped)
	}
	for p, want := range map[string]int64{"t-0": 12, "t-1": 0, "t2-0": 30} {
		l, err := segment.Open(filepath.Join(root, p), segment.DefaultConfig())
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if l.EndOffset() != want {
			t.Errorf("%s ends at %d after the drop, want %d", p, l.EndOffset(), want)
		}
		for off := int64(0); off < want; off += 3 {
			b, err := l.ReadBytes(off, 1<<10)
			if err != nil {
				t.Fatalf("%s offset %d: %v", p, off, err)
			}
			for rec, err := range record.Records(b) {
				if err != nil || string(rec.Value) != fmt.Sprintf("v%d", rec.Offset) {
					t.Fatalf("%s offset %d: %q %v", p, rec.Offset, rec.Value, err)
				}
				break
			}
		}
		l.Close()
	}
}
