package main

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/varve/varve/experiments/internal/varveproc"
)

func TestFlagsDefaultsQuickAndErrors(t *testing.T) {
	c, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.cases, []int{1, 10, 1000}) || c.reps != 3 || c.duration != 10*time.Second ||
		c.partitions != 1 || c.recordSize != 100 || !slices.Equal(c.systems, allSystems) {
		t.Errorf("defaults: %+v", c)
	}
	q, err := parseFlags([]string{"-quick", "-systems", "varve"})
	if err != nil {
		t.Fatal(err)
	}
	if q.reps != 1 || q.duration != 3*time.Second || q.prime != 3*time.Second || !slices.Equal(q.systems, []string{sysVarve}) {
		t.Errorf("-quick -systems varve: %+v", q)
	}
	if b, err := parseFlags([]string{"-systems", "varve-base,varve", "-base-rev", "main"}); err != nil ||
		!slices.Equal(b.systems, []string{sysVarveBase, sysVarve}) || b.baseRev != "main" {
		t.Errorf("-systems varve-base,varve -base-rev main: %+v %v", b, err)
	}
	if c, _ := parseFlags([]string{"-client-tv1"}); !c.clientTV1 {
		t.Errorf("-client-tv1 not set")
	}
	if q, _ := parseFlags([]string{"-quick", "-reps", "2"}); q.reps != 2 {
		t.Errorf("-reps given with -quick: %d, want 2", q.reps)
	}
	for _, bad := range [][]string{{"-systems", "redpanda"}, {"-records-per-txn", "0"}, {"-records-per-txn", "x"},
		{"-reps", "0"}, {"-partitions", "0"}, {"-record-size", "4"}, {"-duration", "0s"}, {"-txn-backoff", "-1ms"},
		{"-systems", "varve-base,varve"}, {"-base-rev", "main"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// The plan runs the systems back to back for every (rep, case, mode), so
// that the machine's load moves both runs of a pair.
func TestPlanInterleavesSystems(t *testing.T) {
	c, _ := parseFlags([]string{"-reps", "2"})
	p := plan(c)
	if len(p) != 2*3*2*2 {
		t.Fatalf("%d runs, want 24", len(p))
	}
	for i := 0; i < len(p); i += 2 {
		a, b := p[i], p[i+1]
		if a.system != sysVarve || b.system != sysKafka || a.rep != b.rep || a.perTxn != b.perTxn || a.mode != b.mode {
			t.Errorf("runs %d and %d are not a pair: %v / %v", i, i+1, a, b)
		}
	}
	if p[0].mode != modeTxn || p[2].mode != modePlain || p[4].perTxn != 10 || p[12].rep != 2 {
		t.Errorf("order: %v", p[:5])
	}
	if r := readPlan(c); len(r) != 3*2*2 || r[0].system != sysVarve || r[1].system != sysKafka {
		t.Errorf("read plan %v", r)
	}
}

func run1(rep, perTxn int, mode, system string, records int64) runResult {
	return runResult{runSpec: runSpec{rep: rep, perTxn: perTxn, mode: mode, system: system},
		produced: produced{records: records, rounds: records / int64(perTxn), elapsed: time.Second}}
}

// Ratios pair the runs of one repetition and take the median of the
// per-repetition ratios, not the ratio of medians.
func TestPairedRatios(t *testing.T) {
	rs := []runResult{
		run1(1, 10, modeTxn, sysVarve, 100), run1(1, 10, modeTxn, sysKafka, 400),
		run1(1, 10, modePlain, sysVarve, 1000), run1(1, 10, modePlain, sysKafka, 1000),
		run1(2, 10, modeTxn, sysVarve, 300), run1(2, 10, modeTxn, sysKafka, 300),
		run1(2, 10, modePlain, sysVarve, 1000), run1(2, 10, modePlain, sysKafka, 2000),
		run1(3, 10, modeTxn, sysVarve, 50), // no plain run in rep 3: no pair
	}
	if got := pairedRatio(pick(rs, 10, modeTxn, sysVarve), pick(rs, 10, modePlain, sysVarve)); got != 0.2 {
		t.Errorf("varve txn/plain %v, want median(0.1, 0.3) = 0.2", got)
	}
	if got := versus(rs, 10, modeTxn); got != 0.625 {
		t.Errorf("varve/kafka txn %v, want median(0.25, 1) = 0.625", got)
	}
	if got := versus(rs, 1, modeTxn); !math.IsNaN(got) {
		t.Errorf("no runs: %v, want NaN", got)
	}
	c, _ := parseFlags(nil)
	cs := cells(c, rs)
	if len(cs) != 2 || cs[0].system != sysVarve || cs[0].txnRPS != 100 || cs[0].ratio != 0.2 {
		t.Errorf("cells %+v", cs)
	}
}

// Kafka: a read_committed consumer returns every committed record once
// and no aborted record (KIP-98); the check catches each way to fail.
func TestReadCheck(t *testing.T) {
	seq := func(s uint64) []byte {
		v := make([]byte, 100)
		binary.BigEndian.PutUint64(v, s)
		return v
	}
	const want = 70
	seen := make([]uint64, (want+63)/64)
	var r readResult
	for s := range uint64(want) {
		r.note(seq(s), seen, want)
	}
	if !r.complete(want) || r.records != want || r.bytes != want*100 {
		t.Fatalf("every record once: %+v", r)
	}
	r.note(seq(69), seen, want)
	r.note(seq(70), seen, want)
	r.note([]byte("x"), seen, want)
	if r.complete(want) || r.dups != 1 || r.foreign != 2 {
		t.Errorf("a duplicate and two foreign records: %+v", r)
	}
	var short readResult
	short.note(seq(3), make([]uint64, 2), want)
	if short.complete(want) {
		t.Errorf("one of %d records is complete", want)
	}
}

// Kafka: a single KRaft combined node votes for itself on its
// CONTROLLER listener; both systems get the same one-node settings.
func TestKafkaProps(t *testing.T) {
	p := kafkaProps("/d", 19092, 19093)
	if p["controller.quorum.voters"] != "1@127.0.0.1:19093" || p["process.roles"] != "broker,controller" ||
		p["listeners"] != "PLAINTEXT://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093" || p["log.dirs"] != "/d" {
		t.Errorf("kafka props %v", p)
	}
	for k, v := range singleNodeProps() {
		if p[k] != v {
			t.Errorf("%s=%q, want %q as for varve", k, p[k], v)
		}
	}
}

// A short run against a real `varve server`: every produced round is
// committed, read back once by read_committed, and the summary names
// every case. Kafka: KIP-98 transactions end to end through franz-go.
func TestAgainstVarveServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs varve server")
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(filepath.Join(wd, "..", "..")); err != nil { // varveproc builds from the repository root
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir(wd) })
	bin, cleanup, err := varveproc.Binary("")
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	cfg, err := parseFlags([]string{"-quick", "-systems", "varve", "-records-per-txn", "1,5", "-duration", "300ms",
		"-warmup", "100ms", "-prime", "100ms", "-no-progress", "-out", t.TempDir(), "-dir", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cfg.varveBin = bin
	ctx := context.Background()
	out, err := run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 1 | varve |", "| 5 | varve |", "| txn-5 | varve |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(string(md), "**no**") {
		t.Errorf("a read was incomplete:\n%s", md)
	}
	for _, f := range []string{"runs.csv", "summary.csv", "reads.csv", "txn-over-plain.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

// Every runs.csv row has a value under each column, the back-offs
// where the header says.
func TestRunRowMatchesHeader(t *testing.T) {
	r := run1(2, 10, modeTxn, sysVarve, 100)
	r.backoffs, r.load1 = 7, 1.5
	row := runRow(r)
	if len(row) != len(runsHeader) {
		t.Fatalf("%d values under %d columns", len(row), len(runsHeader))
	}
	at := slices.Index(runsHeader, "concurrent_txn_backoffs")
	if row[at] != "7" || row[len(row)-1] != "1.5" {
		t.Errorf("row %v", row)
	}
}

// With varve-base beside varve, the summary gives varve / varve-base
// per case and mode, from the runs of each repetition.
func TestVersusBase(t *testing.T) {
	cfg, err := parseFlags([]string{"-systems", "varve-base,varve", "-base-rev", "main", "-records-per-txn", "10"})
	if err != nil {
		t.Fatal(err)
	}
	rs := []runResult{run1(1, 10, modeTxn, sysVarveBase, 100), run1(1, 10, modeTxn, sysVarve, 300),
		run1(1, 10, modePlain, sysVarveBase, 1000), run1(1, 10, modePlain, sysVarve, 1000)}
	var b strings.Builder
	writeVersusTable(&b, cfg, rs)
	if got := b.String(); !strings.Contains(got, "## varve / varve-base") || !strings.Contains(got, "| 10 | 3.00 | 1.00 |") ||
		strings.Contains(got, "kafka") {
		t.Fatalf("versus table:\n%s", got)
	}
}
