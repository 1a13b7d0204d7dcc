package storage

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/varve/varve/segment"
)

// The peers are the same I/O without the log: plain pwrite/fdatasync and
// pread on files in the same directory, run just before the log's
// workload. On a shared machine the disk's speed drifts by several times
// within minutes, so a calibration taken earlier cannot tell the log's
// cost from the machine's mood; a peer measured a moment before can
// (DESIGN: compare against peers in the same run on the same machine).

// RawAppend writes chunk to a new file in dir again and again within lim
// with pwrite, with an fdatasync after every write when fsyncEach is set
// and once at the end in any case, and removes the file. It is the peer
// of Append with the same batch size and flush policy.
func RawAppend(dir string, chunk []byte, lim Limit, fsyncEach bool) (AppendRun, error) {
	f, err := os.CreateTemp(dir, "raw-append-*")
	if err != nil {
		return AppendRun{}, fmt.Errorf("storage: raw append: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	var r AppendRun
	start := time.Now()
	for !lim.done(r.Appends, r.Bytes, start) {
		if _, err := f.WriteAt(chunk, r.Bytes); err != nil {
			return r, fmt.Errorf("storage: raw append: %w", err)
		}
		if fsyncEach {
			if err := fdatasync(f); err != nil {
				return r, err
			}
		}
		r.Appends++
		r.Bytes += int64(len(chunk))
	}
	r.Write = time.Since(start)
	if err := fdatasync(f); err != nil {
		return r, err
	}
	r.Total = time.Since(start)
	return r, nil
}

func fdatasync(f *os.File) error {
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return fmt.Errorf("storage: fdatasync %s: %w", f.Name(), err)
	}
	return nil
}

// RawRead reads the .log files of dir front to back in reads of len(buf)
// bytes with pread and returns the bytes read and the time it took: the
// peer of a sequential pass (warm) and of recovery (after DropCache).
func RawRead(dir string, buf []byte) (int64, time.Duration, error) {
	logs, err := filepath.Glob(filepath.Join(dir, "*"+segment.LogSuffix))
	if err != nil {
		return 0, 0, fmt.Errorf("storage: raw read: %w", err)
	}
	var total int64
	start := time.Now()
	for _, p := range logs {
		n, err := readFile(p, buf)
		total += n
		if err != nil {
			return total, time.Since(start), err
		}
	}
	return total, time.Since(start), nil
}

func readFile(path string, buf []byte) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("storage: raw read: %w", err)
	}
	defer f.Close()
	var off int64
	for {
		n, err := f.ReadAt(buf, off)
		off += int64(n)
		if errors.Is(err, io.EOF) {
			return off, nil
		}
		if err != nil {
			return off, fmt.Errorf("storage: raw read %s: %w", path, err)
		}
	}
}
