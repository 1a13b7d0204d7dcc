package diskmodel

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// cachedCal is a valid calibration of dir as Calibrate would describe it,
// taken at taken, with hand figures.
func cachedCal(t *testing.T, dir string, taken time.Time) Calibration {
	t.Helper()
	dev, err := deviceOf(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := handCal()
	c.Version, c.Dir, c.Device, c.Host, c.Taken = cacheVersion, dir, dev, hostname(), taken.UTC().Round(0)
	c.Fsync4KP99, c.Fsync1MP99, c.RandRead4KP99 = 2*c.Fsync4K, 2*c.Fsync1M, 2*c.RandRead4K
	c.ReadMethod = MethodDirect
	c.Runs = map[string]Run{RunSeqWrite: {N: 3, Min: 90e6, Median: 100e6, P99: 110e6, Max: 110e6}}
	return c
}

func TestCacheRoundTrip(t *testing.T) {
	dir := t.TempDir()
	want := cachedCal(t, dir, time.Now())
	if err := want.Save(dir); err != nil {
		t.Fatal(err)
	}
	got, ok, err := Load(dir, time.Hour)
	if err != nil || !ok {
		t.Fatalf("Load after Save: ok=%v err=%v", ok, err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("round trip changed the calibration (-saved +loaded):\n%s", d)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != CacheFileName {
		t.Fatalf("Save left %v, want only %s", entries, CacheFileName)
	}
}

func TestLoadMissing(t *testing.T) {
	_, ok, err := Load(t.TempDir(), time.Hour)
	if ok || err != nil {
		t.Fatalf("missing cache: ok=%v err=%v, want false, nil", ok, err)
	}
}

func TestLoadRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		maxAge time.Duration
		edit   func(*Calibration)
	}{
		{"stale", time.Hour, func(c *Calibration) { c.Taken = c.Taken.Add(-2 * time.Hour) }},
		{"stale by the default max age", 0, func(c *Calibration) { c.Taken = c.Taken.Add(-DefaultMaxAge - time.Minute) }},
		{"from the future", time.Hour, func(c *Calibration) { c.Taken = c.Taken.Add(time.Hour) }},
		{"other device", time.Hour, func(c *Calibration) { c.Device++ }},
		{"other host", time.Hour, func(c *Calibration) { c.Host += "-elsewhere" }},
		{"other version", time.Hour, func(c *Calibration) { c.Version = cacheVersion + 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c := cachedCal(t, dir, time.Now())
			tc.edit(&c)
			if err := c.Save(dir); err != nil {
				t.Fatal(err)
			}
			if _, ok, err := Load(dir, tc.maxAge); ok || err != nil {
				t.Fatalf("ok=%v err=%v, want false, nil", ok, err)
			}
		})
	}
}

func TestLoadAcceptsWithinDefaultMaxAge(t *testing.T) {
	dir := t.TempDir()
	c := cachedCal(t, dir, time.Now().Add(-DefaultMaxAge+time.Hour))
	if err := c.Save(dir); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := Load(dir, 0); !ok || err != nil {
		t.Fatalf("23 h old with maxAge 0 (default 24 h): ok=%v err=%v", ok, err)
	}
}

func TestLoadCorrupt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, CacheFileName)
	if err := os.WriteFile(path, []byte(`{"version": 1, "seq_wr`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := Load(dir, time.Hour); ok || !errors.Is(err, ErrCorruptCache) {
		t.Fatalf("truncated JSON: ok=%v err=%v, want ErrCorruptCache", ok, err)
	}
	c := cachedCal(t, dir, time.Now())
	c.SeqReadBps = -1
	if err := c.Save(dir); err != nil {
		t.Fatal(err)
	}
	_, ok, err := Load(dir, time.Hour)
	if ok || !errors.Is(err, ErrCorruptCache) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("negative bandwidth: ok=%v err=%v, want ErrCorruptCache wrapping ErrInvalid", ok, err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Path != path {
		t.Fatalf("error %v does not name the cache file", err)
	}
}

func TestLoadOrCalibrateUsesFreshCache(t *testing.T) {
	dir := t.TempDir()
	want := cachedCal(t, dir, time.Now())
	if err := want.Save(dir); err != nil {
		t.Fatal(err)
	}
	// A cached full calibration serves a Quick request: nothing is measured,
	// so the hand figures come back unchanged.
	got, err := LoadOrCalibrate(context.Background(), dir, time.Hour, Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("LoadOrCalibrate did not return the cache (-cached +got):\n%s", d)
	}
}

func TestSatisfies(t *testing.T) {
	full, quick := Calibration{}, Calibration{Quick: true}
	if !full.satisfies(Options{}) || !full.satisfies(Options{Quick: true}) {
		t.Fatal("a full calibration must serve every request")
	}
	if quick.satisfies(Options{}) {
		t.Fatal("a Quick calibration must not serve a full request")
	}
	if !quick.satisfies(Options{Quick: true}) {
		t.Fatal("a Quick calibration must serve a Quick request")
	}
}

func TestLockDirExcludes(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*lockPoll)
	defer cancel()
	if _, err := lockDir(ctx, dir); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock while held: %v, want DeadlineExceeded", err)
	}
	unlock()
	unlock2, err := lockDir(context.Background(), dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock2()
}
