package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/experiments/internal/harness"
	"github.com/varve/varve/experiments/internal/progress"
)

// topic is the partition the trials produce to: replication factor 3,
// min.insync.replicas 2, one partition.
const topic = "failover"

// outcome is one system's run: its trials, the full read's verdict and
// why it stopped early, if it did.
type outcome struct {
	system   string
	settings string
	trials   []trial
	verdict  verdict
	failed   int // produces that ended in an error
	err      error
}

func run(ctx context.Context, cfg config) (string, error) {
	s, err := harness.Start(cfg.Out, cfg.Quick)
	if err != nil {
		return "", err
	}
	tmp, err := cfg.tempRoot()
	if err != nil {
		return "", err
	}
	if !cfg.keep {
		defer os.RemoveAll(tmp)
	}
	s.Bar = progress.New(os.Stderr, len(cfg.systems)*len(cfg.scenarios)*cfg.trials, !cfg.NoProgress)
	var outs []outcome
	for _, name := range cfg.systems {
		o := runSystem(ctx, cfg, s.Bar, name, tmp)
		outs = append(outs, o)
		if ctx.Err() != nil {
			break
		}
	}
	s.End()
	if err := writeResults(s, cfg, outs); err != nil {
		return s.Out, err
	}
	var errs []error
	for _, o := range outs {
		if o.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o.system, o.err))
		}
	}
	return s.Out, errors.Join(errs...)
}

// runSystem starts one system, runs every scenario's trials on it,
// reads the partition back and stops it. An error ends the system's
// run; what was measured before it is kept.
func runSystem(ctx context.Context, cfg config, bar *progress.Bar, name, tmp string) outcome {
	o := outcome{system: name}
	bar.Stage("starting " + name)
	start := startVarve
	if name == sysKafka {
		start = startKafka
	}
	sys, stop, err := start(ctx, cfg, tmp)
	if err != nil {
		o.err = err
		return o
	}
	defer stop()
	o.settings = sys.settings
	if err := createTopic(ctx, sys.bootstrap()); err != nil {
		o.err = err
		return o
	}
	r := &runner{cfg: cfg, sys: sys, topic: topic, log: os.Stderr}
	if r.pr, err = newProbes(sys); err != nil {
		o.err = err
		return o
	}
	defer r.pr.close()
	var clog io.Writer
	if cfg.clientLog != "" {
		f, err := os.Create(cfg.clientLog + "." + name)
		if err != nil {
			o.err = err
			return o
		}
		defer f.Close()
		clog = f
	}
	if r.prod, err = startProducer(sys.bootstrap(), topic, cfg.trialTimeout, clog); err != nil {
		o.err = err
		return o
	}
	rd, err := startReader(sys.bootstrap(), topic, cfg.trialTimeout)
	if err != nil {
		o.err = err
		return o
	}
	o.trials, o.err = r.all(ctx, bar)
	if ctx.Err() == nil {
		if err := r.complete(ctx); err != nil { // every node back before the read
			o.err = errors.Join(o.err, err)
		}
	}
	acks, reads := r.prod.stop(), rd.stop()
	o.failed, _ = r.prod.failures()
	if ctx.Err() != nil {
		return o
	}
	read, err := readBack(ctx, sys.bootstrap(), topic, cfg.trialTimeout)
	if err != nil {
		o.err = errors.Join(o.err, err)
		return o
	}
	o.verdict = check(acks, read)
	firstNewLeaderAcks(o.trials, acks, read)
	firstNewLeaderReads(o.trials, reads)
	return o
}

// all runs every scenario's trials in order; a failed trial is kept
// with its error and ends the system's run (the cluster may be broken).
func (r *runner) all(ctx context.Context, bar *progress.Bar) ([]trial, error) {
	var out []trial
	for _, scn := range r.cfg.scenarios {
		for n := 1; n <= r.cfg.trials; n++ {
			t := trial{System: r.sys.name, Scenario: scn, N: n}
			bar.Stage(t.String())
			err := r.one(ctx, &t)
			if err != nil {
				t.Err = err.Error()
			}
			fmt.Fprintf(r.log, "%s: node %d (also %v), new leader after %v, %d acks so far %s\n",
				t, t.Victim, t.Also, t.Moved.Round(time.Millisecond), r.prod.count(), t.Err)
			out = append(out, t)
			if err != nil {
				return out, fmt.Errorf("%s: %w", t, err)
			}
			bar.Done()
		}
	}
	return out, nil
}

// createTopic creates the trials' topic: one partition on all three
// nodes, min.insync.replicas=2.
func createTopic(ctx context.Context, bootstrap []string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap...))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	minISR := "2"
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 3, map[string]*string{"min.insync.replicas": &minISR}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return nil
}

// resultsDir is where the run's files go (created by harness.Start).
func resultsDir(s *harness.Session, file string) string { return filepath.Join(s.Out, file) }
