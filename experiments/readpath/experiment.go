package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/varve/varve/diskmodel"
	"github.com/varve/varve/experiments/internal/harness"
)

// experiment is the state of one invocation.
type experiment struct {
	cfg      config
	ds       *dataset
	model    *diskmodel.Calibration
	progress *progress
	results  []result
	machine  machineInfo
	started  time.Time
	ended    time.Time
	writeSec float64 // time to write and fsync the log
	tls      tlsSetup
	ktls     ktlsProbe
}

// run performs the whole experiment and writes its outputs; it returns the
// results directory.
// With -role consumer it is the child process that reads for one
// consumer, fed by its parent through stdin.
func run(ctx context.Context, cfg config) (string, error) {
	if cfg.role == "consumer" {
		os.Exit(consumerMain(os.Stdin, os.Stdout))
	}
	e := &experiment{cfg: cfg, started: time.Now(), machine: readMachine(), ktls: probeKTLS()}
	outDir := harness.OutDir(cfg.out, e.started, cfg.quick)
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", err
	}
	dataDir, err := os.MkdirTemp(cfg.dir, "varve-readpath-")
	if err != nil {
		return "", err
	}
	if !cfg.keep {
		defer os.RemoveAll(dataDir)
	}
	plan := e.plan()
	e.progress = newProgress(os.Stderr, cfg.catchupBytes+planBytes(cfg, plan), !cfg.noProgress)
	err = e.execute(ctx, dataDir, plan)
	e.progress.finish()
	e.ended = time.Now()
	e.machine.LoadEnd = readLoadAvg()
	if err != nil {
		return "", err
	}
	return outDir, e.writeOutputs(outDir)
}

// execute calibrates, writes the log and performs every run.
func (e *experiment) execute(ctx context.Context, dataDir string, plan []runSpec) error {
	if !e.cfg.noModel {
		e.progress.stage("calibrating the disk model")
		m, err := loadModel(ctx, e.cfg.dir, e.cfg.quick)
		if err != nil {
			return fmt.Errorf("disk model: %w", err)
		}
		e.model = m
	}
	e.progress.stage("writing segments")
	var last int64
	t0 := time.Now()
	ds, err := writeDataset(dataDir, e.cfg.catchupBytes, e.cfg.segmentBytes, func(n int64) {
		e.progress.add(n - last)
		last = n
	})
	if err != nil {
		return err
	}
	e.writeSec = time.Since(t0).Seconds()
	e.ds = ds
	defer ds.close()
	for _, spec := range plan {
		if err := ctx.Err(); err != nil {
			return err
		}
		res, err := e.runOne(ctx, spec)
		if err != nil {
			return err
		}
		e.results = append(e.results, res)
	}
	return nil
}

// plan orders the runs: tail first (the log was just written), then
// catch-up; repetitions outermost so slow drift in the machine's load
// spreads over every path instead of biasing one.
func (e *experiment) plan() []runSpec {
	var out []runSpec
	for _, w := range e.cfg.workloads {
		for rep := range e.cfg.reps {
			for _, n := range e.cfg.consumers {
				for _, p := range e.cfg.paths {
					out = append(out, runSpec{workload: w, path: p, consumers: n, rep: rep})
				}
			}
		}
	}
	return out
}

// planBytes is the total the runs deliver, for the progress bar.
func planBytes(cfg config, plan []runSpec) int64 {
	var total int64
	for _, s := range plan {
		total += workloadBytes(cfg, s.workload)
	}
	return total
}

func workloadBytes(cfg config, workload string) int64 {
	if workload == workloadTail {
		return cfg.tailBytes * int64(cfg.tailPasses)
	}
	return cfg.catchupBytes
}
