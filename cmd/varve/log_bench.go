package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/varve/varve/benchmarks/storage"
	"github.com/varve/varve/diskmodel"
)

// varve log bench runs the storage benchmarks of issue 2 (package
// benchmarks/storage, the same workloads segment's testing.B benchmarks
// use) in a temporary directory, after calibrating the disk model there
// (cached for --calibration-max-age), and prints each figure beside the
// model's prediction, their ratio, the target and PASS or BELOW.

// benchOptions are the flags of varve log bench.
type benchOptions struct {
	dir        string
	size       string
	budget     time.Duration
	quick      bool
	json       bool
	noProgress bool
	maxAge     time.Duration
}

func init() { logCmd.AddCommand(newBenchCmd()) }

func newBenchCmd() *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run the storage benchmarks and compare them with the disk model",
		Long: `Run the storage benchmarks of the segment log (appends with and without an
fsync per batch, batch validation, warm reads by offset, sequential reads
from the page cache, recovery of an unclean log, allocations per append)
in a temporary directory under --dir, and print each figure beside the
prediction of the disk model calibrated on that directory, their ratio,
the target and PASS or BELOW. The calibration is cached in the directory.
Everything the benchmark writes is removed when it ends.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", os.TempDir(), "directory to benchmark (a temporary directory is made and removed inside it)")
	f.StringVar(&o.size, "size", "", "log size for the read, recovery and append workloads, e.g. 1GiB, 256MiB (default 1GiB, 64MiB with --quick)")
	f.DurationVar(&o.budget, "budget", 0, "time budget of each timed workload (default 2s, 200ms with --quick)")
	f.BoolVar(&o.quick, "quick", false, "small log, short runs and a quick calibration: every figure, roughly")
	f.BoolVar(&o.json, "json", false, "print the results as JSON")
	f.BoolVar(&o.noProgress, "no-progress", false, "do not show progress")
	f.DurationVar(&o.maxAge, "calibration-max-age", diskmodel.DefaultMaxAge, "reuse a cached calibration of --dir up to this age")
	return cmd
}

// benchResult is what --json prints.
type benchResult struct {
	Command     string                `json:"command"`
	LoadAvg     [2]float64            `json:"load_avg_1"` // at start and at end: other work on the machine
	Calibration diskmodel.Calibration `json:"calibration"`
	Report      storage.Report        `json:"report"`
}

func runBench(ctx context.Context, o benchOptions, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	size, err := parseBenchSize(o.size)
	if err != nil {
		return err
	}
	res := benchResult{Command: "varve log bench " + strings.Join(benchArgs(o), " ")}
	res.LoadAvg[0] = benchLoadAvg1()
	prog := newBenchProgress(stderr, o.noProgress)
	defer prog.wait()
	res.Calibration, err = benchCalibrate(ctx, o, prog)
	if err != nil {
		return err
	}
	res.Report, err = storage.Run(ctx, storage.Options{
		Dir: o.dir, LogBytes: size, Budget: o.budget, Quick: o.quick,
		Calibration: res.Calibration, Progress: prog,
	})
	prog.wait()
	if err != nil {
		return fmt.Errorf("log bench: %w", err)
	}
	res.LoadAvg[1] = benchLoadAvg1()
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	printBenchTable(stdout, res)
	return nil
}

// benchCalibrate loads the cached disk model of o.dir or measures it.
func benchCalibrate(ctx context.Context, o benchOptions, prog *benchProgress) (diskmodel.Calibration, error) {
	task := prog.Start("calibrate disk model", 0)
	c, err := diskmodel.LoadOrCalibrate(ctx, o.dir, o.maxAge, diskmodel.Options{Quick: o.quick})
	task.Done()
	if err != nil {
		return c, fmt.Errorf("log bench: calibrate %s: %w", o.dir, err)
	}
	return c, nil
}

// benchArgs renders the flags that were set, for the report.
func benchArgs(o benchOptions) []string {
	var a []string
	if o.dir != os.TempDir() {
		a = append(a, "--dir", o.dir)
	}
	if o.size != "" {
		a = append(a, "--size", o.size)
	}
	if o.budget != 0 {
		a = append(a, "--budget", o.budget.String())
	}
	if o.quick {
		a = append(a, "--quick")
	}
	if o.json {
		a = append(a, "--json")
	}
	return a
}

// parseBenchSize reads a byte count with an optional KiB, MiB or GiB suffix
// (or K, M, G); "" is 0, which means the default.
func parseBenchSize(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	var n int64
	if _, err := fmt.Sscanf(t, "%d", &n); err != nil || n <= 0 || fmt.Sprint(n) != t {
		return 0, fmt.Errorf("log bench: --size %q: want a positive number of bytes, e.g. 1GiB", s)
	}
	return n * mult, nil
}

// benchLoadAvg1 is the 1-minute load average, or -1 where /proc/loadavg is
// not readable.
func benchLoadAvg1() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	var l float64
	if _, err := fmt.Sscanf(string(data), "%f", &l); err != nil {
		return -1
	}
	return l
}
