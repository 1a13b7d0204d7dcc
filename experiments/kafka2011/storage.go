package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// RecordBatch v2 header fields this file reads (Kafka's DefaultRecordBatch;
// all big-endian):
//
//	offset  size  field
//	0       8     baseOffset
//	8       4     batchLength (bytes after this field)
//	16      1     magic (2)
//	57      4     recordCount
//	61            first record
const (
	batchHeaderLen   = 61
	batchLengthAt    = 8
	batchMagicAt     = 16
	batchCountAt     = 57
	batchLengthExtra = 12 // baseOffset and batchLength precede what batchLength counts
)

// errBadBatch reports a header that cannot start a RecordBatch v2.
var errBadBatch = errors.New("not a RecordBatch v2 header")

// logStats counts what a partition's .log files hold.
type logStats struct {
	batches, records, bytes int64
}

// scanLog walks the batch headers of one .log file. A zero length (the
// preallocated tail some brokers leave) or a batch that runs past the end
// (one being written) ends the scan; a header that is not magic 2 is an
// error.
func scanLog(r io.ReaderAt, size int64) (logStats, error) {
	var st logStats
	var hdr [batchHeaderLen]byte
	for pos := int64(0); pos+batchHeaderLen <= size; {
		if _, err := r.ReadAt(hdr[:], pos); err != nil {
			return st, fmt.Errorf("batch header at %d: %w", pos, err)
		}
		length := int64(int32(binary.BigEndian.Uint32(hdr[batchLengthAt:])))
		if length == 0 || pos+batchLengthExtra+length > size {
			break // preallocated zeros, or a batch still being written
		}
		if hdr[batchMagicAt] != 2 || length < batchHeaderLen-batchLengthExtra {
			return st, fmt.Errorf("at %d (length %d, magic %d): %w", pos, length, hdr[batchMagicAt], errBadBatch)
		}
		st.batches++
		st.records += int64(int32(binary.BigEndian.Uint32(hdr[batchCountAt:])))
		st.bytes += batchLengthExtra + length
		pos += batchLengthExtra + length
	}
	return st, nil
}

// scanPartition sums scanLog over every .log file in dir, in offset order.
func scanPartition(dir string) (logStats, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return logStats{}, err
	}
	sort.Strings(names)
	var total logStats
	for _, name := range names {
		st, err := scanFile(name)
		if err != nil {
			return total, err
		}
		total.batches += st.batches
		total.records += st.records
		total.bytes += st.bytes
	}
	if len(names) == 0 {
		return total, fmt.Errorf("scan %s: no .log files", dir)
	}
	return total, nil
}

func scanFile(name string) (logStats, error) {
	f, err := os.Open(name)
	if err != nil {
		return logStats{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return logStats{}, err
	}
	st, err := scanLog(f, fi.Size())
	if err != nil {
		return st, fmt.Errorf("scan %s: %w", name, err)
	}
	return st, nil
}

// partitionDir finds the directory of partition 0 of topic under any of
// the comma-separated log dirs.
func partitionDir(logDirs, topic string) (string, error) {
	for _, d := range strings.Split(logDirs, ",") {
		p := filepath.Join(d, topic+"-0")
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("partition %s-0 not found under %s", topic, logDirs)
}

// diskUsage is the space allocated to the files under dir (st_blocks, so
// a sparse, preallocated index counts only what it uses).
func diskUsage(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) { // a file deleted while we walk
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			total += st.Blocks * 512
		}
		return nil
	})
	if err != nil {
		return total, fmt.Errorf("disk usage of %s: %w", dir, err)
	}
	return total, nil
}
