package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

const dumpTestTS = 1700000000000

// testLog is a log made for a dump test: its directory and every batch
// as stored (base offset set), with its position in its segment.
type testLog struct {
	dir     string
	batches []storedBatch
}

type storedBatch struct {
	seg   int64 // base offset of the segment holding it
	pos   int64
	bytes []byte
}

// makeDumpLog writes n batches of 3 records each (key, printable value,
// one header; the first record of batch 1 has a binary value and a null
// key) into a log that rolls every 500 bytes and indexes every 100, and
// closes it cleanly.
func makeDumpLog(t *testing.T, n int) testLog {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "orders-0")
	cfg := segment.DefaultConfig()
	cfg.SegmentBytes = 500
	cfg.IndexIntervalBytes = 100
	l, err := segment.Open(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tl := testLog{dir: dir}
	for i := 0; i < n; i++ {
		b := record.NewBatchBuilder(record.CompressionNone)
		for j := 0; j < 3; j++ {
			r := record.Record{
				Key:       []byte(fmt.Sprintf("key-%d-%d", i, j)),
				Value:     []byte(fmt.Sprintf("value %d/%d", i, j)),
				Headers:   []record.Header{{Key: "h", Value: []byte("v")}},
				Timestamp: dumpTestTS + int64(3*i+j),
			}
			if i == 1 && j == 0 {
				r.Key, r.Value = nil, []byte{0, 1, 2, 0xff}
			}
			b.Append(r)
		}
		batch, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	tl.batches = readStoredBatches(t, dir)
	if len(tl.batches) != n {
		t.Fatalf("log holds %d batches, want %d", len(tl.batches), n)
	}
	return tl
}

// readStoredBatches splits every .log file of dir into its batches.
func readStoredBatches(t *testing.T, dir string) []storedBatch {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	var out []storedBatch
	for _, p := range logs {
		base, _ := baseOffsetOfFile(p)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for pos := 0; pos < len(data); {
			_, size, err := record.NextBatch(data[pos:], 0)
			if err != nil {
				t.Fatalf("%s at %d: %v", p, pos, err)
			}
			out = append(out, storedBatch{seg: base, pos: int64(pos), bytes: data[pos : pos+size]})
			pos += size
		}
	}
	return out
}

func (tl testLog) segmentFile(base int64, suffix string) string {
	return filepath.Join(tl.dir, segment.FilenamePrefix(base)+suffix)
}

// runDump runs "varve log dump" with args and returns what it printed.
func runDump(t *testing.T, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	cmd := newDumpCmd()
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("log dump %v: %v\n%s", args, err, out.String())
	}
	return out.String()
}

// wantBatchLine is the line Kafka's DumpLogSegments prints for a batch
// (printBatchLevel), with baseTimestamp added, written out field by field.
func wantBatchLine(t *testing.T, b storedBatch, valid bool) string {
	t.Helper()
	h, err := record.ParseHeader(b.bytes)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("baseOffset: %d lastOffset: %d count: 3 baseSequence: -1 lastSequence: -1"+
		" producerId: -1 producerEpoch: -1 partitionLeaderEpoch: -1 isTransactional: false isControl: false"+
		" deleteHorizonMs: none baseTimestamp: %d position: %d CreateTime: %d size: %d magic: 2"+
		" compresscodec: none crc: %d isvalid: %t",
		h.BaseOffset, h.BaseOffset+2, h.BaseTimestamp, b.pos, h.BaseTimestamp+2, len(b.bytes), h.CRC, valid)
}

func dumpLines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }

