package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/varve/varve/diskmodel"
	"github.com/varve/varve/experiments/internal/flagval"
	"github.com/varve/varve/experiments/internal/harness"
	"github.com/varve/varve/segment"
)

// config is everything a run depends on; flags fill it.
type config struct {
	harness.Common
	partitions   []int
	policies     []policy
	totalBytes   int64 // appended in every run, whatever the partition count
	batchBytes   int
	recordBytes  int
	indexBytes   int // segment.index.bytes; 0 = sized to each run (indexBytesFor)
	segmentBytes int64
	sampleEvery  time.Duration
	reps         int
	// calibration, when set, is used instead of calibrating the disk
	// (tests); no flag sets it.
	calibration *diskmodel.Calibration
}

// Defaults of a full run and of -quick.
var (
	fullDefaults  = defaults{totalBytes: 256 << 20, reps: 3}
	quickDefaults = defaults{totalBytes: 32 << 20, reps: 1}
)

type defaults struct {
	totalBytes int64
	reps       int
}

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("partitions", flag.ContinueOnError)
	parts := fs.String("partitions", "1,4,16,64,256,1024", "comma-separated partition counts")
	policies := fs.String("policies", "never,messages=100,messages=1", "comma-separated fsync policies: never, messages=N (flush.messages per partition)")
	sizes := map[string]*int64{"total-bytes": &c.totalBytes, "segment-bytes": &c.segmentBytes}
	usage := map[string]string{
		"total-bytes":   "bytes appended in every run, spread round-robin over the partitions (default 256MiB, -quick 32MiB)",
		"segment-bytes": "segment.bytes (Kafka's default 1GiB)",
	}
	for name, p := range sizes {
		fs.Func(name, usage[name], func(s string) error { v, err := parseSize(s); *p = v; return err })
	}
	c.segmentBytes = segment.DefaultSegmentBytes
	ints := map[string]*int{"batch-bytes": &c.batchBytes, "record-bytes": &c.recordBytes, "index-bytes": &c.indexBytes}
	intUsage := map[string]string{
		"batch-bytes":  "bytes per producer batch (default 16KiB, the Java producer's batch.size)",
		"record-bytes": "approximate bytes per record; flush.messages counts records (default 1KiB)",
		"index-bytes":  "segment.index.bytes (default: sized to what each partition receives in a run, at least 4KiB)",
	}
	for name, p := range ints {
		fs.Func(name, intUsage[name], func(s string) error { v, err := parseSize(s); *p = int(v); return err })
	}
	c.batchBytes, c.recordBytes = 16<<10, 1<<10
	fs.DurationVar(&c.sampleEvery, "sample-every", 5*time.Millisecond, "how often the data at risk is sampled")
	fs.IntVar(&c.reps, "reps", fullDefaults.reps, "repetitions of every run; the summary uses the median (-quick 1)")
	c.Common.Register(fs, "partitions", "smoke run: 32 MiB per run, one repetition, quick disk calibration")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.applyDefaults(harness.Flags(fs))
	var err error
	if c.partitions, err = flagval.Counts(*parts); err != nil {
		return c, err
	}
	if c.policies, err = parsePolicies(*policies); err != nil {
		return c, err
	}
	return c, c.validate()
}

func (c *config) applyDefaults(set map[string]bool) {
	d := fullDefaults
	if c.Quick {
		d = quickDefaults
	}
	if !set["total-bytes"] {
		c.totalBytes = d.totalBytes
	}
	if !set["reps"] {
		c.reps = d.reps
	}
}

func (c *config) validate() error {
	switch {
	case c.recordBytes < 64 || c.batchBytes < c.recordBytes || c.batchBytes > 1<<20:
		return fmt.Errorf("batch-bytes %d, record-bytes %d: want 64 <= record <= batch <= 1 MiB", c.batchBytes, c.recordBytes)
	case c.reps < 1 || c.sampleEvery <= 0:
		return fmt.Errorf("reps and sample-every must be positive")
	case c.totalBytes > c.segmentBytes-int64(c.batchBytes):
		return fmt.Errorf("total-bytes %d must fit one segment (segment-bytes %d): the experiment measures appends, not rolls", c.totalBytes, c.segmentBytes)
	case c.indexBytes != 0 && c.indexBytes < 4<<10:
		return fmt.Errorf("index-bytes %d: want at least 4 KiB", c.indexBytes)
	}
	for _, p := range c.partitions {
		if int64(p)*int64(c.batchBytes) > c.totalBytes {
			return fmt.Errorf("%d partitions: total-bytes %d gives some partition no batch of %d bytes", p, c.totalBytes, c.batchBytes)
		}
	}
	return nil
}

var parseSize = flagval.PositiveSize

func splitList(s string) []string { return flagval.List(s) }
