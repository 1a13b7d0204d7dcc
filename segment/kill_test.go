package segment_test

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

const killChildEnv = "VARVE_KILL_CHILD_DIR"

// killBatch is the batch the child appends as its seq-th append: the
// parent rebuilds it to compare bytes.
func killBatch(seq int64) ([]byte, error) {
	return segmenttest.MakeBatch(1+int(seq%4), 100+int(seq%7)*50, seq, fixedTs+seq)
}

// TestMain runs the kill test's child when the parent started this
// binary for it, and the tests otherwise.
func TestMain(m *testing.M) {
	if dir := os.Getenv(killChildEnv); dir != "" {
		killChild(dir)
		return
	}
	if dir := os.Getenv(producerKillChildEnv); dir != "" {
		producerKillChild(dir)
		return
	}
	if dir := os.Getenv(txnKillChildEnv); dir != "" {
		txnKillChild(dir)
		return
	}
	// Recovery reports every reopened log at INFO or WARN; the crash tests
	// reopen hundreds, so their reports go nowhere unless -v asks.
	flag.Parse()
	if !testing.Verbose() {
		slog.SetDefault(slog.New(slog.DiscardHandler))
	}
	os.Exit(m.Run())
}

// killChild is the child process of TestKillNineKeepsAcknowledgedAppends.
func killChild(dir string) {
	cfg := segment.DefaultConfig()
	cfg.FlushMessages = 1
	cfg.SegmentBytes = 16 << 10
	l, err := segment.Open(dir, cfg)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	for seq := l.EndOffset(); ; seq++ {
		// The seq-th batch: content is a function of the first offset it is
		// expected at, so the parent can rebuild it.
		b, err := killBatch(seq)
		if err != nil {
			fmt.Fprintln(out, "error", err)
			out.Flush()
			os.Exit(2)
		}
		info, err := l.Append(b)
		if err != nil {
			fmt.Fprintln(out, "error", err)
			out.Flush()
			os.Exit(2)
		}
		fmt.Fprintf(out, "ack %d %d %d\n", seq, info.FirstOffset, info.LastOffset)
		out.Flush()
		seq = info.LastOffset
	}
}

// Kafka: with flush.messages=1 every acknowledged append survives a crash.
// A child appends and prints each acknowledged offset range; the parent
// kills it with SIGKILL at a random moment, reopens the log, and checks
// every acknowledged batch is there byte for byte. 20 rounds over one log.
func TestKillNineKeepsAcknowledgedAppends(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kill-0")
	acked := map[int64]int64{} // first offset -> last offset
	for round := 0; round < 20; round++ {
		runAndKill(t, dir, time.Duration(20+rand.IntN(150))*time.Millisecond, acked)
		cfg := segment.DefaultConfig()
		cfg.SegmentBytes = 16 << 10
		l := open(t, dir, cfg)
		for first, last := range acked {
			got, err := l.ReadBytes(first, 1)
			if err != nil {
				t.Fatalf("round %d: acknowledged offset %d: %v", round, first, err)
			}
			b, err := killBatch(first)
			if err != nil {
				t.Fatal(err)
			}
			want := segmenttest.WithBase(b, first)
			if !bytes.Equal(got, want) {
				h, _ := record.ParseHeader(got)
				t.Fatalf("round %d: batch at %d (ack'd up to %d) differs: got base %d, %d bytes", round, first, last, h.BaseOffset, len(got))
			}
		}
		if rep := l.Recovery(); rep.CleanShutdown {
			t.Fatalf("round %d: a killed log reopened as clean", round)
		}
		l.Abandon() // leave it unclean for the next child, as a crash would
	}
	if len(acked) < 20 {
		t.Fatalf("only %d appends acknowledged in 20 rounds; the test did not exercise anything", len(acked))
	}
}

// runAndKill starts the child on dir, lets it append for d, kills it
// with SIGKILL, and records the offsets it acknowledged.
func runAndKill(t *testing.T, dir string, d time.Duration, acked map[int64]int64) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), killChildEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timer := time.AfterFunc(d, func() { cmd.Process.Signal(syscall.SIGKILL) })
	defer timer.Stop()
	for line := range lines {
		f := strings.Fields(line)
		if len(f) == 4 && f[0] == "ack" {
			first, _ := strconv.ParseInt(f[2], 10, 64)
			last, _ := strconv.ParseInt(f[3], 10, 64)
			acked[first] = last
		} else if strings.HasPrefix(line, "error") {
			t.Fatalf("child: %s", line)
		}
	}
	cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("child ended without being killed: %v\n%s", cmd.ProcessState, stderr.String())
	}
}
