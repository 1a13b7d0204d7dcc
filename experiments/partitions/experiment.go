package main

import (
	"context"
	"os"
	"slices"

	"github.com/varve/varve/experiments/internal/harness"
	"github.com/varve/varve/experiments/internal/progress"
)

// experiment is the state of one invocation.
type experiment struct {
	*harness.Session
	cfg     config
	results []result
}

// run performs the whole experiment and writes its outputs; it returns the
// results directory.
func run(ctx context.Context, cfg config) (string, error) {
	slices.Sort(cfg.partitions)
	s, err := harness.Start(cfg.Out, cfg.Quick)
	if err != nil {
		return "", err
	}
	e := &experiment{Session: s, cfg: cfg}
	plan := e.plan()
	e.Bar = progress.New(os.Stderr, len(plan), !cfg.NoProgress)
	err = e.execute(ctx, plan)
	e.End()
	if err != nil {
		return "", err
	}
	return e.Out, e.writeOutputs(e.Out)
}

// execute calibrates and performs every run.
func (e *experiment) execute(ctx context.Context, plan []runSpec) error {
	err := e.LoadModel(ctx, e.cfg.ModelOptions(e.cfg.calibration))
	if err != nil {
		return err
	}
	e.results, err = harness.Execute(ctx, e.Bar, plan, func(ctx context.Context, spec runSpec) (result, error) {
		res, err := e.runOne(ctx, spec)
		return e.withModel(res), err
	})
	return err
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
