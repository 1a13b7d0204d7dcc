package compaction_test

import (
	"testing"

	"github.com/varve/varve/compaction"
	"github.com/varve/varve/segment"
)

// Kafka: the cleaner keeps the last record of every key (C3), keeps
// offsets (C1) and order (C2), and drops superseded records.
func TestCleanKeepsLastValueOfEachKey(t *testing.T) {
	l := openLog(t, t.TempDir(), segment.Config{})
	defer l.Close()
	appendKV(t, l, segment.CompressionNone, t0, rec("a", "1"), rec("b", "1"))
	appendKV(t, l, segment.CompressionNone, t0, rec("a", "2"), rec("c", "1"))
	roll(t, l)
	appendKV(t, l, segment.CompressionNone, t0, rec("b", "2"))
	roll(t, l)
	st, err := compaction.Clean(l, compaction.Config{}, t0)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(st)
	got := readAll(t, l)
	var offs []int64
	for _, r := range got {
		offs = append(offs, r.Offset)
	}
	want := []int64{2, 3, 4} // a=2 at 2, c=1 at 3, b=2 at 4
	if len(offs) != len(want) {
		t.Fatalf("offsets %v, want %v", offs, want)
	}
	for i := range want {
		if offs[i] != want[i] {
			t.Fatalf("offsets %v, want %v", offs, want)
		}
	}
}
