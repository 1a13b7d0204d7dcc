package segment_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/varve/varve/index"
	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

// crashCfg gives small segments so that a few dozen batches span several,
// and skips fsyncs: these tests check what recovery does with the bytes
// it finds, not durability (TestPowerLoss and the kill test do that).
var crashCfg = func() segment.Config {
	c := segment.DefaultConfig()
	c.SegmentBytes, c.IndexIntervalBytes, c.SegmentIndexBytes, c.FS = 2048, 256, 1024, noSyncFS()
	return c
}()

func noSyncFS() *segmenttest.FaultFS {
	fs := segmenttest.NewFaultFS()
	fs.SkipSyncs(true)
	return fs
}

// fixedTs makes batch contents reproducible.
const fixedTs = 1_700_000_000_000

// buildCrashedLog writes n batches into a new log in dir and abandons it
// without a clean shutdown. It returns the batches as stored.
func buildCrashedLog(t *testing.T, dir string, n int) [][]byte {
	t.Helper()
	l := open(t, dir, crashCfg)
	var want [][]byte
	for i := 0; i < n; i++ {
		b := segmenttest.Batch(t, 1+i%3, 60, int64(i), fixedTs+int64(i))
		info, err := l.Append(b)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, segmenttest.WithBase(b, info.FirstOffset))
	}
	if len(l.Segments()) < 3 {
		t.Fatalf("only %d segments; the crash tests need at least 3", len(l.Segments()))
	}
	l.Abandon()
	return want
}

// copyDir copies a crashed log into a new temp dir of the same name.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	segmenttest.CopyDir(t, src, dst)
	return dst
}

// segmentFiles returns the .log files of dir in offset order.
func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(m)
	return m
}

// batchesIn returns the sizes of the whole batches of a segment file.
func batchesIn(t *testing.T, path string) []int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, b := range segmenttest.Batches(t, data) {
		sizes = append(sizes, len(b))
	}
	return sizes
}

// reopenAndCheck opens dir, checks that it holds exactly want, that its
// indexes agree with its log, and that the next append gets the next
// offset.
func reopenAndCheck(t *testing.T, dir string, want [][]byte) segment.RecoveryReport {
	t.Helper()
	l := open(t, dir, crashCfg)
	equalBatches(t, readAll(t, l), want)
	next := int64(0)
	if len(want) > 0 {
		h, _ := record.ParseHeader(want[len(want)-1])
		next = h.NextOffset()
	}
	if l.EndOffset() != next {
		t.Fatalf("end offset %d, want %d", l.EndOffset(), next)
	}
	// Every offset is found through the rebuilt indexes.
	for _, w := range want {
		h, _ := record.ParseHeader(w)
		got, err := l.ReadBytes(h.LastOffset(), 1)
		if err != nil || !bytes.Equal(got, w) {
			t.Fatalf("read of offset %d: %v", h.LastOffset(), err)
		}
	}
	b := segmenttest.Batch(t, 1, 10, 999, fixedTs)
	info, err := l.Append(b)
	if err != nil || info.FirstOffset != next {
		t.Fatalf("append after recovery at %d (%v), want %d", info.FirstOffset, err, next)
	}
	rep := l.Recovery()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	checkIndexes(t, dir)
	return rep
}