func dumpCountPrefix(ls []string, prefix string) int {
	n := 0
	for _, l := range ls {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// Kafka: kafka-dump-log prints every batch of every segment, in order,
// with its offsets, position, size, timestamps, codec and CRC validity.
func TestDumpDirectoryPrintsEverySegmentInOrder(t *testing.T) {
	tl := makeDumpLog(t, 12)
	out := runDump(t, tl.dir)
	ls := dumpLines(out)
	var got []string
	for _, l := range ls {
		if strings.HasPrefix(l, "baseOffset: ") {
			got = append(got, l)
		}
	}
	if len(got) != len(tl.batches) {
		t.Fatalf("got %d batch lines, want %d:\n%s", len(got), len(tl.batches), out)
	}
	for i, b := range tl.batches {
		if want := wantBatchLine(t, b, true); got[i] != want {
			t.Errorf("batch %d:\n got %s\nwant %s", i, got[i], want)
		}
	}
	segs := dumpCountPrefix(ls, "Log starting offset: ")
	if segs < 3 {
		t.Fatalf("log spans %d segments, the test wants at least 3:\n%s", segs, out)
	}
	segFiles := 0 // the snapshots, dumped too, are not segment files
	for _, suf := range []string{".log", ".index", ".timeindex"} {
		for _, l := range ls {
			if strings.HasPrefix(l, "Dumping "+filepath.Join(tl.dir, "0")) && strings.HasSuffix(l, suf) {
				segFiles++
			}
		}
	}
	if segFiles != 3*segs {
		t.Errorf("want a .log, .index and .timeindex dump per segment:\n%s", out)
	}
	for _, want := range []string{
		"Dumping directory " + tl.dir,
		"topic: orders partition: 0 offset: 36", // recovery point and log start offset checkpoints
		"topic: orders partition: 0 offset: 0",
		"clean shutdown marker: {",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "invalid") || strings.Contains(out, "Mismatches") || strings.Contains(out, "problems") {
		t.Errorf("a clean log reported a problem:\n%s", out)
	}
}

// Kafka: --deep-iteration/--print-data-log print one "| offset: ..." line
// per record with its timestamp, key and payload.
func TestDumpPrintRecords(t *testing.T) {
	tl := makeDumpLog(t, 4)
	logPath := tl.segmentFile(0, segment.LogSuffix)
	for _, flag := range []string{"--print-records", "--deep-iteration", "--print-data-log"} {
		out := runDump(t, flag, "--max-value-bytes", "5", logPath)
		want := []string{
			`| offset: 0 CreateTime: 1700000000000 keySize: 7 valueSize: 9 sequence: -1 headerKeys: [h] key: "key-0"...(2 more bytes) payload: "value"...(4 more bytes) headers: ["h"="v"]`,
			`| offset: 3 CreateTime: 1700000000003 keySize: -1 valueSize: 4 sequence: -1 headerKeys: [h] key: null payload: 0x000102ff headers: ["h"="v"]`,
		}
		for _, w := range want {
			if !strings.Contains(out, w+"\n") {
				t.Errorf("%s: output lacks\n%s\n%s", flag, w, out)
			}
		}
		if n := dumpCountPrefix(dumpLines(out), "| offset: "); n != 3*dumpCountPrefix(dumpLines(out), "baseOffset: ") {
			t.Errorf("%s: %d record lines for %d batches", flag, n, dumpCountPrefix(dumpLines(out), "baseOffset: "))
		}
	}
	out := runDump(t, "--print-records", "--max-value-bytes", "0", logPath)
	if !strings.Contains(out, `payload: "value 0/0"`) {
		t.Errorf("--max-value-bytes 0 should print whole values:\n%s", out)
	}
}

// cutCopy copies the segment .log holding batch i to a new directory and
// cuts it at byte cut (relative to that batch's start).
func cutCopy(t *testing.T, tl testLog, i int, cut int64) (string, storedBatch) {
	t.Helper()
	b := tl.batches[i]
	data, err := os.ReadFile(tl.segmentFile(b.seg, segment.LogSuffix))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), segment.FilenamePrefix(b.seg)+segment.LogSuffix)
	if err := os.WriteFile(p, data[:b.pos+cut], 0o644); err != nil {
		t.Fatal(err)
	}
	return p, b
}

