package diskmodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// futureSlack tolerates small clock steps: a cache "taken" this far in the
// future is still accepted.
const futureSlack = time.Minute

// deviceOf returns the st_dev of path: the cache key.
func deviceOf(path string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, wrap("stat", path, err)
	}
	return uint64(st.Dev), nil // st.Dev is not uint64 on every platform
}

// hostname is os.Hostname, or "" when it is unknown.
func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return ""
	}
	return h
}

// Load reads the cached calibration in dir (dir/.diskmodel.json). ok is
// false, with a nil error, when the file is missing, was written by another
// version of this package, was taken on another device or host, or is older
// than maxAge (maxAge <= 0 means DefaultMaxAge). A file that exists but does
// not parse or holds invalid figures gives ok=false and an error wrapping
// ErrCorruptCache.
func Load(dir string, maxAge time.Duration) (Calibration, bool, error) {
	path := filepath.Join(dir, CacheFileName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Calibration{}, false, nil
	}
	if err != nil {
		return Calibration{}, false, wrap("load", path, err)
	}
	var c Calibration
	if err := json.Unmarshal(data, &c); err != nil {
		return Calibration{}, false, wrap("load", path, fmt.Errorf("%w: %w", ErrCorruptCache, err))
	}
	if c.Version != cacheVersion {
		return Calibration{}, false, nil
	}
	if err := c.Validate(); err != nil {
		return Calibration{}, false, wrap("load", path, fmt.Errorf("%w: %w", ErrCorruptCache, err))
	}
	fresh, err := c.matches(dir, maxAge, time.Now())
	if err != nil || !fresh {
		return Calibration{}, false, err
	}
	return c, true, nil
}

// matches reports whether c was taken on dir's device and host, within
// maxAge of now.
func (c Calibration) matches(dir string, maxAge time.Duration, now time.Time) (bool, error) {
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	dev, err := deviceOf(dir)
	if err != nil {
		return false, err
	}
	age := now.Sub(c.Taken)
	return dev == c.Device && c.Host == hostname() && age <= maxAge && age >= -futureSlack, nil
}

// Save writes c to dir/.diskmodel.json as indented JSON, crash-safely:
// write a temp file, fsync it, rename it over the old cache, fsync dir.
func (c Calibration) Save(dir string) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return wrap("save", dir, err)
	}
	path := filepath.Join(dir, CacheFileName)
	tmp, err := writeTemp(dir, CacheFileName+".tmp-*", append(data, '\n'))
	if err != nil {
		return wrap("save", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return wrap("save", path, err)
	}
	return wrap("save", dir, syncDir(dir))
}

// writeTemp writes data to a new temp file in dir, fsyncs and closes it,
// and returns its path. On error the file is removed.
func writeTemp(dir, pattern string, data []byte) (string, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// syncDir fsyncs a directory so a rename inside it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// LoadOrCalibrate returns the cached calibration of dir if Load accepts it
// and it is at least as thorough as asked (a Quick cache does not satisfy a
// full request); otherwise it calibrates dir and saves the result there.
//
// It holds an exclusive flock on dir while it decides and measures, so
// concurrent processes (benchmarks of several packages run by one go test)
// calibrate once, one after the other, instead of disturbing each other.
func LoadOrCalibrate(ctx context.Context, dir string, maxAge time.Duration, opts Options) (Calibration, error) {
	unlock, err := lockDir(ctx, dir)
	if err != nil {
		return Calibration{}, err
	}
	defer unlock()
	c, ok, err := Load(dir, maxAge)
	if err != nil && !errors.Is(err, ErrCorruptCache) {
		return Calibration{}, err
	}
	if ok && c.satisfies(opts) {
		return c, nil
	}
	c, err = Calibrate(ctx, dir, opts)
	if err != nil {
		return Calibration{}, err
	}
	if err := c.Save(dir); err != nil {
		return Calibration{}, err
	}
	return c, nil
}

// satisfies reports whether c is thorough enough for a request with opts:
// a full calibration serves any request, a Quick one only Quick requests.
func (c Calibration) satisfies(opts Options) bool {
	return !c.Quick || opts.Quick
}

// ForTempDir is LoadOrCalibrate on os.TempDir() with DefaultMaxAge: the
// usual call of a benchmark whose files live under the temp directory
// (testing.B.TempDir).
func ForTempDir(ctx context.Context, opts Options) (Calibration, error) {
	return LoadOrCalibrate(ctx, os.TempDir(), DefaultMaxAge, opts)
}

// lockPoll is how often lockDir retries a held lock.
const lockPoll = 50 * time.Millisecond

// lockDir takes an exclusive flock on dir, polling so ctx can cancel the
// wait, and returns the function that releases it.
func lockDir(ctx context.Context, dir string) (func(), error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, wrap("lock", dir, err)
	}
	fd := int(d.Fd())
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { unix.Flock(fd, unix.LOCK_UN); d.Close() }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			d.Close()
			return nil, wrap("lock", dir, err)
		}
		select {
		case <-ctx.Done():
			d.Close()
			return nil, wrap("lock", dir, ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}
