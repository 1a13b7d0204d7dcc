package main

import (
	"context"
	"fmt"
	"os"

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
		res.model = e.predict(res)
		return res, err
	})
	return err
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
func sizeName(n int) string { return harness.SizeName(int64(n)) }
