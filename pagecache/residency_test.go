package pagecache

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// skipOrFail skips when the kernel or file system refuses a page-cache
// operation, except under CI=true, where an environment that cannot run the
// test is itself a failure.
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// newDiskFile writes n random bytes to a file in the test's temp dir and
// returns it open read-write (so DropCache may fdatasync it).
func newDiskFile(t *testing.T, n int) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "seg.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.Write(randomBytes(20, n)); err != nil {
		t.Fatal(err)
	}
	return f
}

// Kafka's read path relies on the page cache: a catch-up consumer is one
// whose data was evicted. DropCache (fdatasync + DONTNEED) must evict, and
// reading the file must bring it back, or no experiment can tell tail reads
// from catch-up reads.
func TestResidencyAfterDropAndRead(t *testing.T) {
	const size = 8 << 20
	f := newDiskFile(t, size)
	page := int64(os.Getpagesize())

	res, total, err := Residency(f, 0, size)
	if err != nil {
		t.Fatal(err)
	}
	if total != size/page {
		t.Fatalf("total = %d pages, want %d", total, size/page)
	}
	t.Logf("just written: %d/%d resident", res, total)

	if err := DropCache(f, 0, 0); err != nil {
		skipOrFail(t, "kernel refused eviction: %v", err)
	}
	res, _, err = Residency(f, 0, size)
	if err != nil {
		t.Fatal(err)
	}
	if float64(res) > 0.02*float64(total) {
		skipOrFail(t, "after fdatasync+DONTNEED %d/%d pages still resident: this kernel or file system does not evict", res, total)
	}

	if _, err := io.Copy(io.Discard, io.NewSectionReader(f, 0, size)); err != nil {
		t.Fatal(err)
	}
	res, _, err = Residency(f, 0, size)
	if err != nil {
		t.Fatal(err)
	}
	if float64(res) < 0.98*float64(total) {
		t.Fatalf("after reading the whole file only %d/%d pages resident", res, total)
	}
}

// Catch-up readers can ask for data ahead of use (Kafka has no such hint;
// this is one of the things Varve measures). Readahead and WillNeed must
// make an evicted range resident again.
func TestReadaheadAndWillNeed(t *testing.T) {
	const size = 4 << 20
	for _, tc := range []struct {
		name string
		fn   func(*os.File) error
	}{
		{"readahead", func(f *os.File) error { return Readahead(f, 0, size) }},
		{"willneed", func(f *os.File) error { return Advise(f, 0, size, WillNeed) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newDiskFile(t, size)
			if err := DropCache(f, 0, 0); err != nil {
				skipOrFail(t, "kernel refused eviction: %v", err)
			}
			if res, _, _ := Residency(f, 0, size); res > 0 {
				skipOrFail(t, "%d pages resident after eviction", res)
			}
			if err := tc.fn(f); err != nil {
				t.Fatal(err)
			}
			waitResident(t, f, size, 0.9)
		})
	}
}

// waitResident polls until at least frac of f's first n bytes are resident;
// the hints start I/O that completes asynchronously.
func waitResident(t *testing.T, f *os.File, n int64, frac float64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, total, err := Residency(f, 0, n)
		if err != nil {
			t.Fatal(err)
		}
		if float64(res) >= frac*float64(total) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d/%d pages resident after the hint", res, total)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Residency counts pages, widening to page boundaries and clamping to the
// file's size, so a partial range is counted the way mincore sees it.
func TestResidencyRangeArithmetic(t *testing.T) {
	page := int64(os.Getpagesize())
	f := newDiskFile(t, int(10*page+100))
	cases := []struct {
		off, n, want int64
	}{
		{0, 1, 1},
		{page - 1, 2, 2},
		{0, 10*page + 100, 11},
		{5 * page, 1 << 40, 6},
		{20 * page, 10, 0},
		{0, 0, 0},
	}
	for _, c := range cases {
		_, total, err := Residency(f, c.off, c.n)
		if err != nil || total != c.want {
			t.Errorf("Residency(%d,%d) total = %d, %v; want %d", c.off, c.n, total, err, c.want)
		}
	}
}

// Files larger than one mapping window are measured window by window.
func TestResidencyLargerThanWindow(t *testing.T) {
	size := int64(residencyWindow + 3<<20)
	f := newDiskFile(t, 1)
	if err := f.Truncate(size); err != nil { // sparse: no disk, all holes
		t.Fatal(err)
	}
	_, total, err := Residency(f, 0, size)
	if err != nil {
		t.Fatal(err)
	}
	if want := size / int64(os.Getpagesize()); total != want {
		t.Fatalf("total = %d, want %d", total, want)
	}
}

func TestAdviseClosedFile(t *testing.T) {
	f := newDiskFile(t, 10)
	f.Close()
	if err := Advise(f, 0, 0, Sequential); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Advise on closed file: %v", err)
	}
	if _, _, err := Residency(f, 0, 10); err == nil {
		t.Fatal("Residency on closed file succeeded")
	}
}
