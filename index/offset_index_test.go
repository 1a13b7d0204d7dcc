package index

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Kafka: AbstractIndex preallocates a new file to
// roundDown(maxIndexSize, entrySize) and maps it; an empty index looks up
// to (baseOffset, 0).
func TestOffsetIndexNewFileIsPreallocated(t *testing.T) {
	ix := openOffset(t, 500, 1000+5)
	if got := fileSize(t, ix.Path()); got != 1000 {
		t.Fatalf("file size = %d, want 1000 (roundDown(1005, 8))", got)
	}
	if ix.MaxEntries() != 125 || ix.Entries() != 0 || ix.IsFull() {
		t.Fatalf("MaxEntries=%d Entries=%d IsFull=%v, want 125, 0, false", ix.MaxEntries(), ix.Entries(), ix.IsFull())
	}
	if got := ix.Lookup(10_000); got != (OffsetPosition{Offset: 500}) {
		t.Fatalf("Lookup on empty index = %+v, want {500 0}", got)
	}
	if ix.LastOffset() != 500 || ix.SizeBytes() != 0 {
		t.Fatalf("LastOffset=%d SizeBytes=%d, want 500, 0", ix.LastOffset(), ix.SizeBytes())
	}
}

// Kafka: the .index layout is relativeOffset int32 BE, position int32 BE;
// close trims the file to entries*8 (trimToValidSize).
func TestOffsetIndexFileBytesMatchKafkaLayout(t *testing.T) {
	const base = 1 << 40
	ix := openOffset(t, base, DefaultMaxIndexSize)
	want := []OffsetPosition{{base + 3, 4100}, {base + 70, 8300}, {base + math.MaxInt32, math.MaxInt32}}
	for _, e := range want {
		if err := ix.Append(e.Offset, e.Position); err != nil {
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
		0, 0, 0, 3, 0, 0, 0x10, 0x04,
		0, 0, 0, 70, 0, 0, 0x20, 0x6c,
		0x7f, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff,
	}
	if !bytes.Equal(got, wantBytes) {
		t.Fatalf("file bytes\n got %x\nwant %x", got, wantBytes)
	}
	if !bytes.Equal(got, encodeOffsetEntries(base, want)) {
		t.Fatal("file differs from the reference encoder")
	}
}

// Kafka: OffsetIndex.lookup returns the largest entry with offset <= target,
// or (baseOffset, 0) below the first entry.
func TestOffsetIndexLookupFloor(t *testing.T) {
	ix := openOffset(t, 100, DefaultMaxIndexSize)
	entries := appendOffsets(t, ix, 5, 10) // offsets 110..150, positions 100..500
	cases := []struct {
		target int64
		want   OffsetPosition
	}{
		{math.MinInt64, OffsetPosition{100, 0}},
		{99, OffsetPosition{100, 0}},
		{100, OffsetPosition{100, 0}},
		{109, OffsetPosition{100, 0}},
		{110, entries[0]},
		{111, entries[0]},
		{129, entries[1]},
		{130, entries[2]},
		{150, entries[4]},
		{math.MaxInt64, entries[4]},
	}
	for _, c := range cases {
		if got := ix.Lookup(c.target); got != c.want {
			t.Errorf("Lookup(%d) = %+v, want %+v", c.target, got, c.want)
		}
	}
}

// Kafka: indexSlotRangeFor searches the warm last 8192 bytes (1024 offset
// entries) first, then the cold head; both halves must give the floor.
func TestOffsetIndexLookupAcrossWarmColdBoundary(t *testing.T) {
	ix := openOffset(t, 0, DefaultMaxIndexSize)
	const n = 5000
	entries := appendOffsets(t, ix, n, 3) // offsets 3, 6, ..., 15000
	firstHot := n - 1 - warmEntries(OffsetEntrySize)
	for slot := range n {
		if slot > 20 && slot < n-20 && (slot < firstHot-20 || slot > firstHot+20) && slot%97 != 0 {
			continue // every slot near the edges and the boundary, a sample elsewhere
		}
		e := entries[slot]
		for _, d := range []int64{0, 1, 2} {
			if got := ix.Lookup(e.Offset + d); got != e {
				t.Fatalf("Lookup(%d) (slot %d, first hot slot %d) = %+v, want %+v", e.Offset+d, slot, firstHot, got, e)
			}
		}
		if want := linearOffsetFloor(0, entries, e.Offset-1); ix.Lookup(e.Offset-1) != want {
			t.Fatalf("Lookup(%d) = %+v, want %+v", e.Offset-1, ix.Lookup(e.Offset-1), want)
		}
	}
}

// Kafka: append throws InvalidOffsetException for an offset not above the
// last, IndexOffsetOverflowException outside [base, base+Int.MAX]. We also
// reject positions that do not increase.
func TestOffsetIndexAppendRejectsBadEntries(t *testing.T) {
	ix := openOffset(t, 1000, DefaultMaxIndexSize)
	if err := ix.Append(1010, 500); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name             string
		offset, position int64
		want             error
	}{
		{"same offset", 1010, 600, ErrInvalidOffset},
		{"lower offset", 1005, 600, ErrInvalidOffset},
		{"below base", 999, 600, ErrInvalidOffset},
		{"relative offset overflows int32", 1000 + math.MaxInt32 + 1, 600, ErrInvalidOffset},
		{"same position", 1011, 500, ErrInvalidPosition},
		{"lower position", 1011, 499, ErrInvalidPosition},
		{"negative position", 1011, -1, ErrInvalidPosition},
		{"position overflows int32", 1011, math.MaxInt32 + 1, ErrInvalidPosition},
	}
	for _, c := range cases {
		err := ix.Append(c.offset, c.position)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: Append(%d, %d) = %v, want %v", c.name, c.offset, c.position, err, c.want)
		}
		if err != nil && !strings.Contains(err.Error(), ix.Path()) {
			t.Errorf("%s: error %q does not name the file", c.name, err)
		}
	}
	if ix.Entries() != 1 {
		t.Fatalf("rejected appends changed the index: %d entries", ix.Entries())
	}
}

