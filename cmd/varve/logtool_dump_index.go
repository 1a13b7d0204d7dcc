package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/varve/varve/index"
	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// The index dumps read the file bytes directly instead of opening them
// with package index: opening maps the file read-write and closing trims
// it, and a dump must never change what it looks at. The checks mirror
// index.OffsetIndex.SanityCheck and index.TimeIndex.SanityCheck (what the
// log runs at open to decide whether to rebuild), then compare each entry
// with the batch it names, as Kafka's DumpLogSegments does.

// logHeaders is the header of every whole batch of a segment's .log file,
// in file order.
type logHeaders struct {
	path    string
	missing bool // no .log file beside the index
	size    int64
	pos     []int64
	hdr     []record.BatchHeader
}

// loadLogHeaders scans the .log file of the segment an index belongs to.
func (d *dumper) loadLogHeaders(indexPath string) (*logHeaders, error) {
	logPath := strings.TrimSuffix(indexPath, indexExtension(indexPath)) + segment.LogSuffix
	lh := &logHeaders{path: logPath}
	if _, err := os.Stat(logPath); errors.Is(err, os.ErrNotExist) {
		lh.missing = true
		return lh, nil
	}
	tail, err := scanLog(logPath, d.o.maxBytes, d.o.maxMessageBytes, func(b scannedBatch) error {
		lh.pos = append(lh.pos, b.Pos)
		lh.hdr = append(lh.hdr, b.Header)
		return nil
	})
	lh.size = tail.FileSize
	return lh, err
}

func indexExtension(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i:]
	}
	return ""
}

// at returns the batch that starts at byte pos.
func (lh *logHeaders) at(pos int64) (record.BatchHeader, bool) {
	i := sort.Search(len(lh.pos), func(i int) bool { return lh.pos[i] >= pos })
	if i < len(lh.pos) && lh.pos[i] == pos {
		return lh.hdr[i], true
	}
	return record.BatchHeader{}, false
}

// holding returns the first batch whose last offset is at least offset.
func (lh *logHeaders) holding(offset int64) (record.BatchHeader, bool) {
	i := sort.Search(len(lh.hdr), func(i int) bool { return lh.hdr[i].LastOffset() >= offset })
	if i < len(lh.hdr) {
		return lh.hdr[i], true
	}
	return record.BatchHeader{}, false
}

// lastOffset is the last offset in the log, or base-1 when it is empty.
func (lh *logHeaders) lastOffset(base int64) int64 {
	if len(lh.hdr) == 0 {
		return base - 1
	}
	return lh.hdr[len(lh.hdr)-1].LastOffset()
}

// indexFile is an index file's bytes and the segment it belongs to.
type indexFile struct {
	path    string
	base    int64
	data    []byte
	entries int
	odd     int // bytes after the last whole entry
}

func readIndexFile(path string, entrySize int) (indexFile, error) {
	base, err := baseOffsetOfFile(path)
	if err != nil {
		return indexFile{}, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return indexFile{}, err
	}
	return indexFile{path: path, base: base, data: data, entries: len(data) / entrySize, odd: len(data) % entrySize}, nil
}

// offsetEntry decodes offset index entry i (fields read as signed 32-bit
// integers, as Kafka reads them).
func (f indexFile) offsetEntry(i int) index.OffsetPosition {
	p := f.data[i*index.OffsetEntrySize:]
	return index.OffsetPosition{
		Offset:   f.base + int64(int32(binary.BigEndian.Uint32(p))),
		Position: int64(int32(binary.BigEndian.Uint32(p[4:]))),
	}
}

// timeEntry decodes time index entry i.
func (f indexFile) timeEntry(i int) index.TimestampOffset {
	p := f.data[i*index.TimeEntrySize:]
	return index.TimestampOffset{
		Timestamp: int64(binary.BigEndian.Uint64(p)),
		Offset:    f.base + int64(int32(binary.BigEndian.Uint32(p[8:]))),
	}
}

// dumpOffsetIndex prints a .index file's entries and checks each against
// the batch at its position: that batch must exist and end at the
// entry's offset.
func (d *dumper) dumpOffsetIndex(path string) error {
	f, err := readIndexFile(path, index.OffsetEntrySize)
	if err != nil {
		return err
	}
	if f.entries == 0 && f.odd == 0 {
		d.printf("%s is empty.\n", path)
		return nil
	}
	lh, err := d.loadLogHeaders(path)
	if err != nil {
		return err
	}
	if d.o.indexSanityCheck {
		d.sanityResult(path, offsetIndexSanity(f, lh))
		return nil
	}
	var mismatches []string
	for i := 0; i < f.entries; i++ {
		e := f.offsetEntry(i)
		// Preallocated zeros. Kafka stops at the first entry after the
		// first that repeats the base offset; an entry (base, 0) is never
		// real either (a segment's first batch is never indexed), so an
		// active segment with no entries yet is not shown as having one.
		if e.Offset == f.base && (i > 0 || e.Position == 0) {
			d.printf("%s: entries %d to %d are empty (preallocated space)\n", path, i, f.entries-1)
			break
		}
		if !d.o.verifyIndexOnly {
			d.printf("offset: %d position: %d\n", e.Offset, e.Position)
		}
		if m := offsetMismatch(e, lh); m != "" {
			mismatches = append(mismatches, m)
		}
	}
	d.printProblems("Mismatches in "+path, mismatches)
	d.logMissing(lh)
	return nil
}