// checkIndexes verifies, for every segment of a closed log, that each
// offset index entry points at the start of a batch whose last offset is
// the entry's offset, and that time index entries are ordered and inside
// the segment.
func checkIndexes(t *testing.T, dir string) {
	t.Helper()
	for _, logPath := range segmentFiles(t, dir) {
		data, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		lastAt := map[int64]int64{} // position -> last offset
		var lastOffset int64 = -1
		for p := 0; p < len(data); {
			h, n, err := record.NextBatch(data[p:], len(data)-p)
			if err != nil {
				t.Fatalf("%s: torn data at %d after recovery: %v", logPath, p, err)
			}
			lastAt[int64(p)] = h.LastOffset()
			lastOffset = h.LastOffset()
			p += n
		}
		base := mustBase(t, logPath)
		prefix := logPath[:len(logPath)-len(".log")]
		oi, err := index.OpenOffsetIndex(prefix+".index", base, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if err := oi.SanityCheck(int64(len(data))); err != nil {
			t.Fatalf("%s: %v", logPath, err)
		}
		for i := 0; i < oi.Entries(); i++ {
			e := oi.Entry(i)
			if lo, ok := lastAt[e.Position]; !ok || lo != e.Offset {
				t.Fatalf("%s: index entry %d (%d at %d) does not match the log", logPath, i, e.Offset, e.Position)
			}
		}
		oi.Close()
		ti, err := index.OpenTimeIndex(prefix+".timeindex", base, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if lastOffset >= 0 {
			if err := ti.SanityCheck(lastOffset); err != nil {
				t.Fatalf("%s: %v", logPath, err)
			}
		}
		ti.Close()
	}
}

func mustBase(t *testing.T, logPath string) int64 {
	var base int64
	name := filepath.Base(logPath)
	for _, c := range name[:20] {
		base = base*10 + int64(c-'0')
	}
	return base
}

// Kafka: LogSegment.recover truncates at the first invalid byte; the
// active segment is cut at every byte of its last three batches.
func TestCrashCutAtEveryByteOfTheLastBatches(t *testing.T) {
	src := filepath.Join(t.TempDir(), "crash-0")
	want := buildCrashedLog(t, src, 40)
	files := segmentFiles(t, src)
	active := files[len(files)-1]
	sizes := batchesIn(t, active)
	if len(sizes) < 3 {
		t.Fatalf("active segment has %d batches; want at least 3", len(sizes))
	}
	inActive := len(sizes)
	var total int
	for _, s := range sizes {
		total += s
	}
	tail := sizes[len(sizes)-1] + sizes[len(sizes)-2] + sizes[len(sizes)-3]
	for cut := total - tail; cut < total; cut++ {
		dir := copyDir(t, src)
		if err := os.Truncate(filepath.Join(dir, filepath.Base(active)), int64(cut)); err != nil {
			t.Fatal(err)
		}
		// Batches whole before the cut survive.
		keep, end := len(want)-inActive, 0
		for _, s := range sizes {
			if end+s > cut {
				break
			}
			end += s
			keep++
		}
		rep := reopenAndCheck(t, dir, want[:keep])
		if rep.TruncatedBytes != int64(cut-end) {
			t.Fatalf("cut at %d: report says %d bytes truncated, want %d", cut, rep.TruncatedBytes, cut-end)
		}
	}
}

// tamper runs one named corruption against a copy of a crashed log and
// checks what recovery keeps.
func tamper(t *testing.T, name string, damage func(t *testing.T, dir string, files []string), keepFromEnd int, wantDropped bool) {
	t.Run(name, func(t *testing.T) {
		src := filepath.Join(t.TempDir(), "tamper-0")
		want := buildCrashedLog(t, src, 40)
		dir := copyDir(t, src)
		damage(t, dir, segmentFiles(t, dir))
		rep := reopenAndCheck(t, dir, want[:len(want)-keepFromEnd])
		if rep.Dropped() != wantDropped {
			t.Fatalf("report %+v: dropped=%v, want %v", rep, rep.Dropped(), wantDropped)
		}
	})
}

func lastBatchPos(t *testing.T, path string) (pos, size int) {
	sizes := batchesIn(t, path)
	for _, s := range sizes[:len(sizes)-1] {
		pos += s
	}
	return pos, sizes[len(sizes)-1]
}

func TestRecoveryNamedCases(t *testing.T) {
	active := func(files []string) string { return files[len(files)-1] }
	tamper(t, "torn_last_batch", func(t *testing.T, dir string, files []string) {
		pos, size := lastBatchPos(t, active(files))
		os.Truncate(active(files), int64(pos+size/2))
	}, 1, true)
	tamper(t, "bad_crc", func(t *testing.T, dir string, files []string) {
		pos, size := lastBatchPos(t, active(files))
		flipByte(t, active(files), int64(pos+size-5))
	}, 1, true)
	tamper(t, "bad_length", func(t *testing.T, dir string, files []string) {
		pos, _ := lastBatchPos(t, active(files))
		writeAt(t, active(files), int64(pos+8), binary.BigEndian.AppendUint32(nil, 20)) // shorter than a header
	}, 1, true)
	tamper(t, "huge_length", func(t *testing.T, dir string, files []string) {
		pos, _ := lastBatchPos(t, active(files))
		writeAt(t, active(files), int64(pos+8), binary.BigEndian.AppendUint32(nil, 1<<30))
	}, 1, true)
	tamper(t, "zeroed_tail", func(t *testing.T, dir string, files []string) {
		appendBytes(t, active(files), make([]byte, 4096))
	}, 0, true)
	tamper(t, "garbage_tail", func(t *testing.T, dir string, files []string) {
		appendBytes(t, active(files), segmenttest.Value(7, 7, 777))
	}, 0, true)
	tamper(t, "index_ahead_of_log", func(t *testing.T, dir string, files []string) {
		markClean(t, dir)
		idx := files[0][:len(files[0])-len(".log")] + ".index"
		appendBytes(t, idx, binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 1000), 1<<20))
	}, 0, false)
	tamper(t, "index_wrong_size", func(t *testing.T, dir string, files []string) {
		markClean(t, dir)
		idx := files[1][:len(files[1])-len(".log")] + ".index"
		appendBytes(t, idx, []byte{1, 2, 3})
	}, 0, false)
	tamper(t, "missing_index", func(t *testing.T, dir string, files []string) {
		markClean(t, dir)
		base := files[0][:len(files[0])-len(".log")]
		os.Remove(base + ".index")
		os.Remove(base + ".timeindex")
	}, 0, false)
	tamper(t, "bad_crc_in_sealed_segment", func(t *testing.T, dir string, files []string) {
		// An unclean shutdown with no recovery point checkpoint validates
		// every segment: corruption in the second segment drops it and
		// everything after it.
		os.Remove(filepath.Join(dir, segment.RecoveryPointCheckpointFile))
		pos, size := lastBatchPos(t, files[1])
		flipByte(t, files[1], int64(pos+size-1))
	}, countAfter(t, 1), true)
}

