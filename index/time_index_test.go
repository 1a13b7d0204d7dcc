package index

import (
	"bytes"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Kafka: the .timeindex layout is timestamp int64 BE, relativeOffset int32 BE;
// a new file is roundDown(maxIndexSize, 12) bytes (10 MiB -> 873,813 entries).
func TestTimeIndexFileBytesMatchKafkaLayout(t *testing.T) {
	ix := openTime(t, 5000, DefaultMaxIndexSize)
	if got := fileSize(t, ix.Path()); got != 873_813*12 {
		t.Fatalf("preallocated size = %d, want %d", got, 873_813*12)
	}
	want := []TimestampOffset{{1_700_000_000_000, 5001}, {1_700_000_000_500, 5300}}
	for _, e := range want {
		if err := ix.MaybeAppend(e.Timestamp, e.Offset, false); err != nil {
			t.Fatal(err)
		}
	}
	path := ix.Path()
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wantBytes := []byte{
		0, 0, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00, 0, 0, 0, 1,
		0, 0, 0x01, 0x8b, 0xcf, 0xe5, 0x69, 0xf4, 0, 0, 0x01, 0x2c,
	}
	if !bytes.Equal(got, wantBytes) {
		t.Fatalf("file bytes\n got %x\nwant %x", got, wantBytes)
	}
	if !bytes.Equal(got, encodeTimeEntries(5000, want)) {
		t.Fatal("file differs from the reference encoder")
	}
}

// Kafka: maybeAppend writes only when the timestamp exceeds the last entry's;
// an equal one (the roll/close entry repeated) is ignored; a lower offset is
// InvalidOffsetException, a lower timestamp IllegalStateException; on an
// empty index NO_TIMESTAMP (-1) is never written.
func TestTimeIndexMaybeAppendRules(t *testing.T) {
	ix := openTime(t, 100, DefaultMaxIndexSize)
	if err := ix.MaybeAppend(NoTimestamp, 100, false); err != nil || ix.Entries() != 0 {
		t.Fatalf("MaybeAppend(NoTimestamp) = %v with %d entries, want nil, 0", err, ix.Entries())
	}
	if err := ix.MaybeAppend(50, 110, false); err != nil {
		t.Fatal(err)
	}
	if err := ix.MaybeAppend(50, 110, true); err != nil || ix.Entries() != 1 {
		t.Fatalf("repeating the last entry = %v with %d entries, want nil, 1", err, ix.Entries())
	}
	if err := ix.MaybeAppend(50, 120, false); err != nil || ix.Entries() != 1 {
		t.Fatalf("equal timestamp, higher offset = %v with %d entries, want ignored", err, ix.Entries())
	}
	if err := ix.MaybeAppend(60, 109, false); !errors.Is(err, ErrInvalidOffset) {
		t.Fatalf("lower offset = %v, want ErrInvalidOffset", err)
	}
	if err := ix.MaybeAppend(40, 130, false); !errors.Is(err, ErrInvalidTimestamp) {
		t.Fatalf("lower timestamp = %v, want ErrInvalidTimestamp", err)
	}
	if err := ix.MaybeAppend(70, 100+math.MaxInt32+1, false); !errors.Is(err, ErrInvalidOffset) {
		t.Fatalf("relative offset overflow = %v, want ErrInvalidOffset", err)
	}
	if err := ix.MaybeAppend(70, 110, false); err != nil { // same offset, later timestamp: Kafka appends
		t.Fatal(err)
	}
	want := []TimestampOffset{{50, 110}, {70, 110}}
	if diff := cmp.Diff(want, timeEntries(ix)); diff != "" {
		t.Fatalf("entries (-want +got):\n%s", diff)
	}
	if ix.LastEntry() != want[1] {
		t.Fatalf("LastEntry = %+v, want %+v", ix.LastEntry(), want[1])
	}
}

func TestTimeIndexOffsetBelowBaseOnEmptyIndex(t *testing.T) {
	ix := openTime(t, 100, DefaultMaxIndexSize)
	if err := ix.MaybeAppend(10, 99, false); !errors.Is(err, ErrInvalidOffset) {
		t.Fatalf("offset below base = %v, want ErrInvalidOffset", err)
	}
	if ix.LastEntry() != (TimestampOffset{NoTimestamp, 100}) {
		t.Fatalf("LastEntry of empty index = %+v", ix.LastEntry())
	}
}

// Kafka: TimeIndex.isFull is entries >= maxEntries-1, keeping one slot for the
// entry force-appended on roll (maybeAppend(..., skipFullCheck=true)).
func TestTimeIndexReservesLastSlotForRoll(t *testing.T) {
	ix := openTime(t, 0, 4*TimeEntrySize+11) // 4 slots
	appendTimes(t, ix, 3, 1)
	if !ix.IsFull() {
		t.Fatal("IsFull = false with 3 of 4 slots used")
	}
	if err := ix.MaybeAppend(5000, 10, false); !errors.Is(err, ErrIndexFull) {
		t.Fatalf("append into the reserved slot = %v, want ErrIndexFull", err)
	}
	if err := ix.MaybeAppend(5000, 10, true); err != nil {
		t.Fatalf("roll entry with skipFullCheck = %v", err)
	}
	if err := ix.MaybeAppend(6000, 11, true); !errors.Is(err, ErrIndexFull) {
		t.Fatalf("append past the last slot = %v, want ErrIndexFull", err)
	}
	if err := ix.MaybeAppend(5000, 10, true); err != nil {
		t.Fatalf("repeating the roll entry on a physically full index = %v, want nil", err)
	}
}

// Kafka: TimeIndex.lookup returns the largest entry with timestamp <= target,
// or (NO_TIMESTAMP, baseOffset).
func TestTimeIndexLookupFloor(t *testing.T) {
	ix := openTime(t, 10, DefaultMaxIndexSize)
	entries := appendTimes(t, ix, 2000, 2) // timestamps 1000, 1010, ...; crosses the 682-entry warm section
	cases := []struct {
		target int64
		want   TimestampOffset
	}{
		{math.MinInt64, TimestampOffset{NoTimestamp, 10}},
		{999, TimestampOffset{NoTimestamp, 10}},
		{1000, entries[0]},
		{1009, entries[0]},
		{1010, entries[1]},
		{1000 + 10*1316, entries[1316]}, // first warm slot: 2000-1-682 = 1317, so 1316 is cold
		{1000 + 10*1317, entries[1317]},
		{1000 + 10*1317 - 1, entries[1316]},
		{math.MaxInt64, entries[1999]},
	}
	for _, c := range cases {
		if got := ix.Lookup(c.target); got != c.want {
			t.Errorf("Lookup(%d) = %+v, want %+v", c.target, got, c.want)
		}
	}
}

// Kafka: TimeIndex.truncateTo removes entries with offset >= the offset.
func TestTimeIndexTruncateTo(t *testing.T) {
	for _, c := range []struct {
		to   int64
		keep int
	}{{100, 3}, {31, 3}, {30, 2}, {25, 2}, {10, 0}} {
		ix := openTime(t, 0, DefaultMaxIndexSize)
		entries := appendTimes(t, ix, 3, 10) // offsets 10, 20, 30
		if err := ix.TruncateTo(c.to); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(entries[:c.keep], timeEntries(ix)); diff != "" {
			t.Errorf("TruncateTo(%d) (-want +got):\n%s", c.to, diff)
		}
		wantLast := TimestampOffset{NoTimestamp, 0}
		if c.keep > 0 {
			wantLast = entries[c.keep-1]
		}
		if ix.LastEntry() != wantLast {
			t.Errorf("TruncateTo(%d): LastEntry = %+v, want %+v", c.to, ix.LastEntry(), wantLast)
		}
	}
}

func TestTimeIndexTrimAndReopenGiveSameEntries(t *testing.T) {
	ix := openTime(t, 3, DefaultMaxIndexSize)
	want := appendTimes(t, ix, 900, 1)
	path := ix.Path()
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if fileSize(t, path) != 900*12 {
		t.Fatalf("closed file size = %d, want %d", fileSize(t, path), 900*12)
	}
	re, err := OpenTimeIndex(path, 3, DefaultMaxIndexSize)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if diff := cmp.Diff(want, timeEntries(re)); diff != "" {
		t.Fatalf("reopened entries (-want +got):\n%s", diff)
	}
	if err := re.SanityCheck(want[len(want)-1].Offset); err != nil {
		t.Fatalf("SanityCheck: %v", err)
	}
	if err := re.MaybeAppend(1_000_000, 2000, false); err != nil {
		t.Fatalf("append after reopen: %v", err)
	}
}

// A preallocated time index left untrimmed by a crash, and one that is all
// zeros (crash before the first entry), must fail the sanity check. Kafka's
// own check passes the all-zero file; ours requires strictly increasing
// timestamps, which MaybeAppend guarantees.
func TestTimeIndexUntrimmedPreallocatedFileFailsSanityCheck(t *testing.T) {
	withEntries := make([]byte, 120)
	copy(withEntries, encodeTimeEntries(0, []TimestampOffset{{5, 1}, {9, 4}}))
	for name, content := range map[string][]byte{"entries then zeros": withEntries, "all zeros": make([]byte, 120)} {
		ix, err := OpenTimeIndex(writeFile(t, "0.timeindex", content), 0, 120)
		if err != nil {
			t.Fatal(err)
		}
		if ix.Entries() != 10 {
			t.Errorf("%s: Entries = %d, want 10", name, ix.Entries())
		}
		if err := ix.SanityCheck(100); !errors.Is(err, ErrCorruptIndex) {
			t.Errorf("%s: SanityCheck = %v, want ErrCorruptIndex", name, err)
		}
		_ = ix.Close()
	}
}

func TestTimeIndexSanityCheckFindsBadEntries(t *testing.T) {
	const base = 50
	cases := []struct {
		name       string
		content    []byte
		lastOffset int64
		reason     string
	}{
		{"sound", encodeTimeEntries(base, []TimestampOffset{{0, 50}, {7, 50}, {9, 60}}), 60, ""},
		{"empty", nil, 49, ""},
		{"wrong size", append(encodeTimeEntries(base, []TimestampOffset{{1, 51}}), 1, 2), 60, "found 14 bytes"},
		{"timestamp decreasing", encodeTimeEntries(base, []TimestampOffset{{9, 51}, {8, 52}}), 60, "entry 1: timestamp 8 not above"},
		{"timestamp repeated", encodeTimeEntries(base, []TimestampOffset{{9, 51}, {9, 52}}), 60, "entry 1: timestamp 9 not above"},
		{"offset decreasing", encodeTimeEntries(base, []TimestampOffset{{1, 55}, {2, 54}}), 60, "entry 1: offset 54 below the previous"},
		{"offset below base", encodeTimeEntries(base, []TimestampOffset{{1, 49}}), 60, "entry 0: offset 49 below the base"},
		{"offset past log", encodeTimeEntries(base, []TimestampOffset{{1, 51}, {2, 61}}), 60, "entry 1: offset 61 past the last offset"},
	}
	for _, c := range cases {
		ix, err := OpenTimeIndex(writeFile(t, "50.timeindex", c.content), base, 1200)
		if err != nil {
			t.Fatalf("%s: open: %v", c.name, err)
		}
		err = ix.SanityCheck(c.lastOffset)
		switch {
		case c.reason == "" && err != nil:
			t.Errorf("%s: SanityCheck = %v, want nil", c.name, err)
		case c.reason != "" && (!errors.Is(err, ErrCorruptIndex) || !strings.Contains(err.Error(), c.reason)):
			t.Errorf("%s: SanityCheck = %v, want corrupt: %q", c.name, err, c.reason)
		}
		_ = ix.Close()
	}
}

func TestTimeIndexResetAndDelete(t *testing.T) {
	ix := openTime(t, 0, 1200)
	appendTimes(t, ix, 4, 1)
	if err := ix.TrimToValidSize(); err != nil {
		t.Fatal(err)
	}
	if !ix.IsFull() || ix.MaxEntries() != 4 {
		t.Fatalf("trimmed: IsFull=%v MaxEntries=%d", ix.IsFull(), ix.MaxEntries())
	}
	if err := ix.Reset(); err != nil {
		t.Fatal(err)
	}
	if ix.Entries() != 0 || ix.MaxEntries() != 100 || ix.LastEntry() != (TimestampOffset{NoTimestamp, 0}) {
		t.Fatalf("after Reset: Entries=%d MaxEntries=%d LastEntry=%+v", ix.Entries(), ix.MaxEntries(), ix.LastEntry())
	}
	if err := ix.Delete(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ix.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("file still there after Delete: %v", err)
	}
	if err := ix.MaybeAppend(1, 1, true); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after Delete = %v, want ErrClosed", err)
	}
}
