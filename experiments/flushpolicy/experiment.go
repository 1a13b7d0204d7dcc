package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
		res.model = e.predict(res)
		e.results = append(e.results, res)
		e.progress.Done()
	}
	return nil
}

// plan orders the runs: repetitions outermost, so slow drift in the
// machine's load spreads over every policy instead of biasing one; the
// group-commit runs follow the policy runs of each repetition.
func (e *experiment) plan() []runSpec {
	var out []runSpec
	for rep := range e.cfg.reps {
		for _, b := range e.cfg.batchSizes {
			for _, p := range e.cfg.policies {
				if e.cfg.peers { // just before the log's run, so both see the same moment of the machine
					out = append(out, runSpec{policy: p, batchBytes: b, appenders: 1, raw: true, rep: rep})
				}
				out = append(out, runSpec{policy: p, batchBytes: b, appenders: 1, rep: rep})
			}
		}
		if e.cfg.noGroup {
			continue
		}
		for _, n := range e.cfg.appenders {
			out = append(out, runSpec{policy: policy{messages: 1}, batchBytes: e.cfg.groupBatch, appenders: n, group: true, rep: rep})
		}
	}
	return out
}

func (s runSpec) String() string {
	if s.group {
		return fmt.Sprintf("group commit %s x%d #%d", sizeName(s.batchBytes), s.appenders, s.rep+1)
	}
	if s.raw {
		return fmt.Sprintf("%s %s raw peer #%d", s.policy.name(), sizeName(s.batchBytes), s.rep+1)
	}
	return fmt.Sprintf("%s %s #%d", s.policy.name(), sizeName(s.batchBytes), s.rep+1)
}

// sizeName is 1KiB, 16KiB, 1MiB...
func sizeName(n int) string {
	if n >= 1<<30 && n%(1<<30) == 0 {
		return fmt.Sprintf("%dGiB", n>>30)
	}
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%dMiB", n>>20)
	}
	if n%(1<<10) == 0 {
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}
