package main

import (
	"errors"
	"flag"

	"github.com/varve/varve/experiments/internal/harness"
	"github.com/varve/varve/experiments/internal/pingpong"
)

// config is the experiment's command line.
type config struct {
	common    harness.Common
	records   int64 // records per throughput run
	producers int   // concurrent producers in the throughput runs
	reps      int   // repetitions of each throughput and latency case
	syncN     int64 // one-record requests per latency case
	catchUp   int64 // bytes produced while a follower is down
	throttle  int64 // follower.replication.throttled.rate of a second, throttled catch-up; 0: none
	profile   int   // seconds of CPU profile of the leader and a follower; 0: none
	varve     string
}

func main() {
	pingpong.MaybeServe()
	harness.Main("replication", parseFlags, run)
}

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("replication", flag.ContinueOnError)
	c.common.Register(fs, "replication", "a short smoke run: fewer records, 128 MiB of catch-up, one repetition")
	fs.Int64Var(&c.records, "records", 300_000, "1 KiB records per throughput run")
	fs.IntVar(&c.producers, "producers", 4, "concurrent franz-go producers in the throughput runs")
	fs.IntVar(&c.reps, "reps", 3, "repetitions of each throughput and latency case (medians reported)")
	fs.Int64Var(&c.syncN, "sync-records", 3000, "one-record requests per latency case")
	fs.Int64Var(&c.catchUp, "catch-up-bytes", 1<<30, "bytes produced while a follower is down")
	fs.Int64Var(&c.throttle, "throttle", 0, "bytes/s: also time a catch-up under follower.replication.throttled.rate (KIP-73); 0: none")
	fs.IntVar(&c.profile, "profile", 10, "seconds of CPU profile taken of the leader and a follower during a replicated run; 0: none")
	fs.StringVar(&c.varve, "varve", "", "a built varve binary (default: go build ./cmd/varve)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, errors.New("unexpected arguments")
	}
	if c.common.Quick {
		set := harness.Flags(fs)
		quick := map[string]func(){
			"records": func() { c.records = 40_000 }, "reps": func() { c.reps = 1 },
			"sync-records": func() { c.syncN = 500 }, "catch-up-bytes": func() { c.catchUp = 128 << 20 },
			"profile": func() { c.profile = 4 },
		}
		for name, f := range quick {
			if !set[name] {
				f()
			}
		}
	}
	if c.records <= 0 || c.producers <= 0 || c.reps <= 0 || c.syncN <= 0 || c.catchUp <= 0 {
		return c, errors.New("-records, -producers, -reps, -sync-records and -catch-up-bytes must be positive")
	}
	if c.throttle < 0 {
		return c, errors.New("-throttle must not be negative")
	}
	return c, nil
}