// Kafka: a torn tail ends the dump with "Found N invalid bytes at the end
// of <file>" (FileLogInputStream stops at a batch longer than what is
// left); the batches before the cut are all printed.
func TestDumpFileCutMidBatch(t *testing.T) {
	tl := makeDumpLog(t, 12)
	last := len(tl.batches) - 1
	size := int64(len(tl.batches[last].bytes))
	for _, cut := range []int64{1, 11, 12, 60, 61, size - 1} {
		p, b := cutCopy(t, tl, last, cut)
		out := runDump(t, p)
		before := 0
		for _, o := range tl.batches {
			if o.seg == b.seg && o.pos < b.pos {
				before++
			}
		}
		if n := dumpCountPrefix(dumpLines(out), "baseOffset: "); n != before {
			t.Errorf("cut %d: %d batch lines, want %d", cut, n, before)
		}
		want := fmt.Sprintf("Found %d invalid bytes at the end of %s: torn batch", cut, filepath.Base(p))
		if !strings.Contains(out, want) {
			t.Errorf("cut %d: output lacks %q:\n%s", cut, want, out)
		}
	}
}

// Kafka: a batch whose CRC does not match prints isvalid: false; the dump
// goes on with the next batch (the length field still frames it).
func TestDumpFlippedByteShowsInvalidCRCAndContinues(t *testing.T) {
	tl := makeDumpLog(t, 12)
	b := tl.batches[0]
	p, _ := cutCopy(t, tl, 0, 0)
	data, _ := os.ReadFile(tl.segmentFile(b.seg, segment.LogSuffix))
	data[b.pos+record.RecordsPos+10] ^= 0x01 // inside the first record
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := runDump(t, "--print-records", p)
	ls := dumpLines(out)
	var batchLines []string
	for _, l := range ls {
		if strings.HasPrefix(l, "baseOffset: ") {
			batchLines = append(batchLines, l)
		}
	}
	if len(batchLines) < 2 {
		t.Fatalf("want the dump to continue after the bad batch:\n%s", out)
	}
	if !strings.HasSuffix(batchLines[0], "isvalid: false") || !strings.HasSuffix(batchLines[1], "isvalid: true") {
		t.Errorf("want the first batch invalid and the second valid:\n%s", out)
	}
	stored := binary.BigEndian.Uint32(data[b.pos+record.CRCPos:])
	for _, want := range []string{
		fmt.Sprintf("  invalid batch: record batch crc mismatch: stored crc = %d, computed crc = ", stored),
		"  records decoded although the crc does not match:",
		"Found 1 invalid batches in " + filepath.Base(p),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "invalid bytes at the end") {
		t.Errorf("a flipped byte is not a torn tail:\n%s", out)
	}
}

// A tail of zeros (preallocation, a crash before the data reached the
// disk) is not a batch: its length field is 0.
func TestDumpZeroedTail(t *testing.T) {
	tl := makeDumpLog(t, 3)
	p := tl.segmentFile(0, segment.LogSuffix)
	data, _ := os.ReadFile(p)
	n := dumpCountPrefix(dumpLines(runDump(t, p)), "baseOffset: ")
	data = append(data, make([]byte, 100)...)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := runDump(t, p)
	if got := dumpCountPrefix(dumpLines(out), "baseOffset: "); got != n {
		t.Errorf("%d batch lines after zeros were appended, want %d", got, n)
	}
	want := "Found 100 invalid bytes at the end of " + filepath.Base(p) + ": batch length 0 is below the minimum 49"
	if !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}

var offsetEntryLine = regexp.MustCompile(`^offset: (\d+) position: (\d+)$`)

