package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/varve/varve/experiments/internal/harness"
	"github.com/varve/varve/experiments/internal/pingpong"
)

// experiment is one run: the session, the cluster, what was measured.
type experiment struct {
	cfg config
	s   *harness.Session
	tb  *testbed
	cal calibration
	out samples
}

func run(ctx context.Context, cfg config) (string, error) {
	s, err := harness.Start(cfg.common.Out, cfg.common.Quick)
	if err != nil {
		return "", err
	}
	e := &experiment{cfg: cfg, s: s}
	if err := s.LoadModel(ctx, cfg.common.ModelOptions(nil)); err != nil {
		return "", err
	}
	bin, cleanup, err := varveBinary(cfg.varve)
	if err != nil {
		return "", err
	}
	defer cleanup()
	if err := e.calibrate(ctx); err != nil {
		return "", fmt.Errorf("calibrate: %w", err)
	}
	if err := e.measure(ctx, bin); err != nil {
		return "", err
	}
	s.End()
	return s.Out, e.write()
}

// calibrate measures the models' inputs, before any node runs.
func (e *experiment) calibrate(ctx context.Context) error {
	fmt.Println("calibrating: TCP ping-pong, loopback copy, sendfile, follower append")
	d := time.Second
	fileSize, appendSize := int64(256<<20), int64(256<<20)
	if e.cfg.common.Quick {
		d, fileSize, appendSize = 500*time.Millisecond, 64<<20, 64<<20
	}
	var err error
	c := &e.cal
	c.Cores = runtime.NumCPU()
	rtt, err := pingpong.Child(ctx, 100, d)
	if err != nil {
		return err
	}
	c.RTT = rtt.Median()
	// Limits: the best of three tries, since a shared machine only ever
	// takes capacity away from a measurement.
	if c.LoopbackBps, err = best(3, func() (float64, error) { return loopbackBandwidth(ctx, d) }); err != nil {
		return err
	}
	if c.SendfileBps, err = best(3, func() (float64, error) { return sendfileBandwidth(ctx, e.cfg.common.Dir, fileSize, d) }); err != nil {
		return err
	}
	if c.AppendBps, err = best(3, func() (float64, error) { return followerAppendRate(e.cfg.common.Dir, appendSize) }); err != nil {
		return err
	}
	if c.Append, err = followerAppendLatency(e.cfg.common.Dir, 2000, 0); err != nil {
		return err
	}
	if c.AppendFlush, err = followerAppendLatency(e.cfg.common.Dir, 200, 1); err != nil {
		return err
	}
	if m := e.s.Model; m != nil {
		c.DiskFsync4K, c.PageCacheBps = m.Fsync4K, m.PageCacheWriteBps
	}
	fmt.Printf("RTT %v, loopback %.0f MB/s, sendfile %.0f MB/s, follower append %.0f MB/s, %v a record (%v with fsync), diskmodel fsync 4 KiB %v\n",
		c.RTT, c.LoopbackBps/1e6, c.SendfileBps/1e6, c.AppendBps/1e6, c.Append, c.AppendFlush, c.DiskFsync4K)
	return nil
}

// measure runs every case on one three-node cluster.
func (e *experiment) measure(ctx context.Context, bin string) error {
	dir, err := os.MkdirTemp(e.cfg.common.Dir, "replication-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if e.tb, err = startCluster(bin, filepath.Join(dir, "cluster")); err != nil {
		return err
	}
	defer e.tb.c.Kill()
	for rep := range e.cfg.reps {
		// RF1 and RF3 alternate, so that a change in the machine's load
		// falls on both.
		if err := e.throughputRun(ctx, "rf1", 1, rep); err != nil {
			return fmt.Errorf("throughput rf1: %w", err)
		}
		if err := e.throughputRun(ctx, "rf3", 3, rep); err != nil {
			return fmt.Errorf("throughput rf3: %w", err)
		}
	}
	for rep := range e.cfg.reps {
		if err := e.latencyRun(ctx, "rf3", nil, rep); err != nil {
			return fmt.Errorf("latency: %w", err)
		}
		if err := e.latencyRun(ctx, "rf3-flush", map[string]string{"flush.messages": "1"}, rep); err != nil {
			return fmt.Errorf("latency with flush.messages=1: %w", err)
		}
	}
	if e.cfg.profile > 0 {
		if err := e.profileRun(ctx, bin); err != nil {
			return fmt.Errorf("profile: %w", err)
		}
	}
	if err := e.catchUpRun(ctx, "catchup", 0); err != nil {
		return fmt.Errorf("catch-up: %w", err)
	}
	if e.cfg.throttle > 0 {
		if err := e.catchUpRun(ctx, "catchup_throttled", e.cfg.throttle); err != nil {
			return fmt.Errorf("throttled catch-up: %w", err)
		}
	}
	return e.tb.close()
}

// varveBinary builds cmd/varve with -trimpath (so that the CPU profiles
// written to the results name the module's files, not where this
// machine keeps them), unless a binary is given.
func varveBinary(given string) (string, func(), error) {
	if given != "" {
		return given, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "varve-bin-")
	if err != nil {
		return "", nil, err
	}
	bin := filepath.Join(dir, "varve")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/varve")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("go build ./cmd/varve (run from the repository root): %w", err)
	}
	return bin, func() { os.RemoveAll(dir) }, nil
}

// best is the largest of n measurements.
func best(n int, measure func() (float64, error)) (float64, error) {
	var top float64
	for range n {
		v, err := measure()
		if err != nil {
			return 0, err
		}
		top = max(top, v)
	}
	return top, nil
}

func medianDuration(v []time.Duration) time.Duration {
	f := make([]float64, len(v))
	for i, d := range v {
		f[i] = float64(d)
	}
	return time.Duration(harness.Median(f))
}
