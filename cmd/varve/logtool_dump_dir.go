package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/varve/varve/segment"
)

// leaderEpochCheckpointFile is Kafka's per-partition leader epoch cache
// file: "0\n<n>\n<epoch> <startOffset>\n..." (KAFKA-REFERENCE §1.1).
const leaderEpochCheckpointFile = "leader-epoch-checkpoint"

// dumpDir dumps a partition directory: its checkpoint and metadata
// files, then every segment in base-offset order (.log, .index,
// .timeindex, .txnindex, and the .snapshot at that offset), then the
// files it does not know. Subdirectories (the partitions of a log dir) are
// dumped the same way, one level deep.
func (d *dumper) dumpDir(dir string) error {
	return d.dumpDirDepth(dir, 0)
}

func (d *dumper) dumpDirDepth(dir string, depth int) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	d.printf("Dumping directory %s\n", dir)
	var meta, unknown, subdirs []string
	segs := map[int64][]string{}
	for _, e := range entries {
		name := e.Name()
		switch k := kindOf(name); {
		case e.IsDir():
			subdirs = append(subdirs, name)
		case k == kindLog || k == kindIndex || k == kindTimeIndex || k == kindTxnIndex || k == kindProducerSnapshot:
			if base, err := baseOffsetOfFile(name); err == nil {
				segs[base] = append(segs[base], name)
				continue
			}
			unknown = append(unknown, name)
		case k == kindUnknown:
			unknown = append(unknown, name)
		default:
			meta = append(meta, name)
		}
	}
	for _, name := range meta {
		if err := d.dumpFile(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	if err := d.dumpSegments(dir, segs); err != nil {
		return err
	}
	for _, name := range unknown {
		d.printf("Ignoring unknown file %s\n", filepath.Join(dir, name))
	}
	if depth > 0 {
		return nil
	}
	for _, name := range subdirs {
		if err := d.dumpDirDepth(filepath.Join(dir, name), depth+1); err != nil {
			return err
		}
	}
	return nil
}

// dumpSegments dumps each segment's files, oldest segment first.
func (d *dumper) dumpSegments(dir string, segs map[int64][]string) error {
	bases := make([]int64, 0, len(segs))
	for b := range segs {
		bases = append(bases, b)
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	order := map[string]int{segment.LogSuffix: 0, segment.IndexSuffix: 1, segment.TimeIndexSuffix: 2, txnIndexSuffix: 3, segment.SnapshotSuffix: 4}
	for _, b := range bases {
		files := segs[b]
		sort.Slice(files, func(i, j int) bool { return order[filepath.Ext(files[i])] < order[filepath.Ext(files[j])] })
		for _, name := range files {
			if err := d.dumpFile(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// dumpOffsetCheckpoint prints an offset checkpoint file (recovery point,
// log start offset, high watermark, cleaner offset): one line per entry.
func (d *dumper) dumpOffsetCheckpoint(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	m, err := segment.DecodeCheckpoint(data)
	if err != nil {
		d.printf("%s: %v\n", path, err)
		return nil
	}
	tps := make([]segment.TopicPartition, 0, len(m))
	for tp := range m {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
	d.printf("version: 0 entries: %d\n", len(tps))
	for _, tp := range tps {
		d.printf("topic: %s partition: %d offset: %d\n", tp.Topic, tp.Partition, m[tp])
	}
	return nil
}

// dumpEpochCheckpoint prints a leader-epoch-checkpoint file.
func (d *dumper) dumpEpochCheckpoint(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	entries, err := parseEpochCheckpoint(data)
	if err != nil {
		d.printf("%s: corrupt checkpoint file: %v\n", path, err)
		return nil
	}
	d.printf("version: 0 entries: %d\n", len(entries))
	for _, e := range entries {
		d.printf("epoch: %d startOffset: %d\n", e[0], e[1])
	}
	return nil
}

// parseEpochCheckpoint parses "0\n<n>\n<epoch> <startOffset>\n...".
func parseEpochCheckpoint(data []byte) ([][2]int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	var lines []string
	for sc.Scan() {
		lines = append(lines, strings.TrimSpace(sc.Text()))
	}
	if len(lines) < 2 || lines[0] != "0" {
		return nil, fmt.Errorf("version line is not 0")
	}
	n, err := strconv.Atoi(lines[1])
	if err != nil || n < 0 || n != len(lines)-2 {
		return nil, fmt.Errorf("count line %q does not match %d entries", lines[1], len(lines)-2)
	}
	out := make([][2]int64, 0, n)
	for _, l := range lines[2:] {
		var epoch, start int64
		if _, err := fmt.Sscanf(l, "%d %d", &epoch, &start); err != nil {
			return nil, fmt.Errorf("entry %q: %v", l, err)
		}
		out = append(out, [2]int64{epoch, start})
	}
	return out, nil
}

// dumpCleanShutdown prints the clean-shutdown marker's content.
func (d *dumper) dumpCleanShutdown(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	d.printf("clean shutdown marker: %s\n", strings.TrimSpace(string(data)))
	return nil
}