// countAfter is filled in lazily: the number of batches from the last
// batch of segment i onwards in a log made by buildCrashedLog(40).
func countAfter(t *testing.T, i int) int {
	src := filepath.Join(t.TempDir(), "count-0")
	want := buildCrashedLog(t, src, 40)
	files := segmentFiles(t, src)
	before := 0
	for _, f := range files[:i+1] {
		before += len(batchesIn(t, f))
	}
	return len(want) - before + 1
}

// markClean makes the next open take the clean-shutdown path, so that
// only the index sanity checks can find the damage.
func markClean(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, segment.CleanShutdownFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A crashed log's active index is preallocated; a clean one is not.
	files := segmentFiles(t, dir)
	last := files[len(files)-1][:len(files[len(files)-1])-len(".log")]
	for _, suf := range []string{".index", ".timeindex"} {
		trimZeros(t, last+suf, map[string]int{".index": 8, ".timeindex": 12}[suf])
	}
}

// trimZeros cuts an index file after its last non-zero entry.
func trimZeros(t *testing.T, path string, entry int) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := len(data) / entry
	for n > 0 && bytes.Count(data[(n-1)*entry:n*entry], []byte{0}) == entry {
		n--
	}
	os.Truncate(path, int64(n*entry))
}

func flipByte(t *testing.T, path string, at int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := []byte{0}
	f.ReadAt(b, at)
	b[0] ^= 0x40
	f.WriteAt(b, at)
}

func writeAt(t *testing.T, path string, at int64, p []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(p, at); err != nil {
		t.Fatal(err)
	}
}

func appendBytes(t *testing.T, path string, p []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(p); err != nil {
		t.Fatal(err)
	}
}

// Power loss: what was not fsynced is gone, what flush.messages=1
// acknowledged is not.
func TestPowerLossKeepsEveryFsyncedAppend(t *testing.T) {
	fs := segmenttest.NewFaultFS()
	dir := filepath.Join(t.TempDir(), "power-0")
	cfg := crashCfg
	cfg.FS, cfg.FlushMessages = fs, 1
	defer func() { crashCfg.FS = noSyncFS() }()
	crashCfg.FS = fs // reopen through the same FS
	l := open(t, dir, cfg)
	var want [][]byte
	for i := 0; i < 30; i++ {
		b := segmenttest.Batch(t, 2, 50, int64(i), fixedTs)
		info, err := l.Append(b)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, segmenttest.WithBase(b, info.FirstOffset))
	}
	l.Abandon()
	if err := fs.Crash(); err != nil {
		t.Fatal(err)
	}
	reopenAndCheck(t, dir, want)
}
