package harness

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/varve/varve/diskmodel"
	"github.com/varve/varve/experiments/internal/machine"
	"github.com/varve/varve/experiments/internal/progress"
)

// Main is an experiment's whole main function: it parses the arguments,
// runs the experiment on a context that Ctrl-C cancels, and prints where
// the results are. A flag error exits 2, a failed run 1; -h exits 0.
func Main[C any](name string, parse func(args []string) (C, error), run func(context.Context, C) (string, error)) {
	cfg, err := parse(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	dir, err := run(ctx, cfg)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
	fmt.Println("results in", dir)
}

// OutDir is the folder a run writes into under base (an experiment's
// results/): <YYYY-MM-DD> of started (UTC) for a full run, quick for a
// -quick run.
func OutDir(base string, started time.Time, quick bool) string {
	if quick {
		return filepath.Join(base, "quick")
	}
	return filepath.Join(base, started.UTC().Format(time.DateOnly))
}

// Session is the state every experiment keeps while it runs: when, where,
// on what machine, beside which disk model, and its progress bar.
type Session struct {
	Quick   bool
	Out     string // the results folder, created by Start
	Started time.Time
	Ended   time.Time
	Machine machine.Info
	Model   *diskmodel.Calibration // nil when the model was skipped
	Bar     *progress.Bar          // set by the experiment once it knows its plan
}

// Start begins a run: it notes the time and the machine and creates the
// results folder under base.
func Start(base string, quick bool) (*Session, error) {
	s := &Session{Quick: quick, Started: time.Now(), Machine: machine.Read()}
	s.Out = OutDir(base, s.Started, quick)
	if err := os.MkdirAll(s.Out, 0o755); err != nil {
		return nil, err
	}
	return s, nil
}

// ModelOptions says where the disk model comes from.
type ModelOptions struct {
	Dir    string                 // the directory whose disk is modelled (and the calibration cached)
	MaxAge time.Duration          // a cached calibration younger than this is reused; 0: diskmodel.DefaultMaxAge
	Quick  bool                   // a short calibration
	Given  *diskmodel.Calibration // use this one instead (tests)
	Skip   bool                   // no model: ratios are left out
}

// LoadModel sets s.Model, calibrating the disk (or reusing a recent
// calibration) under a progress stage.
func (s *Session) LoadModel(ctx context.Context, o ModelOptions) error {
	switch {
	case o.Given != nil:
		s.Model = o.Given
		return nil
	case o.Skip:
		return nil
	}
	if o.MaxAge == 0 {
		o.MaxAge = diskmodel.DefaultMaxAge
	}
	s.stage("calibrating the disk model")
	c, err := diskmodel.LoadOrCalibrate(ctx, o.Dir, o.MaxAge, diskmodel.Options{Quick: o.Quick})
	if err != nil {
		return fmt.Errorf("disk model: %w", err)
	}
	s.Model = &c
	return nil
}

func (s *Session) stage(name string) {
	if s.Bar != nil {
		s.Bar.Stage(name)
	}
}

// End closes the progress bar and notes the end time and load.
func (s *Session) End() {
	if s.Bar != nil {
		s.Bar.Finish()
	}
	s.Ended = time.Now()
	s.Machine.LoadEnd = machine.LoadAvg()
}

// Elapsed is the run's length, rounded to the second.
func (s *Session) Elapsed() time.Duration { return s.Ended.Sub(s.Started).Round(time.Second) }

// Execute performs the runs of plan in order, each as one stage of bar,
// and returns their results. It stops at the first error (naming the
// run) or when ctx is cancelled.
func Execute[S fmt.Stringer, R any](ctx context.Context, bar *progress.Bar, plan []S, one func(context.Context, S) (R, error)) ([]R, error) {
	out := make([]R, 0, len(plan))
	for _, spec := range plan {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if bar != nil {
			bar.Stage(spec.String())
		}
		res, err := one(ctx, spec)
		if err != nil {
			return out, fmt.Errorf("%s: %w", spec, err)
		}
		out = append(out, res)
		if bar != nil {
			bar.Done()
		}
	}
	return out, nil
}