// offsetMismatch compares an offset index entry with the log.
func offsetMismatch(e index.OffsetPosition, lh *logHeaders) string {
	if lh.missing {
		return ""
	}
	h, ok := lh.at(e.Position)
	if !ok {
		return fmt.Sprintf("  Index offset: %d, position %d: no batch starts there", e.Offset, e.Position)
	}
	if h.LastOffset() != e.Offset {
		return fmt.Sprintf("  Index offset: %d, log offset: %d", e.Offset, h.LastOffset())
	}
	return ""
}

// offsetIndexSanity is index.OffsetIndex.SanityCheck over the file's bytes.
func offsetIndexSanity(f indexFile, lh *logHeaders) string {
	if f.odd != 0 {
		return fmt.Sprintf("size %d is not a multiple of %d", len(f.data), index.OffsetEntrySize)
	}
	prev := index.OffsetPosition{Offset: f.base - 1, Position: -1}
	for i := 0; i < f.entries; i++ {
		e := f.offsetEntry(i)
		switch {
		case e.Offset <= prev.Offset:
			return fmt.Sprintf("entry %d: offset %d not above %d", i, e.Offset, prev.Offset)
		case e.Position <= prev.Position:
			return fmt.Sprintf("entry %d: position %d not above %d", i, e.Position, prev.Position)
		case !lh.missing && e.Position >= lh.size:
			return fmt.Sprintf("entry %d: position %d at or past the end of the log (%d bytes)", i, e.Position, lh.size)
		}
		prev = e
	}
	return ""
}

// dumpTimeIndex prints a .timeindex file's entries and checks each
// against the log: the first batch ending at or after the entry's offset
// must end exactly there and carry the entry's timestamp as its max
// timestamp, and timestamps must increase.
func (d *dumper) dumpTimeIndex(path string) error {
	f, err := readIndexFile(path, index.TimeEntrySize)
	if err != nil {
		return err
	}
	if f.entries == 0 && f.odd == 0 {
		d.printf("%s is empty.\n", path)
		return nil
	}
	lh, err := d.loadLogHeaders(path)
	if err != nil {
		return err
	}
	if d.o.indexSanityCheck {
		d.sanityResult(path, timeIndexSanity(f, lh))
		return nil
	}
	var problems []string
	prevTS := int64(record.NoTimestamp)
	for i := 0; i < f.entries; i++ {
		e := f.timeEntry(i)
		if e.Offset == f.base && (i > 0 || e.Timestamp == 0) { // zeros, as above
			d.printf("%s: entries %d to %d are empty (preallocated space)\n", path, i, f.entries-1)
			break
		}
		if !d.o.verifyIndexOnly {
			d.printf("timestamp: %d offset: %d\n", e.Timestamp, e.Offset)
		}
		problems = append(problems, timeMismatches(e, prevTS, lh)...)
		prevTS = e.Timestamp
	}
	d.printProblems("Time index problems in "+path, problems)
	d.logMissing(lh)
	return nil
}

// timeMismatches compares a time index entry with the log and with the
// previous entry's timestamp.
func timeMismatches(e index.TimestampOffset, prevTS int64, lh *logHeaders) []string {
	var out []string
	if prevTS >= e.Timestamp {
		out = append(out, fmt.Sprintf("  Index timestamp: %d, Previously indexed timestamp: %d", e.Timestamp, prevTS))
	}
	if lh.missing {
		return out
	}
	h, ok := lh.holding(e.Offset)
	switch {
	case !ok:
		out = append(out, fmt.Sprintf("  Indexed offset: %d, found log offset: -1", e.Offset))
	case h.LastOffset() != e.Offset:
		out = append(out, fmt.Sprintf("  Indexed offset: %d, found log offset: %d", e.Offset, h.LastOffset()))
	case h.MaxTimestamp != e.Timestamp:
		out = append(out, fmt.Sprintf("  Index timestamp: %d, log timestamp: %d", e.Timestamp, h.MaxTimestamp))
	}
	return out
}

// timeIndexSanity is index.TimeIndex.SanityCheck over the file's bytes.
func timeIndexSanity(f indexFile, lh *logHeaders) string {
	if f.odd != 0 {
		return fmt.Sprintf("size %d is not a multiple of %d", len(f.data), index.TimeEntrySize)
	}
	last := lh.lastOffset(f.base)
	for i := 0; i < f.entries; i++ {
		e := f.timeEntry(i)
		switch {
		case e.Offset < f.base:
			return fmt.Sprintf("entry %d: offset %d below the base offset %d", i, e.Offset, f.base)
		case !lh.missing && e.Offset > last:
			return fmt.Sprintf("entry %d: offset %d past the last offset in the log %d", i, e.Offset, last)
		case i == 0:
			continue
		}
		prev := f.timeEntry(i - 1)
		switch {
		case e.Timestamp <= prev.Timestamp:
			return fmt.Sprintf("entry %d: timestamp %d not above %d", i, e.Timestamp, prev.Timestamp)
		case e.Offset < prev.Offset:
			return fmt.Sprintf("entry %d: offset %d below %d", i, e.Offset, prev.Offset)
		}
	}
	return ""
}

func (d *dumper) sanityResult(path, reason string) {
	if reason == "" {
		d.printf("%s passed sanity check.\n", path)
		return
	}
	d.printf("%s failed sanity check: %s (opening the log rebuilds it from the log)\n", path, reason)
}

func (d *dumper) printProblems(title string, lines []string) {
	if len(lines) == 0 {
		return
	}
	d.printf("%s\n", title)
	for _, l := range lines {
		d.printf("%s\n", l)
	}
}

func (d *dumper) logMissing(lh *logHeaders) {
	if lh.missing {
		d.printf("No log file %s: entries not checked against the log\n", lh.path)
	}
}
