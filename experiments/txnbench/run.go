package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/varve/varve/experiments/internal/harness"
	"github.com/varve/varve/experiments/internal/machine"
	"github.com/varve/varve/experiments/internal/progress"
	"github.com/varve/varve/experiments/internal/varveproc"
)

// runSlack bounds how long a run may overrun its warm-up and duration
// (a round in flight at the end, a stuck client) before it fails.
const runSlack = 2 * time.Minute

// modes are the two ways every case is produced, in run order.
var modes = []string{modeTxn, modePlain}

// runSpec is one timed produce run.
type runSpec struct {
	rep    int
	perTxn int
	mode   string
	system string
}

func (r runSpec) String() string {
	return fmt.Sprintf("rep %d: %d records per round, %s, %s", r.rep, r.perTxn, r.mode, r.system)
}

// plan is every produce run in order: per repetition, per case, per
// mode, the systems one after the other, so that a change in the
// machine's load falls on both systems' runs of a pair.
func plan(cfg config) []runSpec {
	var out []runSpec
	for rep := 1; rep <= cfg.reps; rep++ {
		for _, n := range cfg.cases {
			for _, m := range modes {
				for _, s := range cfg.systems {
					out = append(out, runSpec{rep: rep, perTxn: n, mode: m, system: s})
				}
			}
		}
	}
	return out
}

// readSpec is one read_committed read of a topic from its start.
type readSpec struct {
	perTxn int
	mode   string
	system string
}

func (r readSpec) String() string {
	return fmt.Sprintf("read_committed of %s on %s", topicName(r.mode, r.perTxn), r.system)
}

// readPlan reads every topic once, the systems interleaved.
func readPlan(cfg config) []readSpec {
	var out []readSpec
	for _, n := range cfg.cases {
		for _, m := range modes {
			for _, s := range cfg.systems {
				out = append(out, readSpec{perTxn: n, mode: m, system: s})
			}
		}
	}
	return out
}

// runResult is one timed produce run's figures.
type runResult struct {
	runSpec
	produced
	load1 float64 // 1-minute load average at the start of the run
}

func (r runResult) recordsPerSec() float64 { return float64(r.records) / r.elapsed.Seconds() }

// readOutcome is one read's figures and the records it expected.
type readOutcome struct {
	readSpec
	readResult
	want uint64
}

func (r readOutcome) recordsPerSec() float64 { return float64(r.records) / r.elapsed.Seconds() }

// exp is a run in progress: the started systems and every topic's next
// sequence number (the count of records produced to it so far).
type exp struct {
	cfg     config
	servers map[string]*server
	next    map[string]map[string]*uint64 // system → topic → next sequence number
}

func run(ctx context.Context, cfg config) (string, error) {
	s, err := harness.Start(cfg.Out, cfg.Quick)
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cfg.Dir, "varve-txnbench-")
	if err != nil {
		return "", err
	}
	if !cfg.keep {
		defer os.RemoveAll(tmp)
	}
	e := &exp{cfg: cfg, servers: map[string]*server{}, next: map[string]map[string]*uint64{}}
	defer e.stop()
	if err := e.start(ctx, tmp); err != nil {
		return "", err
	}
	runs, reads := plan(cfg), readPlan(cfg)
	s.Bar = progress.New(os.Stderr, len(runs)+len(reads), !cfg.NoProgress)
	results, err := harness.Execute(ctx, s.Bar, runs, e.produceRun)
	var outs []readOutcome
	if err == nil {
		outs, err = harness.Execute(ctx, s.Bar, reads, e.readRun)
	}
	s.End()
	settings := e.settings()
	e.stop()
	if len(results) == 0 {
		return s.Out, err
	}
	return s.Out, errors.Join(err, writeResults(s, cfg, settings, results, outs))
}

// start builds and starts every system of the run and creates its
// topics; the servers run until stop.
func (e *exp) start(ctx context.Context, tmp string) error {
	var topics []string
	for _, n := range e.cfg.cases {
		for _, m := range modes {
			topics = append(topics, topicName(m, n))
		}
	}
	for _, name := range e.cfg.systems {
		fmt.Fprintln(os.Stderr, "== starting", name)
		sv, err := e.startOne(ctx, name, tmp)
		if err != nil {
			return err
		}
		e.servers[name] = sv
		if err := createTopics(ctx, sv, e.cfg.partitions, append(topics, primeTopic)); err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "== priming", name, "with", e.cfg.prime, "of transactions")
		if err := prime(ctx, sv, e.cfg); err != nil {
			return err
		}
		e.next[name] = map[string]*uint64{}
		for _, t := range topics {
			e.next[name][t] = new(uint64)
		}
	}
	return nil
}

