package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/varve/varve/experiments/internal/harness"
	"github.com/varve/varve/experiments/internal/kafkadist"
)

func main() { harness.Main("kafkatools", parseFlags, run) }

// config is one run.
type config struct {
	quick        bool
	out          string // results root
	kafkaVersion string
	cacheDir     string
	varveBin     string // "": build cmd/varve
	sharedHost   bool
	lines        int           // lines the console producer sends through the leader kill
	interval     time.Duration // between two lines
	toolTimeout  time.Duration // bound on one tool run
	keep         bool
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("kafkatools", flag.ContinueOnError)
	var c config
	fs.BoolVar(&c.quick, "quick", false, "fewer lines through the leader kill (150), results in results/quick")
	fs.StringVar(&c.out, "out", filepath.Join("experiments", "kafkatools", "results"), "results root: <root>/<YYYY-MM-DD>/, -quick: <root>/quick/")
	fs.StringVar(&c.kafkaVersion, "kafka-version", "4.4.0", "Apache Kafka version whose tools are assembled from Maven Central")
	fs.StringVar(&c.cacheDir, "cache", kafkadist.DefaultCacheDir(), "where the assembled Kafka is kept between runs")
	fs.StringVar(&c.varveBin, "varve", "", "a varve binary to run (default: build ./cmd/varve)")
	fs.BoolVar(&c.sharedHost, "shared-host", false, "every node on 127.0.0.1 on distinct ports instead of node i on 127.0.0.i")
	fs.IntVar(&c.lines, "lines", 600, "lines the console producer sends through the leader kill")
	fs.DurationVar(&c.interval, "interval", 20*time.Millisecond, "time between two produced lines")
	fs.DurationVar(&c.toolTimeout, "tool-timeout", 2*time.Minute, "upper bound on one tool run")
	fs.BoolVar(&c.keep, "keep", false, "keep the cluster's temporary directory")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.quick && !harness.Flags(fs)["lines"] {
		c.lines = 150
	}
	if c.lines < 30 {
		return c, fmt.Errorf("-lines %d: want at least 30", c.lines)
	}
	if c.interval < 0 || c.toolTimeout <= 0 {
		return c, fmt.Errorf("-interval and -tool-timeout must be positive")
	}
	if _, err := os.Stat("go.mod"); c.varveBin == "" && err != nil {
		return c, fmt.Errorf("run from the repository root (cmd/varve is built from there) or give -varve")
	}
	return c, nil
}
