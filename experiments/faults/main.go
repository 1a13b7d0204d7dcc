package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/varve/varve/chaos"
	"github.com/varve/varve/experiments/internal/harness"
)

// quickDuration is how long a -quick run applies faults.
const quickDuration = 3 * time.Minute

// config is the soak's flags.
type config struct {
	Duration   time.Duration
	Seed       uint64
	Out        string
	Partitions int
	Producers  int
	LogLevel   string
	Quick      bool
}

func main() {
	// The soak runs in a network namespace of its own: this process
	// starts itself again there and waits.
	inside, err := chaos.RunInNetns()
	if !inside {
		if err != nil {
			fmt.Fprintln(os.Stderr, "faults:", err)
			os.Exit(1)
		}
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		os.Exit(1)
	}
	harness.Main("faults", parseFlags, run)
}

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("faults", flag.ContinueOnError)
	fs.DurationVar(&c.Duration, "duration", 30*time.Minute, "how long faults are applied (then heal, full read, checkers)")
	fs.Uint64Var(&c.Seed, "seed", 0, "the fault schedule's seed (0: a new one); a run replays from its seed")
	fs.StringVar(&c.Out, "out", "experiments/faults/results", "results root: the run writes <root>/<YYYY-MM-DD>/")
	fs.IntVar(&c.Partitions, "partitions", 6, "partitions of the topic (replication factor 3, min.insync.replicas=2)")
	fs.IntVar(&c.Producers, "producers", 4, "idempotent acks=all producers (2 group members and 1 assigned consumer read)")
	fs.StringVar(&c.LogLevel, "log-level", "info", "the nodes' --log-level, info or debug: before each fault the runner reads from their logs that they registered (the logs stay in the run's temporary directory)")
	fs.BoolVar(&c.Quick, "quick", false, "a 3-minute run (unless -duration is given) into <out>/quick/")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	durationSet := false
	fs.Visit(func(f *flag.Flag) { durationSet = durationSet || f.Name == "duration" })
	if c.Quick && !durationSet {
		c.Duration = quickDuration
	}
	if c.Duration <= 0 || c.Partitions < 1 || c.Producers < 1 {
		return c, fmt.Errorf("need -duration > 0, -partitions >= 1, -producers >= 1")
	}
	if c.Seed == 0 {
		c.Seed = rand.Uint64()
	}
	return c, nil
}
