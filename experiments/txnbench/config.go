package main

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/varve/varve/experiments/internal/flagval"
	"github.com/varve/varve/experiments/internal/harness"
	"github.com/varve/varve/experiments/internal/kafkadist"
)

// The systems, by the names the flags and the CSV use.
const (
	sysVarve     = "varve"
	sysKafka     = "kafka"
	sysVarveBase = "varve-base" // Varve built from -base-rev: before a change, beside after it
)

// allSystems are the default systems; sysVarveBase is asked for by name.
var allSystems = []string{sysVarve, sysKafka}

// The two modes of one case: the same rounds of records, inside a
// transaction or not.
const (
	modeTxn   = "txn"
	modePlain = "plain"
)

// config is the experiment's command line.
type config struct {
	harness.Common
	systems      []string
	cases        []int         // records per transaction
	reps         int           // repetitions of every (case, mode, system) run
	duration     time.Duration // length of one timed run
	warmup       time.Duration // untimed produce before each timed run
	partitions   int32         // partitions of every topic
	recordSize   int           // bytes of each record's value
	readTimeout  time.Duration // longest read_committed read of one topic
	prime        time.Duration // untimed transactions on each system before the runs
	txnBackoff   time.Duration // franz-go's ConcurrentTransactionsBackoff; 0: its default
	kafkaVersion string
	kafkaHeap    string
	cacheDir     string
	varveBin     string
	baseRev      string // git revision the varve-base system is built from
	clientTV1    bool   // the client capped at transaction version 1's requests
	keep         bool
}

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("txnbench", flag.ContinueOnError)
	c.Register(fs, "txnbench", "one repetition of 3 s runs instead of three of 10 s, 3 s of priming instead of 10 s")
	systems := fs.String("systems", "varve,kafka", "systems to run, comma-separated: varve, kafka, varve-base (needs -base-rev)")
	cases := fs.String("records-per-txn", "1,10,1000", "records per transaction, comma-separated")
	fs.IntVar(&c.reps, "reps", 3, "repetitions of every run (case, mode, system)")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "length of one timed produce run")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "untimed produce before each timed run")
	fs.DurationVar(&c.prime, "prime", 10*time.Second, "untimed one-record transactions on each system after it starts")
	fs.DurationVar(&c.txnBackoff, "txn-backoff", 0, "franz-go's ConcurrentTransactionsBackoff (0: its default, 20ms)")
	partitions := fs.Int("partitions", 1, "partitions of every topic")
	fs.IntVar(&c.recordSize, "record-size", 100, "bytes of each record's value")
	fs.DurationVar(&c.readTimeout, "read-timeout", 2*time.Minute, "longest read_committed read of one topic")
	fs.StringVar(&c.kafkaVersion, "kafka-version", "4.4.0", "Apache Kafka version to assemble from Maven Central")
	fs.StringVar(&c.kafkaHeap, "kafka-heap", "1g", "Kafka's JVM heap (Kafka's default KAFKA_HEAP_OPTS is 1g)")
	fs.StringVar(&c.cacheDir, "cache", kafkadist.DefaultCacheDir(), "where the assembled Kafka is kept between runs")
	fs.StringVar(&c.varveBin, "varve-bin", "", "a varve binary to run (default: build ./cmd/varve)")
	fs.StringVar(&c.baseRev, "base-rev", "", "git revision to build the varve-base system from (e.g. main, or a commit)")
	fs.BoolVar(&c.clientTV1, "client-tv1", false, "cap the client at transaction version 1 (no KIP-890 part 2, even where the cluster offers it)")
	fs.BoolVar(&c.keep, "keep", false, "keep the servers' directories (logs, data) after the run")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	set := harness.Flags(fs)
	if c.Quick && !set["reps"] {
		c.reps = 1
	}
	if c.Quick && !set["duration"] {
		c.duration = 3 * time.Second
	}
	if c.Quick && !set["prime"] {
		c.prime = 3 * time.Second
	}
	c.NoModel = true // no figure here is compared with the disk model
	c.partitions = int32(*partitions)
	var err error
	if c.systems, err = systemList(*systems); err != nil {
		return c, err
	}
	if slices.Contains(c.systems, sysVarveBase) != (c.baseRev != "") {
		return c, fmt.Errorf("-base-rev %q goes with varve-base in -systems, and only with it", c.baseRev)
	}
	if c.cases, err = caseList(*cases); err != nil {
		return c, err
	}
	return c, c.check(*partitions)
}

func (c config) check(partitions int) error {
	switch {
	case c.reps < 1:
		return fmt.Errorf("-reps %d: want at least 1", c.reps)
	case c.duration <= 0 || c.warmup < 0 || c.prime < 0 || c.txnBackoff < 0:
		return fmt.Errorf("-duration %v must be positive; -warmup, -prime and -txn-backoff not negative", c.duration)
	case partitions < 1 || partitions > 64:
		return fmt.Errorf("-partitions %d: want 1 to 64", partitions)
	case c.recordSize < seqBytes || c.recordSize > 1<<20:
		return fmt.Errorf("-record-size %d: want %d bytes to 1 MiB", c.recordSize, seqBytes)
	case c.readTimeout <= 0:
		return fmt.Errorf("-read-timeout %v: want a positive duration", c.readTimeout)
	}
	return nil
}

func systemList(s string) ([]string, error) {
	items := flagval.List(s)
	if len(items) == 0 {
		return nil, fmt.Errorf("-systems: empty")
	}
	for _, it := range items {
		if !slices.Contains(allSystems, it) && it != sysVarveBase {
			return nil, fmt.Errorf("-systems: unknown %q (want %v or %s)", it, allSystems, sysVarveBase)
		}
	}
	return items, nil
}

func caseList(s string) ([]int, error) {
	items := flagval.List(s)
	if len(items) == 0 {
		return nil, fmt.Errorf("-records-per-txn: empty")
	}
	var out []int
	for _, it := range items {
		n, err := strconv.Atoi(it)
		if err != nil || n < 1 || n > 1_000_000 {
			return nil, fmt.Errorf("-records-per-txn: %q is not a count from 1 to 1,000,000", it)
		}
		out = append(out, n)
	}
	return out, nil
}
