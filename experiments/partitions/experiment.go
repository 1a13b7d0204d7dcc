package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/varve/varve/diskmodel"
)

// experiment is the state of one invocation.
type experiment struct {
	cfg      config
	model    *diskmodel.Calibration
	progress *progressBar
	results  []result
	machine  machineInfo
	started  time.Time
	ended    time.Time
}

// run performs the whole experiment and writes its outputs; it returns the
// results directory.
func run(ctx context.Context, cfg config) (string, error) {
	slices.Sort(cfg.partitions)
	e := &experiment{cfg: cfg, started: time.Now(), machine: readMachine()}
	outDir := filepath.Join(cfg.out, e.started.Format("2006-01-02"))
	if cfg.quick {
		outDir += "-quick"
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", err
	}
	plan := e.plan()
	e.progress = newProgress(os.Stderr, len(plan), !cfg.noProgress)
	err := e.execute(ctx, plan)
	e.progress.Finish()
	e.ended = time.Now()
	e.machine.LoadEnd = loadAvg()
	if err != nil {
		return "", err
	}
	return outDir, e.writeOutputs(outDir)
}

// execute calibrates and performs every run.
func (e *experiment) execute(ctx context.Context, plan []runSpec) error {
	switch {
	case e.cfg.calibration != nil:
		e.model = e.cfg.calibration
	case !e.cfg.noModel:
		e.progress.Stage("calibrating the disk model")
		m, err := loadModel(ctx, e.cfg.dir, e.cfg.maxCalAge, e.cfg.quick)
		if err != nil {
			return fmt.Errorf("disk model: %w", err)
		}
		e.model = m
	}
	for _, spec := range plan {
		if err := ctx.Err(); err != nil {
			return err
		}
		e.progress.Stage(spec.String())
		res, err := e.runOne(ctx, spec)
		if err != nil {
			return fmt.Errorf("%s: %w", spec, err)
		}
		e.results = append(e.results, e.withModel(res))
		e.progress.Done()
	}
	return nil
}

// plan orders the runs with repetitions outermost, so slow drift in the
// machine's load spreads over every partition count.
func (e *experiment) plan() []runSpec {
	var out []runSpec
	for rep := range e.cfg.reps {
		for _, p := range e.cfg.policies {
			for _, n := range e.cfg.partitions {
				out = append(out, runSpec{policy: p, partitions: n, rep: rep})
			}
		}
	}
	return out
}
