package segment_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

const fdLimitChildEnv = "VARVE_FDLIMIT_CHILD"

// manySegmentsCfg rolls a segment at every batch.
func manySegmentsCfg(files *segment.FileCache) segment.Config {
	c := segment.DefaultConfig()
	c.SegmentBytes, c.SegmentIndexBytes, c.FS, c.Files, c.FileDeleteDelay = 100, 1024, noSyncFS(), files, time.Millisecond
	return c
}

// Kafka: a broker with tens of thousands of segments runs out of
// descriptors unless they are opened on demand (KAFKA-7283's lazy
// indexes). A log of 3,000 one-batch segments is written, reopened
// cleanly, read end to end, abandoned and recovered from its first
// segment, and read again, in a process limited to 256 descriptors.
func TestManySegmentsUnderDescriptorLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 3,000 segments")
	}
	if os.Getenv(fdLimitChildEnv) != "" {
		manySegmentsChild(t, os.Getenv(fdLimitChildEnv))
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestManySegmentsUnderDescriptorLimit$", "-test.v")
	cmd.Env = append(os.Environ(), fdLimitChildEnv+"="+filepath.Join(t.TempDir(), "many-0"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	t.Logf("child:\n%s", out)
}

func manySegmentsChild(t *testing.T, dir string) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = 256
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	files := segment.NewFileCache(64)
	const n = 3000
	l := open(t, dir, manySegmentsCfg(files))
	for i := range n {
		if _, err := l.Append(segmenttest.Batch(t, 1, 8, int64(i), fixedTs+int64(i))); err != nil {
			t.Fatalf("append %d: %v (open descriptors: %d)", i, err, openFDs(t))
		}
	}
	if got := len(l.Segments()); got < n {
		t.Fatalf("%d segments, want %d", got, n)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = open(t, dir, manySegmentsCfg(files))
	checkReadsAll(t, l, n, files)
	l.Abandon()
	// Without checkpoints every segment is validated again.
	for _, f := range []string{segment.RecoveryPointCheckpointFile, segment.LogStartOffsetCheckpointFile} {
		os.Remove(filepath.Join(dir, f))
	}
	closeAbandoned(t, l)
	l = open(t, dir, manySegmentsCfg(files))
	defer l.Close()
	if r := l.Recovery(); r.SegmentsRecovered < n || r.Dropped() {
		t.Fatalf("recovery validated %d segments, dropped %v; want all %d kept", r.SegmentsRecovered, r.Dropped(), n)
	}
	checkReadsAll(t, l, n, files)
}

// checkReadsAll reads every offset of l in order and checks that the
// descriptors stayed bounded by the cache.
func checkReadsAll(t *testing.T, l *segment.Log, n int, files *segment.FileCache) {
	t.Helper()
	got := readAll(t, l)
	if len(got) != n {
		t.Fatalf("read %d batches, want %d", len(got), n)
	}
	if open := files.Open(); open > files.MaxOpen() {
		t.Fatalf("%d sealed segments open, bound %d", open, files.MaxOpen())
	}
	if fds := openFDs(t); fds > 128 {
		t.Fatalf("%d descriptors open after reading %d segments", fds, n)
	}
}

// closeAbandoned releases the descriptors an abandoned log still holds,
// as the death of its process would.
func closeAbandoned(t *testing.T, l *segment.Log) {
	t.Helper()
	l.CloseFilesAbandoned()
}

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}