func (e *exp) startOne(ctx context.Context, name, tmp string) (*server, error) {
	if name == sysKafka {
		return startKafka(ctx, e.cfg, filepath.Join(tmp, "kafka"))
	}
	bin, cleanup, err := varveproc.Binary(e.cfg.varveBin)
	if name == sysVarveBase {
		bin, cleanup, err = buildRevision(ctx, e.cfg.baseRev, tmp)
	}
	if err != nil {
		return nil, err
	}
	sv, err := startVarve(bin)
	if err != nil {
		cleanup()
		return nil, err
	}
	sv.name = name
	if name == sysVarveBase {
		sv.settings = "`varve server` built from revision " + e.cfg.baseRev + ", otherwise as varve"
	}
	stop := sv.stop
	sv.stop = func() { stop(); cleanup() }
	return sv, nil
}

// buildRevision builds ./cmd/varve as it is at git revision rev (git
// archive into a directory under tmp, then go build there).
func buildRevision(ctx context.Context, rev, tmp string) (string, func(), error) {
	src, err := os.MkdirTemp(tmp, "base-src-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(src) }
	script := "git archive --format=tar " + shellQuote(rev) + " | tar -x -C " + shellQuote(src)
	if out, err := exec.CommandContext(ctx, "sh", "-c", script).CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("git archive %s (run from the repository): %w\n%s", rev, err, out)
	}
	bin := filepath.Join(src, "varve-base")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/varve")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("go build ./cmd/varve at %s: %w\n%s", rev, err, out)
	}
	return bin, cleanup, nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// primeTopic takes the transactions that prime a system.
const primeTopic = "prime"

// prime commits one-record transactions for cfg.prime, untimed: the
// first transaction creates __transaction_state and loads its
// coordinator, and a JVM compiles its hot paths, before any timed run.
func prime(ctx context.Context, sv *server, cfg config) error {
	var next uint64
	p, err := newProducer(sv.addr, primeTopic, modeTxn, cfg.recordSize, &next, cfg.txnBackoff, cfg.clientTV1)
	if err != nil {
		return err
	}
	defer p.close()
	ctx, cancel := context.WithTimeout(ctx, cfg.prime+runSlack)
	defer cancel()
	if _, err := produceFor(ctx, p, 1, cfg.prime, 0); err != nil {
		return fmt.Errorf("%s: prime: %w", sv.name, err)
	}
	return nil
}

// stop stops every started system; a second call does nothing.
func (e *exp) stop() {
	for name, sv := range e.servers {
		sv.stop()
		delete(e.servers, name)
	}
}

// settings are how each system ran, for the summary, by system name.
func (e *exp) settings() map[string]string {
	out := map[string]string{}
	for name, sv := range e.servers {
		out[name] = sv.settings
	}
	return out
}

func (e *exp) produceRun(ctx context.Context, r runSpec) (runResult, error) {
	sv, topic := e.servers[r.system], topicName(r.mode, r.perTxn)
	res := runResult{runSpec: r, load1: machine.Load1()}
	p, err := newProducer(sv.addr, topic, r.mode, e.cfg.recordSize, e.next[r.system][topic], e.cfg.txnBackoff, e.cfg.clientTV1)
	if err != nil {
		return res, err
	}
	defer p.close()
	ctx, cancel := context.WithTimeout(ctx, e.cfg.warmup+e.cfg.duration+runSlack)
	defer cancel()
	res.produced, err = produceFor(ctx, p, r.perTxn, e.cfg.warmup, e.cfg.duration)
	return res, err
}

func (e *exp) readRun(ctx context.Context, r readSpec) (readOutcome, error) {
	sv, topic := e.servers[r.system], topicName(r.mode, r.perTxn)
	want := *e.next[r.system][topic]
	res, err := readCommitted(ctx, sv.addr, topic, want, e.cfg.readTimeout)
	return readOutcome{readSpec: r, readResult: res, want: want}, err
}
