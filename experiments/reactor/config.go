package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Workloads: every request carries a 100-byte body.
const (
	workloadSmall  = "small"     // answered with 100 bytes
	workloadRegion = "region64k" // answered with a 64 KiB file region (sendfile)

	requestBody = 100
	smallResp   = 100
	regionResp  = 64 << 10
	regionFile  = 4 << 20 // the server rotates regions over a file this big
)

// Designs, as net names them.
const (
	designReactor   = "reactor"
	designGoroutine = "goroutine"
)

// config is the command line of every role.
type config struct {
	role        string
	quick       bool
	out         string
	conns       []int
	workloads   []string
	designs     []string
	reps        int
	warmup      time.Duration
	duration    time.Duration
	maxRequests int64
	progress    bool
	replot      bool

	// children only
	addr     string
	design   string
	workload string
	file     string
}

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("reactor", flag.ContinueOnError)
	var conns, workloads, designs string
	fs.StringVar(&c.role, "role", "", "internal: server or loadgen (child processes)")
	fs.BoolVar(&c.quick, "quick", false, "short run: 1 repetition, 0.5 s warm-up, 2 s windows, output in results/quick")
	fs.StringVar(&c.out, "out", "", "output directory (default experiments/reactor/results/<YYYY-MM-DD>, -quick: results/quick)")
	fs.StringVar(&conns, "conns", "10,100,1000,10000", "connection counts")
	fs.StringVar(&workloads, "workloads", workloadSmall+","+workloadRegion, "workloads: small, region64k")
	fs.StringVar(&designs, "designs", designReactor+","+designGoroutine, "designs: reactor, goroutine")
	fs.IntVar(&c.reps, "reps", 3, "repetitions of each point (the summary reports medians)")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "warm-up before each measured window")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "measured window per run")
	fs.Int64Var(&c.maxRequests, "max-requests", 50_000_000, "a run's window ends early after this many responses")
	fs.BoolVar(&c.progress, "progress", true, "show a progress bar on stderr")
	fs.BoolVar(&c.replot, "replot", false, "redraw the plots from the output directory's results.csv, without measuring")
	fs.StringVar(&c.addr, "addr", "", "internal: server address for the load generator (must be 127.0.0.1)")
	fs.StringVar(&c.design, "design", "", "internal: the server's design")
	fs.StringVar(&c.workload, "workload", "", "internal: the workload")
	fs.StringVar(&c.file, "file", "", "internal: the server's region file")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.quick {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["reps"] {
			c.reps = 1
		}
		if !set["warmup"] {
			c.warmup = 500 * time.Millisecond
		}
		if !set["duration"] {
			c.duration = 2 * time.Second
		}
	}
	var err error
	if c.conns, err = parseInts(conns); err != nil {
		return c, err
	}
	c.workloads = strings.Split(workloads, ",")
	c.designs = strings.Split(designs, ",")
	return c, c.validate()
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-conns: %q is not a positive count", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func (c config) validate() error {
	for _, w := range c.workloads {
		if w != workloadSmall && w != workloadRegion {
			return fmt.Errorf("-workloads: unknown workload %q", w)
		}
	}
	for _, d := range c.designs {
		if d != designReactor && d != designGoroutine {
			return fmt.Errorf("-designs: unknown design %q", d)
		}
	}
	if c.reps < 1 || c.warmup < 0 || c.duration <= 0 || c.maxRequests < 1 {
		return errors.New("-reps, -duration and -max-requests must be positive, -warmup not negative")
	}
	return nil
}

// responseSize is the body size of the workload's responses.
func responseSize(workload string) int {
	if workload == workloadRegion {
		return regionResp
	}
	return smallResp
}