// Kafka: isFull() is entries >= maxEntries, and a full index forces a roll.
func TestOffsetIndexFullReturnsErrIndexFull(t *testing.T) {
	ix := openOffset(t, 0, 3*OffsetEntrySize+5)
	appendOffsets(t, ix, 3, 1)
	if !ix.IsFull() {
		t.Fatal("IsFull = false with 3 of 3 entries")
	}
	if err := ix.Append(10, 1000); !errors.Is(err, ErrIndexFull) {
		t.Fatalf("Append to full index = %v, want ErrIndexFull", err)
	}
}

// Kafka: truncateTo removes entries with offset >= the given offset; a
// truncation above the last entry has no effect.
func TestOffsetIndexTruncateTo(t *testing.T) {
	cases := []struct {
		to   int64
		keep int
	}{
		{1000, 4}, // above the last entry
		{41, 4},
		{40, 3}, // exact: the entry itself goes
		{35, 3}, // between: everything above goes
		{11, 1},
		{10, 0},
		{0, 0},
	}
	for _, c := range cases {
		ix := openOffset(t, 0, DefaultMaxIndexSize)
		entries := appendOffsets(t, ix, 4, 10) // 10, 20, 30, 40
		if err := ix.TruncateTo(c.to); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(entries[:c.keep], offsetEntries(ix)); diff != "" {
			t.Errorf("TruncateTo(%d) entries (-want +got):\n%s", c.to, diff)
		}
		if err := ix.Append(c.to, 10_000); err != nil { // the truncated offset can be appended again
			t.Errorf("Append(%d) after TruncateTo(%d): %v", c.to, c.to, err)
		}
	}
}

// Kafka: trimToValidSize on roll/close shrinks the file to entries*8, and a
// reopened file is taken as that many valid entries.
func TestOffsetIndexTrimAndReopenGiveSameEntries(t *testing.T) {
	ix := openOffset(t, 77, DefaultMaxIndexSize)
	want := appendOffsets(t, ix, 1500, 2)
	if err := ix.TrimToValidSize(); err != nil {
		t.Fatal(err)
	}
	if got := fileSize(t, ix.Path()); got != 1500*8 {
		t.Fatalf("trimmed size = %d, want %d", got, 1500*8)
	}
	if !ix.IsFull() {
		t.Fatal("a trimmed index must be full")
	}
	path := ix.Path()
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	re, err := OpenOffsetIndex(path, 77, DefaultMaxIndexSize)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if diff := cmp.Diff(want, offsetEntries(re)); diff != "" {
		t.Fatalf("reopened entries (-want +got):\n%s", diff)
	}
	if err := re.SanityCheck(want[len(want)-1].Position + 1); err != nil {
		t.Fatalf("SanityCheck of a trimmed index: %v", err)
	}
	if re.MaxEntries() != DefaultMaxIndexSize/8 || re.IsFull() {
		t.Fatalf("reopened MaxEntries = %d IsFull = %v, want %d, false", re.MaxEntries(), re.IsFull(), DefaultMaxIndexSize/8)
	}
}

