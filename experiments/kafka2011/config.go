package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/varve/varve/experiments/internal/harness"
	"github.com/varve/varve/experiments/internal/kafkadist"
)

// Systems the experiment knows, in the order it runs them.
const (
	sysVarve     = "varve"
	sysKafka     = "kafka"
	sysJetStream = "jetstream"
	sysRabbitMQ  = "rabbitmq"
)

var allSystems = []string{sysVarve, sysKafka, sysJetStream, sysRabbitMQ}

// The paper's fixed parameters.
const (
	messageSize  = 200  // bytes of value per message
	pullMessages = 1000 // messages per consumer pull ("up to 1000 messages")
	pullBytes    = 200 << 10
)

// config is one run of the experiment.
type config struct {
	quick        bool
	records      int64 // messages per test
	batches      []int // producer batch sizes
	systems      []string
	perfTool     bool // also run Kafka's ProducerPerformance
	noAck        bool // also run the paper's acks=0 producer (Kafka protocol)
	kafkaVersion string
	cacheDir     string // Maven assembly of Kafka, reused between runs
	outDir       string
	keep         bool // keep the temporary data directories
	progress     bool
	testTimeout  time.Duration // bound on one test
	install      bool          // apt-get install missing Debian packages
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("kafka2011", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	var systems, batches string
	fs.BoolVar(&c.quick, "quick", false, "a short run (20,000 messages per test) for development")
	fs.Int64Var(&c.records, "records", 0, "messages per test (default 1,000,000; -quick: 20,000)")
	fs.StringVar(&batches, "batches", "1,50", "producer batch sizes, comma-separated")
	fs.StringVar(&systems, "systems", strings.Join(allSystems, ","), "systems to run, comma-separated")
	fs.BoolVar(&c.perfTool, "perf-tool", true, "also run Kafka's ProducerPerformance against varve and kafka")
	fs.BoolVar(&c.noAck, "noack", true, "also run the paper's acks=0 producer against varve and kafka")
	fs.StringVar(&c.kafkaVersion, "kafka-version", "4.4.0", "Apache Kafka version to assemble from Maven Central")
	fs.StringVar(&c.cacheDir, "cache", kafkadist.DefaultCacheDir(), "where the assembled Kafka is kept between runs")
	fs.StringVar(&c.outDir, "out", "", "results directory (default experiments/kafka2011/results/<YYYY-MM-DD>, -quick: results/quick)")
	fs.BoolVar(&c.keep, "keep", false, "keep the brokers' temporary data directories")
	fs.BoolVar(&c.progress, "progress", true, "show a progress bar")
	fs.DurationVar(&c.testTimeout, "test-timeout", 40*time.Minute, "upper bound on one test")
	fs.BoolVar(&c.install, "install", true, "install missing Debian packages (nats-server, rabbitmq-server) with apt-get")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	return c, c.finish(systems, batches)
}

// finish fills defaults and checks the settings.
func (c *config) finish(systems, batches string) error {
	if c.outDir == "" {
		c.outDir = harness.OutDir(filepath.Join("experiments", "kafka2011", "results"), time.Now(), c.quick)
	}
	if c.records == 0 {
		c.records = 1_000_000
		if c.quick {
			c.records = 20_000
		}
	}
	if c.records < pullMessages {
		return fmt.Errorf("-records %d: want at least %d", c.records, pullMessages)
	}
	var err error
	if c.batches, err = parseInts(batches); err != nil {
		return fmt.Errorf("-batches: %w", err)
	}
	c.systems = nil
	for _, s := range strings.Split(systems, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(allSystems, s) {
			return fmt.Errorf("-systems: unknown system %q (want some of %s)", s, strings.Join(allSystems, ","))
		}
		c.systems = append(c.systems, s)
	}
	return nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(f), &n); err != nil || n < 1 || n > 10_000 {
			return nil, fmt.Errorf("%q: want integers from 1 to 10000", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// consumeBatch is the batch size whose stored messages the consume test
// reads: the largest, the paper's 50 when it is run.
func (c config) consumeBatch() int { return slices.Max(c.batches) }
