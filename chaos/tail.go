package chaos

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The files DropUnflushed reads and cuts: Kafka's names, as Varve
// writes them (DESIGN.md's on-disk format).
const (
	recoveryPointFile = "recovery-point-offset-checkpoint"
	batchPrefix       = 12 // baseOffset i64, batchLength i32
	batchHeaderBytes  = 61
	lastDeltaAt       = 23 // baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes
)

// Dropped is what DropUnflushed took from one partition: the records
// from From (its recovery point) to To (its log end before the drop).
type Dropped struct {
	Partition int32
	From, To  int64
}

func (d Dropped) String() string {
	return fmt.Sprintf("p%d [%d,%d)", d.Partition, d.From, d.To)
}

// DropUnflushed does to a stopped node's log directory what a power
// failure does to a log that was never fsynced: every partition of
// topic loses the records past its recovery point (the offset below
// which the node last fsynced it, from recovery-point-offset-checkpoint),
// whole batches at a time. Segments that start at or past the recovery
// point go, with their indexes and producer snapshots; the segment that
// holds it is cut at the first batch at or past it. Checkpoint files
// stay as they are: they are fsynced when written, so a power failure
// leaves them, and a high watermark or leader epoch checkpoint may then
// run past the log's end, as it may on a real machine.
//
// It is the fault harness's way of losing an unsynced tail: Varve has
// no setting for it, and a SIGKILL alone loses nothing (the page cache
// survives the process). It models the default flush policy
// (log.flush.interval.messages unset), under which no acknowledgement
// waits for an fsync; it must not be used on the metadata log, whose
// Raft votes and appends are fsynced before they are answered. The
// node must not be running.
func DropUnflushed(logDir, topic string) ([]Dropped, error) {
	points, err := readRecoveryPoints(filepath.Join(logDir, recoveryPointFile), topic)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(logDir)
	if err != nil {
		return nil, fmt.Errorf("chaos: drop unflushed: %w", err)
	}
	var out []Dropped
	for _, e := range entries {
		p, ok := partitionOf(e.Name(), topic)
		if !e.IsDir() || !ok {
			continue
		}
		end, err := truncatePartition(filepath.Join(logDir, e.Name()), points[p])
		if err != nil {
			return out, err
		}
		out = append(out, Dropped{Partition: p, From: min(points[p], end), To: end})
	}
	slices.SortFunc(out, func(a, b Dropped) int { return int(a.Partition - b.Partition) })
	return out, nil
}

// partitionOf parses a partition directory name of topic.
func partitionOf(name, topic string) (int32, bool) {
	rest, ok := strings.CutPrefix(name, topic+"-")
	if !ok {
		return 0, false
	}
	p, err := strconv.ParseInt(rest, 10, 32)
	return int32(p), err == nil && p >= 0
}

// readRecoveryPoints reads topic's entries of a checkpoint file (Kafka's
// text format: version 0, a count, then "topic partition offset"). A
// missing file is a log never flushed: every recovery point is 0.
func readRecoveryPoints(path, topic string) (map[int32]int64, error) {
	points := map[int32]int64{}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return points, nil
	}
	if err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 0; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if line < 2 || len(fields) != 3 || fields[0] != topic {
			continue
		}
		p, err1 := strconv.ParseInt(fields[1], 10, 32)
		off, err2 := strconv.ParseInt(fields[2], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("chaos: %s line %d: %w", path, line+1, err)
		}
		points[int32(p)] = off
	}
	return points, sc.Err()
}

// truncatePartition cuts one partition directory back to offset rp and
// returns its log end offset before the cut.
func truncatePartition(dir string, rp int64) (end int64, err error) {
	bases, err := segmentBases(dir, ".log")
	if err != nil {
		return 0, err
	}
	for _, base := range bases {
		path := filepath.Join(dir, fmt.Sprintf("%020d.log", base))
		cut, segEnd, err := scanBatches(path, rp)
		if err != nil {
			return 0, err
		}
		end = max(end, segEnd)
		switch {
		case base >= rp:
			for _, ext := range []string{".log", ".index", ".timeindex", ".txnindex"} {
				if err := os.Remove(filepath.Join(dir, fmt.Sprintf("%020d%s", base, ext))); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return 0, fmt.Errorf("chaos: %w", err)
				}
			}
		case cut >= 0:
			if err := os.Truncate(path, cut); err != nil {
				return 0, fmt.Errorf("chaos: %w", err)
			}
		}
	}
	snaps, err := segmentBases(dir, ".snapshot")
	if err != nil {
		return 0, err
	}
	for _, off := range snaps {
		if off > rp {
			if err := os.Remove(filepath.Join(dir, fmt.Sprintf("%020d.snapshot", off))); err != nil {
				return 0, fmt.Errorf("chaos: %w", err)
			}
		}
	}
	return max(end, rp), nil
}

// segmentBases lists the offsets that name dir's files ending in ext,
// in order.
func segmentBases(dir, ext string) ([]int64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	var bases []int64
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ext)
		if !ok {
			continue
		}
		if off, err := strconv.ParseInt(name, 10, 64); err == nil {
			bases = append(bases, off)
		}
	}
	slices.Sort(bases)
	return bases, nil
}

// scanBatches walks a segment's batches and returns the position of the
// first one whose base offset is at or past rp (-1: none) and the
// offset after its last complete batch. A torn batch at the end (a
// crash mid-write) ends the walk.
func scanBatches(path string, rp int64) (cut, end int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, fmt.Errorf("chaos: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	cut = -1
	var hdr [batchHeaderBytes]byte
	for pos := int64(0); ; {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return cut, end, nil
		}
		base := int64(binary.BigEndian.Uint64(hdr[0:8]))
		length := int64(binary.BigEndian.Uint32(hdr[8:12]))
		if length < batchHeaderBytes-batchPrefix {
			return cut, end, nil
		}
		if cut < 0 && base >= rp {
			cut = pos
		}
		if _, err := r.Discard(int(length - (batchHeaderBytes - batchPrefix))); err != nil {
			return cut, end, nil
		}
		end = base + int64(binary.BigEndian.Uint32(hdr[lastDeltaAt:lastDeltaAt+4])) + 1
		pos += batchPrefix + length
	}
}
