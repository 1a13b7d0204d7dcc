package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/varve/varve/experiments/internal/harness"
)

// spec is one measured point.
type spec struct {
	workload, design string
	conns, rep       int
}

func (s spec) String() string {
	return fmt.Sprintf("%s %s x%d #%d", s.workload, s.design, s.conns, s.rep+1)
}

// plan lists the points: repetitions outermost, the two designs adjacent
// (their order alternating between repetitions) so that drift in the
// machine's load touches both alike.
func plan(cfg config) []spec {
	var out []spec
	for rep := range cfg.reps {
		for _, w := range cfg.workloads {
			for _, n := range cfg.conns {
				designs := append([]string(nil), cfg.designs...)
				if rep%2 == 1 {
					for i, j := 0, len(designs)-1; i < j; i, j = i+1, j-1 {
						designs[i], designs[j] = designs[j], designs[i]
					}
				}
				for _, d := range designs {
					out = append(out, spec{workload: w, design: d, conns: n, rep: rep})
				}
			}
		}
	}
	return out
}

// run is the orchestrator: every point, then CSV, plots and summary.
func run(ctx context.Context, cfg config) (string, error) {
	dir := outputDir(cfg)
	if cfg.replot {
		return dir, replot(dir, cfg)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("output dir: %w", err)
	}
	nofile, err := raiseNofile()
	if err != nil {
		return "", err
	}
	mach := describeMachine(nofile)
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find own executable: %w", err)
	}
	file, err := makeRegionFile()
	if err != nil {
		return "", err
	}
	defer os.Remove(file)

	points := plan(cfg)
	pr := newProgress(len(points), cfg.progress)
	began := time.Now()
	var rows []row
	for _, sp := range points {
		pr.stage(sp.String())
		r, err := runPoint(ctx, cfg, self, file, sp)
		if err != nil {
			pr.finish()
			return dir, fmt.Errorf("%s: %w", sp, err)
		}
		rows = append(rows, r)
		if err := writeCSV(filepath.Join(dir, "results.csv"), rows); err != nil {
			pr.finish()
			return dir, err
		}
		pr.done()
	}
	pr.finish()
	mach.LoadEnd = loadAverage()
	elapsed := time.Since(began)
	plots, err := writePlots(dir, cfg, rows)
	if err != nil {
		return dir, err
	}
	return dir, writeSummary(filepath.Join(dir, "summary.md"), cfg, mach, rows, plots, elapsed)
}

// replot redraws the plots of an earlier run.
func replot(dir string, cfg config) error {
	rows, err := readCSV(filepath.Join(dir, "results.csv"))
	if err != nil {
		return err
	}
	_, err = writePlots(dir, cfg, rows)
	return err
}

// outputDir is -out, or results/<YYYY-MM-DD> (results/quick with -quick)
// next to this command's source when run from the repository root.
func outputDir(cfg config) string {
	if cfg.out != "" {
		return cfg.out
	}
	base := "results"
	if st, err := os.Stat(filepath.Join("experiments", "reactor")); err == nil && st.IsDir() {
		base = filepath.Join("experiments", "reactor", "results")
	}
	return harness.OutDir(base, time.Now(), cfg.quick)
}

// makeRegionFile writes the file the region workload sends from.
func makeRegionFile() (string, error) {
	f, err := os.CreateTemp("", "reactor-region-*")
	if err != nil {
		return "", fmt.Errorf("region file: %w", err)
	}
	defer f.Close()
	data := make([]byte, regionFile)
	rand.NewChaCha8([32]byte{7}).Read(data)
	if _, err := f.Write(data); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("region file: %w", err)
	}
	return f.Name(), nil
}

// runPoint runs one server and one load generator and collects both reports.
func runPoint(ctx context.Context, cfg config, self, file string, sp spec) (row, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.warmup+cfg.duration+dialDeadline+time.Minute)
	defer cancel()
	srv, err := startChild(ctx, "server", self, "-role", "server", "-design", sp.design, "-workload", sp.workload, "-file", file)
	if err != nil {
		return row{}, err
	}
	addr, err := srv.expect(ctx, lineAddr)
	if err != nil {
		return row{}, errors.Join(err, srv.finish())
	}
	lg, err := startChild(ctx, "loadgen", self, "-role", "loadgen", "-addr", addr,
		"-conns", strconv.Itoa(sp.conns), "-workload", sp.workload,
		"-warmup", cfg.warmup.String(), "-duration", cfg.duration.String(),
		"-max-requests", strconv.FormatInt(cfg.maxRequests, 10))
	if err != nil {
		return row{}, errors.Join(err, srv.finish())
	}
	sr, lr, err := measure(ctx, srv, lg)
	if ferr := lg.finish(); err == nil {
		err = ferr
	}
	if ferr := srv.finish(); err == nil {
		err = ferr
	}
	return makeRow(sp, sr, lr), err
}

// measure follows the load generator's phases and marks the server's window.
func measure(ctx context.Context, srv, lg *child) (serverReport, loadReport, error) {
	var sr serverReport
	var lr loadReport
	steps := []func() error{
		func() error { _, err := lg.expect(ctx, lineConnected); return err },
		func() error { _, err := lg.expect(ctx, lineStart); return err },
		func() error { return srv.send(lineMark) },
		func() error { _, err := srv.expect(ctx, lineOK); return err },
		func() error { _, err := lg.expect(ctx, lineStop); return err },
		func() error { return srv.send(lineReport) },
		func() error { return srv.readJSON(ctx, &sr) },
		func() error { return lg.send(lineClose) },
		func() error { return lg.readJSON(ctx, &lr) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return sr, lr, err
		}
	}
	return sr, lr, nil
}

// commandLine is how the run was invoked, for the summary.
func commandLine() string {
	return "go run ./experiments/reactor " + strings.Join(os.Args[1:], " ")
}
