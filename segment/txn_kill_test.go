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
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// txnKillChildEnv makes the test binary run txnKillChild (TestMain in
// kill_test.go dispatches on it).
const txnKillChildEnv = "VARVE_TXN_KILL_CHILD_DIR"

// txnKillConfig: every append durable before it is acknowledged, and
// small segments, so that markers and their transactions fall in
// different segments and rolls take snapshots all the time.
func txnKillConfig() segment.Config {
	cfg := segment.DefaultConfig()
	cfg.FlushMessages = 1
	cfg.SegmentBytes = 1 << 10
	cfg.Logger = slog.New(slog.DiscardHandler)
	return cfg
}

// txnKillChild is the child of TestKillNineKeepsTransactionState: three
// transactional producers that continue from the log's producer state
// and interleave data batches with COMMIT and ABORT markers, printing
// "ack <offset>" once each append is acknowledged.
func txnKillChild(dir string) {
	out := bufio.NewWriter(os.Stdout)
	l, err := segment.Open(dir, txnKillConfig())
	if err != nil {
		fmt.Fprintln(out, "error", err)
		out.Flush()
		os.Exit(2)
	}
	prods := map[int64]*txnProducer{}
	for pid := int64(1); pid <= 3; pid++ {
		prods[pid] = &txnProducer{pid: pid}
		if ps, ok := l.ProducerState(pid); ok && ps.LastSequence >= 0 {
			prods[pid].seq = ps.LastSequence + 1
		}
	}
	for i := 0; ; i++ {
		p := prods[int64(1+i%3)]
		var info segment.AppendInfo
		if rand.IntN(3) == 0 {
			info, err = l.AppendTxnMarker(segment.TxnMarker{ProducerID: p.pid, CoordinatorEpoch: 1, Commit: rand.IntN(2) == 0}, 0)
		} else {
			n := 1 + rand.IntN(3)
			raw := txnBatchBytes(p.pid, p.seq, n)
			if info, err = l.AppendWithEpoch(raw, 0); err == nil {
				p.seq += int32(n)
			}
		}
		if err != nil {
			fmt.Fprintln(out, "error", err)
			out.Flush()
			os.Exit(2)
		}
		fmt.Fprintf(out, "ack %d\n", info.LastOffset)
		out.Flush()
	}
}

func txnBatchBytes(pid int64, seq int32, n int) []byte {
	bb := record.NewBatchBuilder(record.CompressionNone)
	bb.SetProducer(pid, 0, seq)
	bb.SetTransactional(true)
	for i := 0; i < n; i++ {
		bb.Append(record.Record{Value: []byte(strconv.Itoa(int(seq) + i))})
	}
	b, _ := bb.Build()
	return b
}

// modelFromLog replays the log's batches through the model of open and
// aborted transactions (txn_property_test.go).
func modelFromLog(t *testing.T, l *segment.Log) *txnModel {
	t.Helper()
	m := &txnModel{open: map[int64]int64{}}
	for _, b := range readAll(t, l) {
		h, _ := record.ParseHeader(b)
		if !h.IsControl() {
			if _, ok := m.open[h.ProducerID]; !ok && h.IsTransactional() {
				m.open[h.ProducerID] = h.BaseOffset
			}
			continue
		}
		recs, err := record.DecodeBatch(b, nil)
		if err != nil || len(recs) != 1 {
			t.Fatalf("marker at %d: %v", h.BaseOffset, err)
		}
		m.end(h.ProducerID, h.BaseOffset, recs[0].Key[3] == 1)
	}
	return m
}

// Kafka: LogLoader after a crash rebuilds the producer state (open
// transactions) and the transaction indexes from the log. A child runs
// transactions with every append durable and is killed with SIGKILL;
// each reopened log must have every acknowledged append, and the last
// stable offset and aborted transactions a replay of its batches gives.
// Rounds alternate unclean and clean closes of the parent's log.
func TestKillNineKeepsTransactionState(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kill-txn-0")
	acks := 0
	for round := 0; round < 8; round++ {
		last, n := runTxnChild(t, dir, time.Duration(40+rand.IntN(120))*time.Millisecond)
		acks += n
		l := open(t, dir, txnKillConfig())
		if l.EndOffset() <= last {
			t.Fatalf("round %d: log ends at %d, before the acknowledged offset %d", round, l.EndOffset(), last)
		}
		m := modelFromLog(t, l)
		if got, want := lso(l), m.lso(l.EndOffset()); got != want {
			t.Fatalf("round %d: LSO %d, a replay of the log gives %d", round, got, want)
		}
		if got := l.AbortedTransactions(0, l.EndOffset()); !slices.Equal(got, m.aborted) {
			t.Fatalf("round %d: aborted transactions\n got %+v\nwant %+v", round, got, m.aborted)
		}
		if round%2 == 0 {
			l.Abandon()
			l.CloseFilesAbandoned()
		} else if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if acks < 20 {
		t.Fatalf("only %d appends acknowledged; the test did not exercise anything", acks)
	}
}

// runTxnChild runs txnKillChild on dir for d, kills it, and returns the
// last acknowledged offset (-1 if none) and the number of acks.
func runTxnChild(t *testing.T, dir string, d time.Duration) (int64, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), txnKillChildEnv+"="+dir)
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
	last, n := int64(-1), 0
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "ack":
			last, _ = strconv.ParseInt(f[1], 10, 64)
			n++
		case len(f) > 0 && f[0] == "error":
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child: %s", sc.Text())
		}
	}
	cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("child ended without being killed: %v\n%s", cmd.ProcessState, stderr.String())
	}
	return last, n
}
