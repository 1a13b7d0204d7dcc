package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/varve/varve/experiments/internal/harness"
	"github.com/varve/varve/experiments/internal/progress"
	"github.com/varve/varve/experiments/internal/varveproc"
)

// experiment is one run: its settings, the binary, the session and the
// results.
type experiment struct {
	cfg     config
	bin     string
	cleanup func()
	s       *harness.Session
	creates []createResult
	probes  []probeResult
	sizes   []propagateCase
}

func newExperiment(cfg config) (*experiment, error) {
	bin, cleanup, err := varveproc.Binary(cfg.varve)
	if err != nil {
		return nil, err
	}
	s, err := harness.Start(cfg.out, cfg.quick)
	if err != nil {
		cleanup()
		return nil, err
	}
	return &experiment{cfg: cfg, bin: bin, cleanup: cleanup, s: s}, nil
}

func (e *experiment) close() { e.cleanup() }

// createPlan is the creation cases: 1 and 10 partitions per topic,
// sequential and batched.
func (e *experiment) createPlan() []createCase {
	var plan []createCase
	for _, p := range []int{1, 10} {
		plan = append(plan, createCase{partitions: p, topics: e.cfg.seqTopics},
			createCase{partitions: p, batched: true, topics: e.cfg.batches * batchSize})
	}
	return plan
}

// propagatePlan is the sizes, each with the reason the machine cannot
// hold it, if any.
func (e *experiment) propagatePlan() []propagateCase {
	var plan []propagateCase
	for _, n := range e.cfg.sizes {
		plan = append(plan, propagateCase{size: n, skip: capacity(n + e.cfg.probes)})
	}
	return plan
}

// capacity says why one process cannot hold n partitions' logs here,
// or "" when it can: every replica's active segment keeps its .log
// open and maps its two indexes (segment/doc.go), and with replication
// factor 3 on three nodes every node holds every partition.
func capacity(n int) string {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err == nil && lim.Max < uint64(n)+2048 {
		return fmt.Sprintf("RLIMIT_NOFILE's hard limit is %d: a node needs about %d descriptors for %d logs", lim.Max, n+2048, n)
	}
	if maps := maxMapCount(); maps > 0 && maps < 2*n+8192 {
		return fmt.Sprintf("vm.max_map_count is %d: a node needs about %d mappings for %d logs", maps, 2*n+8192, n)
	}
	return ""
}

func maxMapCount() int {
	b, err := os.ReadFile("/proc/sys/vm/max_map_count")
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// runAll runs the creation cases, then the propagation sizes.
func (e *experiment) runAll(ctx context.Context) error {
	cplan := e.createPlan()
	e.sizes = e.propagatePlan()
	var pplan []propagateCase
	for _, c := range e.sizes {
		if c.skip == "" {
			pplan = append(pplan, c)
		}
	}
	e.s.Bar = progress.New(os.Stderr, len(cplan)+len(pplan), !e.cfg.noProgress)
	var err error
	e.creates, err = harness.Execute(ctx, e.s.Bar, cplan, e.runCreate)
	if err == nil {
		var per [][]probeResult
		per, err = harness.Execute(ctx, e.s.Bar, pplan, e.runPropagate)
		for _, rs := range per {
			e.probes = append(e.probes, rs...)
		}
	}
	e.s.End()
	return err
}
