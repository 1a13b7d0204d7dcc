package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/varve/varve/diskmodel"
)

// Sizes and budgets of the suite.
const (
	DefaultLogBytes int64 = 1 << 30  // issue 2: reads and recovery of a 1 GiB log
	QuickLogBytes   int64 = 64 << 20 // --quick
	DefaultBudget         = 2 * time.Second
	QuickBudget           = 200 * time.Millisecond
	// ReadBatchBytes is the batch size of the log the read and recovery
	// workloads use: Kafka's producer default batch.size (16384), so "a
	// batch" is what a default producer stores.
	ReadBatchBytes = 16 << 10
	// recordBytes is the approximate size of one record in the workloads'
	// batches.
	recordBytes = 1 << 10
	// seqReadBuffer is the size of each read of the sequential workload,
	// the unit diskmodel's page-cache read was calibrated with.
	seqReadBuffer = 1 << 20
	// recoveryReadBuffer is the read size of recovery's peer: the chunk
	// segment's recovery reads a segment with.
	recoveryReadBuffer = 4 << 20
)

// Batch sizes of the workloads (issue 2).
var (
	AppendBatchSizes   = []int{64 << 10, 256 << 10, 1 << 20}
	FsyncBatchSizes    = []int{4 << 10, 64 << 10, 256 << 10, 1 << 20}
	ValidateBatchSizes = []int{64 << 10, 1 << 20}
)

// Options configure a run of the suite.
type Options struct {
	// Dir is where the suite makes its private work directory (removed
	// when Run returns). Default os.TempDir(). The calibration must have
	// been taken on the same device.
	Dir string
	// LogBytes is the size of the log the read and recovery workloads use
	// and of each append workload. Default 1 GiB (Quick: 64 MiB).
	LogBytes int64
	// Budget bounds each workload measured by time (fsync appends,
	// validation, random reads, sequential passes). Default 2 s (Quick:
	// 200 ms).
	Budget time.Duration
	// Quick selects the small defaults: every figure, measured roughly.
	Quick bool
	// Calibration is the disk model of Dir's device (required).
	Calibration diskmodel.Calibration
	// Progress is told about each workload; nil shows nothing.
	Progress Progress
}

func (o Options) withDefaults() Options {
	if o.Dir == "" {
		o.Dir = os.TempDir()
	}
	if o.LogBytes <= 0 {
		o.LogBytes = DefaultLogBytes
		if o.Quick {
			o.LogBytes = QuickLogBytes
		}
	}
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
		if o.Quick {
			o.Budget = QuickBudget
		}
	}
	if o.Progress == nil {
		o.Progress = nopProgress{}
	}
	return o
}

// Report is the outcome of a run.
type Report struct {
	LogBytes int64         `json:"log_bytes"`
	Budget   time.Duration `json:"budget_ns"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	Figures  []Figure      `json:"figures"`
}

// suite is one run's state. It is used by one goroutine.
type suite struct {
	o    Options
	cal  diskmodel.Calibration
	work string
	figs []Figure
}

// Run measures every workload of issue 2 in a private directory under
// o.Dir and returns the figures, in this order: validation, allocations
// per append, appends without and with an fsync per batch, then the read
// log's build, sequential and random reads, and recovery. It removes
// everything it wrote before it returns, also on error or cancellation
// (checked between workloads).
func Run(ctx context.Context, o Options) (Report, error) {
	o = o.withDefaults()
	if err := o.Calibration.Validate(); err != nil {
		return Report{}, fmt.Errorf("storage: %w", err)
	}
	work, err := os.MkdirTemp(o.Dir, "varve-log-bench-*")
	if err != nil {
		return Report{}, fmt.Errorf("storage: %w", err)
	}
	defer os.RemoveAll(work)
	s := &suite{o: o, cal: o.Calibration, work: work}
	start := time.Now()
	for _, step := range []func() error{s.validation, s.allocations, s.appends, s.fsyncAppends, s.readsAndRecovery} {
		if err := ctx.Err(); err != nil {
			return s.report(start), fmt.Errorf("storage: %w", err)
		}
		if err := step(); err != nil {
			return s.report(start), err
		}
	}
	return s.report(start), nil
}

func (s *suite) report(start time.Time) Report {
	return Report{LogBytes: s.o.LogBytes, Budget: s.o.Budget, Elapsed: time.Since(start), Figures: s.figs}
}

func (s *suite) add(f Figure) { s.figs = append(s.figs, f) }

// dir makes a fresh directory for one workload.
func (s *suite) dir(name string) (string, error) {
	d := filepath.Join(s.work, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("storage: %w", err)
	}
	return d, nil
}

// task starts a progress task and returns it with the function that ends it.
func (s *suite) task(name string, total int64) Task {
	return s.o.Progress.Start(name, total)
}

// SizeName renders a batch size as 4KiB, 64KiB, 1MiB.
func SizeName(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%dKiB", n>>10)
}

// recordsFor is the number of ~1 KiB records in a batch of size bytes.
func recordsFor(size int) int { return max(1, size/recordBytes) }

// closeAll closes a log and joins its error with err.
func closeAll(err error, closers ...interface{ Close() error }) error {
	for _, c := range closers {
		if c != nil {
			err = errors.Join(err, c.Close())
		}
	}
	return err
}
