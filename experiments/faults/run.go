package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/varve/varve/chaos"
	"github.com/varve/varve/experiments/internal/harness"
	"github.com/varve/varve/experiments/internal/machine"
	"github.com/varve/varve/internal/localcluster"
)

const topic = "soak"

// soak is one run's cluster, clients and what they recorded.
type soak struct {
	cfg      config
	session  *harness.Session
	cluster  *chaos.Cluster
	roles    *chaos.Roles
	history  *chaos.History
	schedule chaos.Schedule
	stuck    error // the cluster did not recover (ISRs not full)
	report   chaos.Report
}

func run(ctx context.Context, c config) (string, error) {
	session, err := harness.Start(c.Out, c.Quick)
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp("", "varve-faults-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	s := &soak{cfg: c, session: session}
	if err := s.start(ctx, tmp); err != nil {
		return "", err
	}
	runErr := s.apply(ctx)
	s.session.Machine.LoadEnd = machine.LoadAvg()
	s.session.Ended = time.Now()
	closeErr := s.cluster.Close()
	s.roles.Close()
	if err := s.write(tmp); err != nil {
		return "", err
	}
	if err := errors.Join(runErr, closeErr, s.stuck); err != nil {
		return session.Out, fmt.Errorf("seed %d: %w", c.Seed, err)
	}
	if !s.report.OK() {
		return session.Out, fmt.Errorf("seed %d: %d anomalies (see %s)", c.Seed, len(s.report.Anomalies), filepath.Join(session.Out, "summary.md"))
	}
	return session.Out, nil
}

// start builds varve, starts the cluster and creates the topic.
func (s *soak) start(ctx context.Context, tmp string) error {
	bin, err := chaos.BuildVarve(tmp)
	if err != nil {
		return err
	}
	s.cluster, err = chaos.StartCluster(localcluster.Options{Dir: filepath.Join(tmp, "cluster"), Binary: bin,
		LogLevel: s.cfg.LogLevel, Props: chaos.ShortTimeouts()})
	if err != nil {
		return err
	}
	if s.roles, err = s.cluster.Roles(); err != nil {
		return errors.Join(err, s.cluster.Close())
	}
	minISR := "2"
	err = chaos.CreateTopicWith(ctx, s.cluster.Brokers(), topic, int32(s.cfg.Partitions), 3,
		map[string]*string{"min.insync.replicas": &minISR}, s.cluster.ClientOpts()...)
	if err == nil {
		err = s.settle(ctx)
	}
	if err != nil {
		s.roles.Close()
		return errors.Join(err, s.cluster.Close())
	}
	return nil
}

func (s *soak) settle(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return s.roles.FullISR(ctx, topic, s.cfg.Partitions)
}

// scheduleOptions draw every kind of fault against a drawn node, a
// partition's leader or the active controller; pauses and cuts outlast
// the session timeout (3 s) often enough to fence the node.
func (s *soak) scheduleOptions() chaos.ScheduleOptions {
	gap := 4 * time.Second
	return chaos.ScheduleOptions{Count: int(s.cfg.Duration/gap) + 1, Nodes: 3, Partitions: int32(s.cfg.Partitions),
		Kinds:   []chaos.Kind{chaos.Kill, chaos.Pause, chaos.Restart, chaos.Cut, chaos.Isolate},
		Targets: []chaos.Target{chaos.Drawn, chaos.PartitionLeader, chaos.ActiveController},
		First:   5 * time.Second, Gap: [2]time.Duration{2 * time.Second, 6 * time.Second},
		Hold: [2]time.Duration{500 * time.Millisecond, 4 * time.Second}, OneWayCut: true,
		KindHold: map[chaos.Kind][2]time.Duration{
			chaos.Pause:   {3500 * time.Millisecond, 8 * time.Second},
			chaos.Isolate: {3500 * time.Millisecond, 10 * time.Second},
			chaos.Cut:     {2 * time.Second, 10 * time.Second},
		}}
}

// apply runs the workload under the schedule for the run's duration,
// heals, and takes the final read and the checkers' verdict.
func (s *soak) apply(ctx context.Context) error {
	s.history = chaos.NewHistory()
	w, err := chaos.StartWorkload(s.history, chaos.WorkloadConfig{Brokers: s.cluster.Brokers(), Topic: topic,
		Partitions: int32(s.cfg.Partitions), Producers: s.cfg.Producers, GroupConsumers: 2, AssignedConsumers: 1,
		Group: "soak-readers", AppendTimeout: 15 * time.Second, Interval: 2 * time.Millisecond,
		ClientOpts: s.cluster.ClientOpts()})
	if err != nil {
		return err
	}
	s.schedule = chaos.NewSchedule(s.cfg.Seed, s.scheduleOptions())
	stopProgress := s.progress()
	runCtx, cancel := context.WithTimeout(ctx, s.cfg.Duration)
	runErr := s.cluster.FaultRunner(s.history, s.roles, topic, s.cfg.Partitions, time.Minute).Run(runCtx, s.schedule)
	timeUp := runCtx.Err() != nil && ctx.Err() == nil
	cancel()
	if timeUp && errors.Is(runErr, context.DeadlineExceeded) {
		runErr = nil // the run's time is up, mid-schedule
	}
	stopProgress()
	s.history.Note("healed everything")
	if err := s.cluster.Net.HealAll(); err != nil {
		runErr = errors.Join(runErr, err)
	}
	if err := s.settle(ctx); err != nil {
		s.stuck = fmt.Errorf("after the last fault healed: %w", err)
	}
	time.Sleep(3 * time.Second) // appends and reads after the heal
	w.Stop()
	if s.history.Final, err = chaos.FullRead(ctx, s.cluster.Brokers(), topic, s.cluster.ClientOpts()...); err != nil {
		return errors.Join(runErr, err)
	}
	s.report = chaos.Check(s.history)
	return runErr
}

// progress prints a line every 30 s until the returned func is called.
func (s *soak) progress() (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(30 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				ok := 0
				for _, a := range s.history.Appends() {
					if a.Outcome == chaos.OK {
						ok++
					}
				}
				fmt.Fprintf(os.Stderr, "faults: %v of %v, %d appends acknowledged, %d events\n",
					s.history.Now().Round(time.Second), s.cfg.Duration, ok, len(s.history.Events()))
			}
		}
	}()
	return func() { close(done) }
}
