package diskmodel

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// testOpts keeps a calibration in a test short: small file, small budget.
var testOpts = Options{Quick: true, FileSize: 4 << 20, Duration: 20 * time.Millisecond}

// checkPlausible checks bounds that any real disk, page cache or tmpfs
// meets by orders of magnitude, so the test cannot flake on a busy machine:
// it catches unit mistakes and broken measurements, not slow disks.
func checkPlausible(t *testing.T, c Calibration) {
	t.Helper()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]float64{
		"SeqWriteBps": c.SeqWriteBps, "PageCacheWriteBps": c.PageCacheWriteBps,
		"SeqReadBps": c.SeqReadBps, "ColdBufferedReadBps": c.ColdBufferedReadBps,
		"PageCacheReadBps": c.PageCacheReadBps,
	} {
		if v < 1e5 || v > 1e12 || math.IsNaN(v) {
			t.Errorf("%s = %.3g B/s, outside 100 kB/s..1 TB/s", name, v)
		}
	}
	for name, v := range map[string]time.Duration{
		"Fsync4K": c.Fsync4K, "Fsync1M": c.Fsync1M, "RandRead4K": c.RandRead4K,
	} {
		if v < 100*time.Nanosecond || v > 10*time.Second {
			t.Errorf("%s = %v, outside 100ns..10s", name, v)
		}
	}
	if c.Fsync4KP99 < c.Fsync4K || c.Fsync1MP99 < c.Fsync1M || c.RandRead4KP99 < c.RandRead4K {
		t.Errorf("a p99 is below its median: %+v", c)
	}
	// Copying resident pages is never much slower than fetching them from
	// a device. On tmpfs the "device" reads are memory copies too, and which
	// of two memory copies wins on a busy machine is noise: skip it there.
	if c.ColdResident < 0.5 && c.PageCacheReadBps < 0.5*c.SeqReadBps {
		t.Errorf("PageCacheReadBps %.3g < half of SeqReadBps %.3g", c.PageCacheReadBps, c.SeqReadBps)
	}
	if c.ReadMethod != MethodDirect && c.ReadMethod != MethodFadvise {
		t.Errorf("ReadMethod = %q", c.ReadMethod)
	}
	for _, f := range figures {
		if r := c.Runs[f.run]; r.N < minSeqReps || !(r.Min <= r.Median && r.Median <= r.Max) {
			t.Errorf("run %s = %+v: too few samples or unordered", f.run, r)
		}
	}
}

// checkEmpty fails if dir holds anything: Calibrate must leave nothing.
func checkEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("calibration left %d entries in %s, first %s", len(entries), dir, entries[0].Name())
	}
}