// Opening never modifies the file; the first Append that needs room grows it
// to the max size (Kafka grows the active segment with resizeIndexes).
func TestOffsetIndexReopenGrowsOnlyWhenAppending(t *testing.T) {
	path := writeFile(t, "0.index", encodeOffsetEntries(0, []OffsetPosition{{1, 10}, {2, 20}}))
	ix, err := OpenOffsetIndex(path, 0, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if got := fileSize(t, path); got != 16 {
		t.Fatalf("open changed the file size to %d", got)
	}
	if err := ix.Append(3, 30); err != nil {
		t.Fatal(err)
	}
	if got := fileSize(t, path); got != 4096 {
		t.Fatalf("size after append = %d, want 4096", got)
	}
	want := []OffsetPosition{{1, 10}, {2, 20}, {3, 30}}
	if diff := cmp.Diff(want, offsetEntries(ix)); diff != "" {
		t.Fatalf("entries (-want +got):\n%s", diff)
	}
}

// A file larger than maxIndexSize (the setting was lowered) keeps all its
// entries: resizing never drops entries.
func TestOffsetIndexOpenLargerThanMaxKeepsEntries(t *testing.T) {
	entries := []OffsetPosition{{1, 10}, {2, 20}, {3, 30}, {4, 40}}
	path := writeFile(t, "0.index", encodeOffsetEntries(0, entries))
	ix, err := OpenOffsetIndex(path, 0, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.Entries() != 4 || ix.MaxEntries() != 4 || !ix.IsFull() {
		t.Fatalf("Entries=%d MaxEntries=%d IsFull=%v, want 4, 4, true", ix.Entries(), ix.MaxEntries(), ix.IsFull())
	}
	if err := ix.Resize(8); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(entries, offsetEntries(ix)); diff != "" {
		t.Fatalf("Resize below the entries dropped some (-want +got):\n%s", diff)
	}
}

// Kafka relies on trimming: a preallocated file left untrimmed by a crash
// opens with the zero slots after the real entries counted as entries. The
// sanity check must reject it so the segment rebuilds the index.
func TestOffsetIndexUntrimmedPreallocatedFileFailsSanityCheck(t *testing.T) {
	ix := openOffset(t, 0, 4096)
	appendOffsets(t, ix, 3, 5)
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	crashed, err := os.ReadFile(ix.Path()) // what a crash leaves: 4096 bytes
	if err != nil {
		t.Fatal(err)
	}
	re, err := OpenOffsetIndex(writeFile(t, "0.index", crashed), 0, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if re.Entries() != 512 {
		t.Fatalf("Entries = %d, want 512 (every slot assumed valid, as Kafka does)", re.Entries())
	}
	err = re.SanityCheck(1 << 20)
	var ce *CorruptIndexError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCorruptIndex) {
		t.Fatalf("SanityCheck = %v, want a *CorruptIndexError", err)
	}
	if !strings.Contains(ce.Reason, "entry 3") {
		t.Fatalf("reason %q does not name the first zero slot", ce.Reason)
	}
}

// A file whose size is not a multiple of 8 opens with floor(size/8) entries;
// SanityCheck reports it (Kafka: "found N bytes which is neither positive nor
// a multiple of 8") until Reset.
func TestOffsetIndexWrongSizeOpensAndFailsSanityCheck(t *testing.T) {
	content := append(encodeOffsetEntries(0, []OffsetPosition{{4, 40}, {9, 90}}), 0xde, 0xad, 0xbe)
	path := writeFile(t, "0.index", content)
	ix, err := OpenOffsetIndex(path, 0, 1024)
	if err != nil {
		t.Fatalf("open of a 19-byte index failed: %v", err)
	}
	defer ix.Close()
	if ix.Entries() != 2 || ix.Lookup(5) != (OffsetPosition{4, 40}) {
		t.Fatalf("Entries = %d, Lookup(5) = %+v, want 2, {4 40}", ix.Entries(), ix.Lookup(5))
	}
	err = ix.SanityCheck(1000)
	if !errors.Is(err, ErrCorruptIndex) || !strings.Contains(err.Error(), "19 bytes") {
		t.Fatalf("SanityCheck = %v, want corrupt: 19 bytes", err)
	}
	if err := ix.Append(12, 120); err != nil { // the torn tail is overwritten
		t.Fatal(err)
	}
	if err := ix.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := ix.SanityCheck(1000); err != nil {
		t.Fatalf("SanityCheck after Reset: %v", err)
	}
}

// Each corruption the sanity check must find, in a file written by hand.
func TestOffsetIndexSanityCheckFindsBadEntries(t *testing.T) {
	const base = 1000
	cases := []struct {
		name    string
		entries []OffsetPosition
		logSize int64
		reason  string // "" means the index is sound
	}{
		{"sound", []OffsetPosition{{1001, 0}, {1005, 4096}, {1009, 8200}}, 8201, ""},
		{"empty", nil, 0, ""},
		{"offset decreasing", []OffsetPosition{{1005, 100}, {1003, 200}}, 1000, "entry 1: offset 1003 not above"},
		{"offset repeated", []OffsetPosition{{1005, 100}, {1005, 200}}, 1000, "entry 1: offset 1005 not above"},
		{"offset below base", []OffsetPosition{{999, 100}}, 1000, "entry 0: offset 999 below the base offset"},
		{"position decreasing", []OffsetPosition{{1001, 300}, {1002, 200}}, 1000, "entry 1: position 200 not above"},
		{"position negative", []OffsetPosition{{1001, -5}}, 1000, "entry 0: negative position"},
		{"position at log end", []OffsetPosition{{1001, 100}, {1002, 1000}}, 1000, "entry 1: position 1000 at or past the end"},
		{"position past log end", []OffsetPosition{{1001, 5000}}, 1000, "entry 0: position 5000 at or past the end"},
		{"entry in an empty log", []OffsetPosition{{1001, 0}}, 0, "entry 0: position 0 at or past the end"},
	}
	for _, c := range cases {
		path := writeFile(t, "1000.index", encodeOffsetEntries(base, c.entries))
		ix, err := OpenOffsetIndex(path, base, 4096)
		if err != nil {
			t.Fatal(err)
		}
		err = ix.SanityCheck(c.logSize)
		switch {
		case c.reason == "" && err != nil:
			t.Errorf("%s: SanityCheck = %v, want nil", c.name, err)
		case c.reason != "" && (!errors.Is(err, ErrCorruptIndex) || !strings.Contains(err.Error(), c.reason)):
			t.Errorf("%s: SanityCheck = %v, want corrupt: %q", c.name, err, c.reason)
		}
		_ = ix.Close()
	}
}

// Kafka: fetchUpperBoundOffset returns the first entry at or past
// position+fetchSize, or nothing.
func TestOffsetIndexFetchUpperBoundOffset(t *testing.T) {
	ix := openOffset(t, 0, DefaultMaxIndexSize)
	entries := appendOffsets(t, ix, 10, 10) // positions 100..1000
	if got, ok := ix.FetchUpperBoundOffset(OffsetPosition{20, 200}, 250); !ok || got != entries[4] {
		t.Fatalf("FetchUpperBoundOffset(200+250) = %+v, %v, want %+v", got, ok, entries[4])
	}
	if got, ok := ix.FetchUpperBoundOffset(OffsetPosition{20, 200}, 300); !ok || got != entries[4] {
		t.Fatalf("FetchUpperBoundOffset(200+300) = %+v, %v, want %+v (exact position)", got, ok, entries[4])
	}
	if _, ok := ix.FetchUpperBoundOffset(OffsetPosition{90, 900}, 101); ok {
		t.Fatal("FetchUpperBoundOffset past the last entry found one")
	}
}

// Kafka: reset() truncates to zero entries and resizes to maxIndexSize, which
// recovery needs before rebuilding a trimmed index.
func TestOffsetIndexResetRegrowsTrimmedIndex(t *testing.T) {
	ix := openOffset(t, 0, 800)
	appendOffsets(t, ix, 5, 1)
	if err := ix.TrimToValidSize(); err != nil {
		t.Fatal(err)
	}
	if err := ix.Reset(); err != nil {
		t.Fatal(err)
	}
	if ix.Entries() != 0 || ix.MaxEntries() != 100 || fileSize(t, ix.Path()) != 800 {
		t.Fatalf("after Reset: Entries=%d MaxEntries=%d size=%d, want 0, 100, 800", ix.Entries(), ix.MaxEntries(), fileSize(t, ix.Path()))
	}
	appendOffsets(t, ix, 100, 1)
}

// Kafka: resizeIndexes re-grows the active segment's trimmed indexes.
func TestOffsetIndexResizeAfterTrim(t *testing.T) {
	ix := openOffset(t, 0, 800)
	want := appendOffsets(t, ix, 5, 1)
	if err := ix.TrimToValidSize(); err != nil {
		t.Fatal(err)
	}
	if err := ix.Resize(1600); err != nil {
		t.Fatal(err)
	}
	if ix.MaxEntries() != 200 || fileSize(t, ix.Path()) != 1600 {
		t.Fatalf("MaxEntries=%d size=%d, want 200, 1600", ix.MaxEntries(), fileSize(t, ix.Path()))
	}
	if diff := cmp.Diff(want, offsetEntries(ix)); diff != "" {
		t.Fatalf("entries after resize (-want +got):\n%s", diff)
	}
}

// Close trims and unmaps and is idempotent; a closed index is empty and
// refuses writes. Delete removes the file and tolerates a missing one (Kafka:
// deleteIfExists).
func TestOffsetIndexCloseAndDelete(t *testing.T) {
	ix := openOffset(t, 10, DefaultMaxIndexSize)
	appendOffsets(t, ix, 3, 1)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if fileSize(t, ix.Path()) != 24 {
		t.Fatalf("Close did not trim: %d bytes", fileSize(t, ix.Path()))
	}
	if got := ix.Lookup(12); got != (OffsetPosition{Offset: 10}) || ix.Entries() != 0 {
		t.Fatalf("closed index: Lookup = %+v, Entries = %d", got, ix.Entries())
	}
	for name, err := range map[string]error{
		"Append": ix.Append(20, 1000), "TruncateTo": ix.TruncateTo(0), "Resize": ix.Resize(100),
		"Reset": ix.Reset(), "Trim": ix.TrimToValidSize(), "Flush": ix.Flush(), "SanityCheck": ix.SanityCheck(10),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s on a closed index = %v, want ErrClosed", name, err)
		}
	}
	if err := ix.Delete(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ix.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("file still there after Delete: %v", err)
	}
	if err := ix.Delete(); err != nil {
		t.Fatalf("second Delete = %v", err)
	}
}

// Kafka renames index files to add .deleted/.cleaned/.swap suffixes while the
// index stays open.
func TestOffsetIndexRenameKeepsMapping(t *testing.T) {
	ix := openOffset(t, 0, 4096)
	appendOffsets(t, ix, 2, 1)
	newPath := filepath.Join(filepath.Dir(ix.Path()), "00000000000000000000.index.deleted")
	if err := ix.Rename(newPath); err != nil {
		t.Fatal(err)
	}
	if ix.Path() != newPath {
		t.Fatalf("Path = %s, want %s", ix.Path(), newPath)
	}
	if err := ix.Append(50, 5000); err != nil {
		t.Fatal(err)
	}
	if err := ix.TrimToValidSize(); err != nil { // reopens the file by its new name
		t.Fatal(err)
	}
	if fileSize(t, newPath) != 24 {
		t.Fatalf("renamed file size = %d, want 24", fileSize(t, newPath))
	}
}

// Kafka refuses a max index size below one entry for a new file.
func TestOpenRejectsTinyMaxIndexSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.index")
	if _, err := OpenOffsetIndex(path, 0, 7); !errors.Is(err, ErrInvalidSize) {
		t.Fatalf("OpenOffsetIndex(max 7) = %v, want ErrInvalidSize", err)
	}
	if _, err := OpenTimeIndex(path, 0, 11); !errors.Is(err, ErrInvalidSize) {
		t.Fatalf("OpenTimeIndex(max 11) = %v, want ErrInvalidSize", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed open left a file behind: %v", err)
	}
}

// Entry outside [0, Entries()) is a caller bug and panics, as Kafka throws
// IllegalArgumentException.
func TestOffsetIndexEntryOutOfRangePanics(t *testing.T) {
	ix := openOffset(t, 0, 4096)
	appendOffsets(t, ix, 2, 1)
	for _, i := range []int{-1, 2, 1 << 20} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Entry(%d) did not panic", i)
				}
			}()
			ix.Entry(i)
		}()
	}
}
