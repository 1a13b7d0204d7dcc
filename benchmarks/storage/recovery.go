package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/varve/varve/pagecache"
	"github.com/varve/varve/segment"
)

// MakeUnclean turns the closed log in dir into one that crashed: it
// removes the clean-shutdown marker and the recovery-point checkpoint, so
// the next Open validates every batch of every segment (Kafka:
// LogLoader.recoverLog from offset 0) and rebuilds every index.
func MakeUnclean(dir string) error {
	for _, name := range []string{segment.CleanShutdownFile, segment.RecoveryPointCheckpointFile} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("storage: make %s unclean: %w", dir, err)
		}
	}
	return nil
}

// DropCache evicts the .log files of dir from the page cache (fdatasync,
// then fadvise DONTNEED) so the next read comes from the device, and
// returns the fraction of their pages still resident afterwards (near 1
// on tmpfs, where nothing can be evicted).
func DropCache(dir string) (resident float64, err error) {
	logs, err := filepath.Glob(filepath.Join(dir, "*"+segment.LogSuffix))
	if err != nil {
		return 0, fmt.Errorf("storage: drop cache of %s: %w", dir, err)
	}
	var res, total int64
	for _, p := range logs {
		r, t, err := dropFile(p)
		if err != nil {
			return 0, err
		}
		res, total = res+r, total+t
	}
	if total == 0 {
		return 0, nil
	}
	return float64(res) / float64(total), nil
}

func dropFile(path string) (resident, total int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, fmt.Errorf("storage: drop cache: %w", err)
	}
	defer f.Close()
	if err := pagecache.DropCache(f, 0, 0); err != nil {
		return 0, 0, fmt.Errorf("storage: drop cache: %w", err)
	}
	resident, total, err = pagecache.Residency(f, 0, 1<<62)
	if err != nil {
		return 0, 0, fmt.Errorf("storage: residency of %s: %w", path, err)
	}
	return resident, total, nil
}

// Resident is the fraction of the pages of dir's .log files that are in
// the page cache.
func Resident(dir string) (float64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("storage: residency of %s: %w", dir, err)
	}
	var res, total int64
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), segment.LogSuffix) {
			continue
		}
		r, t, err := residencyOf(filepath.Join(dir, e.Name()))
		if err != nil {
			return 0, err
		}
		res, total = res+r, total+t
	}
	if total == 0 {
		return 0, nil
	}
	return float64(res) / float64(total), nil
}

func residencyOf(path string) (int64, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, fmt.Errorf("storage: residency: %w", err)
	}
	defer f.Close()
	r, t, err := pagecache.Residency(f, 0, 1<<62)
	if err != nil {
		return 0, 0, fmt.Errorf("storage: residency of %s: %w", path, err)
	}
	return r, t, nil
}

// Recover opens the log in dir, which MakeUnclean prepared, times the
// Open, and checks that recovery really validated the log: every byte,
// nothing dropped. The caller closes the returned log.
func Recover(dir string, cfg segment.Config) (*segment.Log, time.Duration, error) {
	start := time.Now()
	l, err := OpenLog(dir, cfg)
	took := time.Since(start)
	if err != nil {
		return nil, took, err
	}
	rep := l.Recovery()
	switch {
	case rep.CleanShutdown:
		err = fmt.Errorf("storage: recover %s: the log opened clean; nothing was validated", dir)
	case rep.Dropped():
		err = fmt.Errorf("storage: recover %s: recovery dropped data: %s", dir, rep.Reason)
	case rep.BytesRecovered != l.Size():
		err = fmt.Errorf("storage: recover %s: validated %d of %d bytes", dir, rep.BytesRecovered, l.Size())
	}
	if err != nil {
		l.Close()
		return nil, took, err
	}
	return l, took, nil
}