func TestCalibrateQuick(t *testing.T) {
	dir := t.TempDir()
	c, err := Calibrate(context.Background(), dir, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	checkPlausible(t, c)
	checkEmpty(t, dir)
	dev, _ := deviceOf(dir)
	if c.Device != dev || c.FileSize != testOpts.FileSize || !c.Quick || c.Dir != dir {
		t.Errorf("identity: %+v", c)
	}
	// The seq-write figure is the same group as FsyncLatency's last point.
	if got, want := c.FsyncLatency(c.FileSize), c.PredictSequentialWrite(c.FileSize); got+time.Microsecond < want {
		t.Errorf("FsyncLatency(FileSize) %v < PredictSequentialWrite %v", got, want)
	}
}

func TestCalibrateWithoutDirectIO(t *testing.T) {
	dir := t.TempDir()
	opts := testOpts
	opts.DisableDirectIO = true
	c, err := Calibrate(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if c.ReadMethod != MethodFadvise {
		t.Fatalf("ReadMethod = %q, want %q", c.ReadMethod, MethodFadvise)
	}
	checkPlausible(t, c)
	checkEmpty(t, dir)
}

// On tmpfs the pages are the data: fadvise(DONTNEED) cannot drop them, and
// the calibration must say so (ColdResident near 1) instead of pretending a
// device was read. Older kernels also refuse O_DIRECT there; either method
// is fine, failing is not.
func TestCalibrateTmpfs(t *testing.T) {
	const shm = "/dev/shm"
	var st unix.Statfs_t
	if err := unix.Statfs(shm, &st); err != nil || st.Type != unix.TMPFS_MAGIC {
		t.Skip("no tmpfs at " + shm)
	}
	dir, err := os.MkdirTemp(shm, "diskmodel-test-*")
	if err != nil {
		t.Skip(err)
	}
	defer os.RemoveAll(dir)
	c, err := Calibrate(context.Background(), dir, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	checkPlausible(t, c)
	checkEmpty(t, dir)
	if c.FSType != "tmpfs" || c.ColdResident < 0.9 {
		t.Fatalf("tmpfs: FSType %q, ColdResident %.2f; want tmpfs and ~1", c.FSType, c.ColdResident)
	}
	if !strings.Contains(c.String(), "stayed in memory") {
		t.Fatalf("String() does not warn that tmpfs cold reads are memory reads:\n%s", c)
	}
}

func TestCalibrateReportsEviction(t *testing.T) {
	dir := t.TempDir()
	if fsType(dir) != "ext4" && fsType(dir) != "xfs" {
		t.Skip("eviction is only known to work on ext4 and xfs; here " + fsType(dir))
	}
	c, err := Calibrate(context.Background(), dir, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	if c.ColdResident > 0.1 {
		t.Fatalf("ColdResident = %.2f after fdatasync+DONTNEED on %s, want ~0", c.ColdResident, c.FSType)
	}
}

// cancelAfter is a context whose Err turns to Canceled after n calls, so a
// test can cancel a calibration at a chosen point without timing.
type cancelAfter struct {
	context.Context
	n atomic.Int64
}

func (c *cancelAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// checks counts the ctx.Err calls of one calibration with opts.
func checks(t *testing.T, opts Options) int64 {
	ctx := &cancelAfter{Context: context.Background()}
	ctx.n.Store(math.MaxInt64)
	if _, err := Calibrate(ctx, t.TempDir(), opts); err != nil {
		t.Fatal(err)
	}
	return math.MaxInt64 - ctx.n.Load()
}

func TestCalibrateCancelledRemovesEverything(t *testing.T) {
	// A budget of 1ns makes every measurement stop at its minimum count,
	// so the number of ctx checks is the same from run to run and each
	// cancellation point below falls inside the calibration.
	opts := testOpts
	opts.Duration = time.Nanosecond
	total := checks(t, opts)
	for i := range int64(8) {
		n := i * total / 8
		dir := t.TempDir()
		ctx := &cancelAfter{Context: context.Background()}
		ctx.n.Store(n)
		_, err := Calibrate(ctx, dir, opts)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancel after %d of %d checks: err %v, want context.Canceled", n, total, err)
		}
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Errorf("cancel after %d checks: %v is not an *Error naming the step", n, err)
		}
		checkEmpty(t, dir)
	}
}

func TestCalibrateMissingDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "absent")
	if _, err := Calibrate(context.Background(), dir, testOpts); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got %v, want ErrNotExist", err)
	}
}

func TestLoadOrCalibrateReplacesCorruptCache(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, CacheFileName), []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadOrCalibrate(context.Background(), dir, time.Hour, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	checkPlausible(t, c)
	loaded, ok, err := Load(dir, time.Hour)
	if !ok || err != nil || loaded.Taken != c.Taken {
		t.Fatalf("after recalibration Load: ok=%v err=%v taken %v vs %v", ok, err, loaded.Taken, c.Taken)
	}
}

func TestStringNamesEveryFigure(t *testing.T) {
	c, err := Calibrate(context.Background(), t.TempDir(), testOpts)
	if err != nil {
		t.Fatal(err)
	}
	s := c.String()
	for _, want := range append([]string{c.ReadMethod, c.FSType, "quick", "MB/s"}, labels()...) {
		if !strings.Contains(s, want) {
			t.Errorf("String() lacks %q:\n%s", want, s)
		}
	}
}

func labels() []string {
	var out []string
	for _, f := range figures {
		out = append(out, f.label)
	}
	return out
}

// Where the file system refuses O_DIRECT, open(2) or the first read fails
// with EINVAL (or EOPNOTSUPP); those, and only those, select the fallback.
func TestDirectRefused(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&os.PathError{Op: "open", Path: "f", Err: unix.EINVAL}, true},
		{&os.PathError{Op: "read", Path: "f", Err: unix.EOPNOTSUPP}, true},
		{&os.PathError{Op: "open", Path: "f", Err: unix.EACCES}, false},
		{nil, false},
	} {
		if got := directRefused(tc.err); got != tc.want {
			t.Errorf("directRefused(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
