package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/varve/varve/diskmodel"
	"github.com/varve/varve/experiments/internal/flagval"
	"github.com/varve/varve/experiments/internal/harness"
)

// config is everything a run depends on; flags fill it.
type config struct {
	harness.Common
	policies     []policy
	batchSizes   []int
	recordBytes  int
	appenders    []int // group-commit runs: concurrent appenders
	groupBatch   int   // group-commit runs: batch size
	duration     time.Duration
	maxBytes     int64 // a run also stops once this many bytes were appended
	segmentBytes int64
	sampleEvery  time.Duration
	reps         int
	noGroup      bool
	peers        bool // run each policy's raw peer too
	// calibration, when set, is used instead of calibrating the disk
	// (tests); no flag sets it.
	calibration *diskmodel.Calibration
}

// Defaults of a full run and of -quick.
var (
	fullDefaults  = defaults{duration: 1500 * time.Millisecond, maxBytes: 512 << 20, reps: 3}
	quickDefaults = defaults{duration: 300 * time.Millisecond, maxBytes: 64 << 20, reps: 1}
)

type defaults struct {
	duration time.Duration
	maxBytes int64
	reps     int
}

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("flushpolicy", flag.ContinueOnError)
	policies := fs.String("policies", defaultPolicies, "comma-separated flush policies: never, messages=N (flush.messages), ms=N (flush.ms)")
	batches := fs.String("batch-sizes", "1KiB,16KiB,256KiB", "comma-separated batch sizes")
	appenders := fs.String("appenders", "1,2,4,8,16", "group commit: comma-separated counts of concurrent appenders (flush.messages=1)")
	sizes := map[string]*int64{"max-bytes": &c.maxBytes, "segment-bytes": &c.segmentBytes}
	usage := map[string]string{
		"max-bytes":     "a run stops once this many bytes were appended (default 512MiB, -quick 64MiB)",
		"segment-bytes": "segment.bytes (Kafka's default 1GiB)",
	}
	for name, p := range sizes {
		fs.Func(name, usage[name], func(s string) error { v, err := parseSize(s); *p = v; return err })
	}
	c.segmentBytes = 1 << 30
	var groupBatch, recordBytes int64 = 1 << 10, 1 << 10
	fs.Func("group-batch-bytes", "group commit: batch size (default 1KiB)", func(s string) error {
		v, err := parseSize(s)
		groupBatch = v
		return err
	})
	fs.Func("record-bytes", "approximate size of one record (message); a batch holds batch/record records (default 1KiB)", func(s string) error {
		v, err := parseSize(s)
		recordBytes = v
		return err
	})
	fs.DurationVar(&c.duration, "duration", fullDefaults.duration, "length of each run (-quick 300ms)")
	fs.DurationVar(&c.sampleEvery, "sample-every", time.Millisecond, "how often the data at risk is sampled")
	fs.IntVar(&c.reps, "reps", fullDefaults.reps, "repetitions of every run; the summary uses the median (-quick 1)")
	c.Common.Register(fs, "flushpolicy", "short smoke run: 300 ms runs, at most 64 MiB each, one repetition, quick disk calibration")
	fs.BoolVar(&c.noGroup, "no-group-commit", false, "skip the group-commit runs")
	fs.BoolVar(&c.peers, "peers", true, "run each policy's raw peer (pwrite + fdatasync by the same rule, no log) just before it")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.applyDefaults(harness.Flags(fs))
	c.groupBatch, c.recordBytes = int(groupBatch), int(recordBytes)
	var err error
	if c.policies, err = parsePolicies(*policies); err != nil {
		return c, err
	}
	if c.batchSizes, err = parseSizes(*batches); err != nil {
		return c, err
	}
	if c.appenders, err = flagval.Counts(*appenders); err != nil {
		return c, err
	}
	return c, c.validate()
}

// applyDefaults fills the -quick defaults the user did not override.
func (c *config) applyDefaults(set map[string]bool) {
	d := fullDefaults
	if c.Quick {
		d = quickDefaults
	}
	if !set["duration"] {
		c.duration = d.duration
	}
	if !set["max-bytes"] {
		c.maxBytes = d.maxBytes
	}
	if !set["reps"] {
		c.reps = d.reps
	}
}

func (c *config) validate() error {
	switch {
	case c.recordBytes < 64:
		return fmt.Errorf("record-bytes %d: want at least 64", c.recordBytes)
	case c.groupBatch < c.recordBytes:
		return fmt.Errorf("group-batch-bytes %d is smaller than a record (%d)", c.groupBatch, c.recordBytes)
	case c.duration <= 0 || c.sampleEvery <= 0:
		return fmt.Errorf("duration and sample-every must be positive")
	case c.reps < 1:
		return fmt.Errorf("reps must be at least 1")
	case c.maxBytes < 1<<20:
		return fmt.Errorf("max-bytes %d: want at least 1 MiB", c.maxBytes)
	}
	for _, b := range c.batchSizes {
		if b < c.recordBytes || int64(b) > c.segmentBytes/2 || b > 1<<20 {
			return fmt.Errorf("batch size %d: want one record (%d) to 1 MiB (max.message.bytes) and at most half a segment", b, c.recordBytes)
		}
	}
	return nil
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		v, err := parseSize(f)
		if err != nil {
			return nil, err
		}
		out = append(out, int(v))
	}
	return out, nil
}

var parseSize = flagval.PositiveSize

func splitList(s string) []string { return flagval.List(s) }
