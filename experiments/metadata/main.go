package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/varve/varve/experiments/internal/harness"
)

func main() { harness.Main("metadata", parseFlags, run) }

// config is the run's settings.
type config struct {
	quick      bool
	out        string
	dir        string
	varve      string
	noProgress bool
	seqTopics  int   // topics per sequential creation case
	batches    int   // CreateTopics requests of batchSize topics per batched case
	sizes      []int // partitions in the cluster for propagation
	probes     int   // probes of each kind per size
}

// batchSize is how many topics one batched CreateTopics carries.
const batchSize = 100

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("metadata", flag.ContinueOnError)
	fs.BoolVar(&c.quick, "quick", false, "a smoke run: fewer topics and probes, sizes up to 10,000 partitions")
	fs.StringVar(&c.out, "out", "experiments/metadata/results", "results root: a full run writes <root>/<YYYY-MM-DD>/, -quick writes <root>/quick/")
	fs.StringVar(&c.dir, "dir", os.TempDir(), "directory under which the nodes' data is written (and removed)")
	fs.StringVar(&c.varve, "varve", "", "a built varve binary (default: go build ./cmd/varve)")
	fs.BoolVar(&c.noProgress, "no-progress", false, "no progress bar")
	fs.IntVar(&c.seqTopics, "seq-topics", 300, "topics created one at a time per sequential case")
	fs.IntVar(&c.batches, "batches", 10, "CreateTopics requests of 100 topics per batched case")
	sizes := fs.String("sizes", "10,1000,10000,100000", "partitions in the cluster at which propagation is measured")
	fs.IntVar(&c.probes, "probes", 30, "probes of each kind per size")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	set := harness.Flags(fs)
	if c.quick {
		quick := map[string]func(){
			"seq-topics": func() { c.seqTopics = 50 },
			"batches":    func() { c.batches = 3 },
			"sizes":      func() { *sizes = "10,1000,10000" },
			"probes":     func() { c.probes = 8 },
		}
		for name, f := range quick {
			if !set[name] {
				f()
			}
		}
	}
	var err error
	if c.sizes, err = parseSizes(*sizes); err != nil {
		return c, err
	}
	if c.seqTopics < 1 || c.batches < 1 || c.probes < 1 {
		return c, fmt.Errorf("-seq-topics, -batches and -probes must be at least 1")
	}
	return c, nil
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-sizes: %q is not a partition count", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// run performs every case and writes the results.
func run(ctx context.Context, cfg config) (string, error) {
	e, err := newExperiment(cfg)
	if err != nil {
		return "", err
	}
	defer e.close()
	if err := e.runAll(ctx); err != nil {
		return "", err
	}
	return e.s.Out, e.write()
}