// Kafka: the offset index dump prints "offset: O position: P" per entry and
// reports entries whose batch does not end at O ("Mismatches in :file").
func TestDumpOffsetIndexCheckedAgainstLog(t *testing.T) {
	tl := makeDumpLog(t, 12)
	idx := tl.segmentFile(0, segment.IndexSuffix)
	out := runDump(t, idx)
	entries := 0
	for _, l := range dumpLines(out) {
		m := offsetEntryLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		entries++
		var off, pos int64
		fmt.Sscan(m[1], &off)
		fmt.Sscan(m[2], &pos)
		found := false
		for _, b := range tl.batches {
			if b.seg == 0 && b.pos == pos {
				h, _ := record.ParseHeader(b.bytes)
				found = h.LastOffset() == off
			}
		}
		if !found {
			t.Errorf("entry %q names no batch ending at that offset", l)
		}
	}
	if entries == 0 {
		t.Fatalf("no index entries printed:\n%s", out)
	}
	if strings.Contains(out, "Mismatches") {
		t.Fatalf("clean index reported mismatches:\n%s", out)
	}
	if got := runDump(t, "--index-sanity-check", idx); got != "Dumping "+idx+"\n"+idx+" passed sanity check.\n" {
		t.Errorf("sanity check of a clean index printed:\n%s", got)
	}

	data, _ := os.ReadFile(idx)
	binary.BigEndian.PutUint32(data, binary.BigEndian.Uint32(data)+1) // entry 0 names the wrong offset
	if err := os.WriteFile(idx, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out = runDump(t, "--verify-index-only", idx)
	if !strings.Contains(out, "Mismatches in "+idx+"\n  Index offset: ") || offsetEntryLine.MatchString(dumpLines(out)[1]) {
		t.Errorf("want only the mismatch reported:\n%s", out)
	}
	if err := os.WriteFile(idx, data[:len(data)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	if out := runDump(t, "--index-sanity-check", idx); !strings.Contains(out, "failed sanity check: size ") {
		t.Errorf("an index of odd size passed the sanity check:\n%s", out)
	}
}

// Kafka: the time index dump prints "timestamp: T offset: O" per entry and
// checks that the batch ending at O has max timestamp T.
func TestDumpTimeIndexCheckedAgainstLog(t *testing.T) {
	tl := makeDumpLog(t, 12)
	tidx := tl.segmentFile(0, segment.TimeIndexSuffix)
	out := runDump(t, tidx)
	if dumpCountPrefix(dumpLines(out), "timestamp: ") == 0 || strings.Contains(out, "problems") {
		t.Fatalf("want entries and no problems:\n%s", out)
	}
	data, _ := os.ReadFile(tidx)
	binary.BigEndian.PutUint64(data, binary.BigEndian.Uint64(data)-1) // timestamp no batch has
	if err := os.WriteFile(tidx, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := runDump(t, tidx); !strings.Contains(out, "Time index problems in "+tidx+"\n  Index timestamp: ") {
		t.Errorf("want the timestamp mismatch reported:\n%s", out)
	}
}

// A live segment's index is preallocated: zeros follow the entries, and
// the dump stops at them as Kafka's does.
func TestDumpPreallocatedIndexStopsAtZeros(t *testing.T) {
	tl := makeDumpLog(t, 3)
	idx := tl.segmentFile(0, segment.IndexSuffix)
	data, _ := os.ReadFile(idx)
	n := len(data) / 8
	if err := os.WriteFile(idx, append(data, make([]byte, 80)...), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runDump(t, idx)
	if n > 0 && !strings.Contains(out, fmt.Sprintf("entries %d to %d are empty (preallocated space)", n, n+9)) {
		t.Errorf("want the zero entries reported as preallocated:\n%s", out)
	}
	if n > 0 && !strings.Contains(runDump(t, "--index-sanity-check", idx), "failed sanity check") {
		t.Errorf("an index with zero entries after its last passed the sanity check")
	}
}

// Kafka's checkpoint files: "0\n<n>\n" then one entry per line.
func TestDumpCheckpointFiles(t *testing.T) {
	dir := t.TempDir()
	rp := filepath.Join(dir, segment.RecoveryPointCheckpointFile)
	if err := segment.WriteCheckpoint(nil, rp, map[segment.TopicPartition]int64{{Topic: "b", Partition: 1}: 7, {Topic: "a", Partition: 0}: 42}); err != nil {
		t.Fatal(err)
	}
	le := filepath.Join(dir, leaderEpochCheckpointFile)
	if err := os.WriteFile(le, []byte("0\n2\n0 0\n3 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "Dumping directory " + dir + "\n" +
		"Dumping " + le + "\nversion: 0 entries: 2\nepoch: 0 startOffset: 0\nepoch: 3 startOffset: 100\n" +
		"Dumping " + rp + "\nversion: 0 entries: 2\ntopic: a partition: 0 offset: 42\ntopic: b partition: 1 offset: 7\n"
	if got := runDump(t, dir); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if err := os.WriteFile(rp, []byte("1\n0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := runDump(t, rp); !strings.Contains(got, "corrupt checkpoint file") {
		t.Errorf("a bad version was not reported:\n%s", got)
	}
}

func TestDumpMissingPathFails(t *testing.T) {
	cmd := newDumpCmd()
	cmd.SetArgs([]string{filepath.Join(t.TempDir(), "nope")})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); err == nil {
		t.Fatal("dump of a missing path succeeded")
	}
}

// The dump reads only: files keep their bytes and modification times.
func TestDumpDoesNotModifyFiles(t *testing.T) {
	tl := makeDumpLog(t, 6)
	before := snapshotDir(t, tl.dir)
	runDump(t, "--print-records", tl.dir)
	runDump(t, "--index-sanity-check", tl.dir)
	if after := snapshotDir(t, tl.dir); after != before {
		t.Errorf("dump changed the directory:\nbefore %s\nafter  %s", before, after)
	}
}

func snapshotDir(t *testing.T, dir string) string {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var sb strings.Builder
	for _, e := range entries {
		fi, _ := e.Info()
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		fmt.Fprintf(&sb, "%s:%d:%d:%x;", e.Name(), fi.Size(), fi.ModTime().UnixNano(), data)
	}
	return sb.String()
}

// Kafka: the batch line shows the codec, the producer id, epoch and
// sequence range (lastSequence = baseSequence + lastOffsetDelta) and the
// transactional flag; records of a compressed batch are decompressed.
func TestDumpCompressedTransactionalBatch(t *testing.T) {
	dir := t.TempDir()
	l, err := segment.Open(dir, segment.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	b := record.NewBatchBuilder(record.CompressionZstd)
	b.SetProducer(7, 1, 100)
	b.SetTransactional(true)
	for i := 0; i < 3; i++ {
		b.Append(record.Record{Key: []byte("k"), Value: bytes.Repeat([]byte("z"), 200), Timestamp: dumpTestTS})
	}
	batch, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(batch); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	out := runDump(t, "--print-records", "--max-value-bytes", "4", filepath.Join(dir, segment.FilenamePrefix(0)+segment.LogSuffix))
	for _, want := range []string{
		"baseSequence: 100 lastSequence: 102 producerId: 7 producerEpoch: 1 partitionLeaderEpoch: -1 isTransactional: true isControl: false",
		"compresscodec: zstd",
		`| offset: 2 CreateTime: 1700000000000 keySize: 1 valueSize: 200 sequence: 102 headerKeys: [] key: "k" payload: "zzzz"...(196 more bytes)`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// Kafka: DefaultRecordBatch.incrementSequence wraps past MaxInt32 to 0.
func TestLastSequenceWraps(t *testing.T) {
	for _, c := range []struct {
		base, delta int32
		want        int64
	}{
		{-1, 5, -1}, {0, 0, 0}, {10, 4, 14}, {math.MaxInt32 - 1, 3, 1}, {math.MaxInt32, 0, math.MaxInt32},
	} {
		if got := lastSequence(record.BatchHeader{BaseSequence: c.base, LastOffsetDelta: c.delta}); got != c.want {
			t.Errorf("lastSequence(%d, %d) = %d, want %d", c.base, c.delta, got, c.want)
		}
	}
}

func TestBaseOffsetOfFile(t *testing.T) {
	if b, err := baseOffsetOfFile("/x/00000000000000000021.timeindex"); err != nil || b != 21 {
		t.Errorf("got %d, %v", b, err)
	}
	for _, bad := range []string{"0000000000000000002a.log", "21.log", "+0000000000000000021.log", "leader-epoch-checkpoint"} {
		if _, err := baseOffsetOfFile(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
