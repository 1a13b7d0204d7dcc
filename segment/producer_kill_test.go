package segment_test

import (
	"bufio"
	"bytes"
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

// producerKillChildEnv makes the test binary run producerKillChild
// (TestMain in kill_test.go dispatches on it).
const producerKillChildEnv = "VARVE_PRODUCER_KILL_CHILD_DIR"

const killPID = 4242

// killProducerConfig is the child's configuration: every append durable
// before it is acknowledged, and small segments so that rolls (and their
// snapshots) happen all the time.
func killProducerConfig() segment.Config {
	cfg := segment.DefaultConfig()
	cfg.FlushMessages = 1
	cfg.SegmentBytes = 2 << 10
	cfg.Logger = slog.New(slog.DiscardHandler)
	return cfg
}

// killProducerBatch is the batch the child sends with sequence seq at
// time ts; the parent rebuilds it from the child's "send" line.
func killProducerBatch(seq int32, ts int64) idem {
	return idem{pid: killPID, epoch: 0, seq: seq, n: 1 + int(seq%3), ts: ts}
}

// producerKillChild is the child process of
// TestKillNineProducerRetriesAreDuplicates: an idempotent producer that
// continues from the log's producer state, printing each batch before it
// sends it ("send seq ts") and after the log acknowledged it ("ack seq
// first last").
func producerKillChild(dir string) {
	out := bufio.NewWriter(os.Stdout)
	die := func(err error) {
		fmt.Fprintln(out, "error", err)
		out.Flush()
		os.Exit(2)
	}
	l, err := segment.Open(dir, killProducerConfig())
	if err != nil {
		die(err)
	}
	seq := int32(0)
	if ps, ok := l.ProducerState(killPID); ok {
		seq = ps.LastSequence + 1
	}
	for {
		b := killProducerBatch(seq, time.Now().UnixMilli())
		raw, err := b.bytes()
		if err != nil {
			die(err)
		}
		fmt.Fprintf(out, "send %d %d\n", b.seq, b.ts)
		out.Flush()
		info, err := l.Append(raw)
		if err != nil || info.Duplicate {
			die(fmt.Errorf("append of sequence %d: %+v, %v", seq, info, err))
		}
		fmt.Fprintf(out, "ack %d %d %d\n", b.seq, info.FirstOffset, info.LastOffset)
		out.Flush()
		seq = b.lastSeq() + 1
	}
}

// childSend is a batch the child sent, and where the log put it if the
// child saw the acknowledgement.
type childSend struct {
	b           idem
	acked       bool
	first, last int64
}

// Kafka: idempotent producer retries after a broker crash (KIP-98). A
// child appends idempotent batches durably and reports what it sends and
// what was acknowledged; the parent kills it with SIGKILL, reopens the
// log and retries the last acknowledged batch and the last one sent:
// each must be a duplicate with its original offsets if it is in the
// log, and a fresh append if it is not. Every round then checks that the
// producer's batches in the log have contiguous sequences: nothing
// written twice, nothing lost. Rounds alternate unclean and clean closes
// of the parent's log.
func TestKillNineProducerRetriesAreDuplicates(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kill-producer-0")
	acks, sentInLog, sentNotInLog := 0, 0, 0
	for round := 0; round < 10; round++ {
		sends := runProducerChild(t, dir, time.Duration(40+rand.IntN(120))*time.Millisecond)
		l := open(t, dir, killProducerConfig())
		var lastAcked, lastSent *childSend
		for i := range sends {
			if sends[i].acked {
				lastAcked = &sends[i]
				acks++
			}
			lastSent = &sends[i]
		}
		if lastAcked != nil {
			retryAcked(t, l, *lastAcked)
		}
		if lastSent != nil && !lastSent.acked {
			if retrySent(t, l, lastSent.b) {
				sentInLog++
			} else {
				sentNotInLog++
			}
		}
		checkProducerSequences(t, l)
		if round%2 == 0 {
			l.Abandon()
		} else if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d acknowledged appends; last batch sent but unacknowledged: %d in the log, %d not", acks, sentInLog, sentNotInLog)
	if acks < 10 {
		t.Fatalf("only %d appends acknowledged in 10 rounds; the test did not exercise anything", acks)
	}
}

// retryAcked retries an acknowledged batch: it must be a duplicate of
// the stored batch, byte for byte the one the child sent.
func retryAcked(t *testing.T, l *segment.Log, s childSend) {
	t.Helper()
	mustDuplicate(t, l, s.b, s.first, s.last)
	stored, err := l.ReadBytes(s.first, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := segmenttest.WithBase(s.b.build(t), s.first); !bytes.HasPrefix(stored, want) {
		t.Fatalf("acknowledged batch at %d differs from what was sent", s.first)
	}
}

// retrySent retries the batch the child sent last without seeing it
// acknowledged. It reports whether the batch had reached the log (and
// was then a duplicate); if not, the retry appends it.
func retrySent(t *testing.T, l *segment.Log, b idem) bool {
	t.Helper()
	ps, ok := l.ProducerState(killPID)
	if ok && ps.LastSequence == b.lastSeq() {
		last := ps.LastOffset
		mustDuplicate(t, l, b, last-int64(b.n)+1, last)
		return true
	}
	mustAppend(t, l, b)
	return false
}

// checkProducerSequences reads the whole log and checks that the
// producer's batches continue each other's sequences from 0.
func checkProducerSequences(t *testing.T, l *segment.Log) {
	t.Helper()
	next := int32(0)
	for _, b := range readAll(t, l) {
		h, _ := record.ParseHeader(b)
		if h.ProducerID != killPID {
			t.Fatalf("batch at %d has producer %d", h.BaseOffset, h.ProducerID)
		}
		if h.BaseSequence != next {
			t.Fatalf("batch at %d has sequence %d, want %d: a batch was written twice or lost", h.BaseOffset, h.BaseSequence, next)
		}
		next = h.BaseSequence + h.LastOffsetDelta + 1
	}
}

// runProducerChild runs producerKillChild on dir for d, kills it with
// SIGKILL, and returns what it sent, in order.
func runProducerChild(t *testing.T, dir string, d time.Duration) []childSend {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), producerKillChildEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(d, func() { cmd.Process.Signal(syscall.SIGKILL) })
	defer timer.Stop()
	var sends []childSend
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if err := parseChildLine(sc.Text(), &sends); err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child: %v", err)
		}
	}
	cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("child ended without being killed: %v\n%s", cmd.ProcessState, stderr.String())
	}
	return sends
}

// parseChildLine records one "send", "ack" or "error" line.
func parseChildLine(line string, sends *[]childSend) error {
	f := strings.Fields(line)
	num := func(i int) int64 {
		n, _ := strconv.ParseInt(f[i], 10, 64)
		return n
	}
	switch {
	case len(f) == 3 && f[0] == "send":
		*sends = append(*sends, childSend{b: killProducerBatch(int32(num(1)), num(2))})
	case len(f) == 4 && f[0] == "ack" && len(*sends) > 0:
		s := &(*sends)[len(*sends)-1]
		if int64(s.b.seq) != num(1) {
			return fmt.Errorf("ack of sequence %d after sending %d", num(1), s.b.seq)
		}
		s.acked, s.first, s.last = true, num(2), num(3)
	case len(f) > 0 && f[0] == "error":
		return fmt.Errorf("%s", line)
	}
	return nil
}
