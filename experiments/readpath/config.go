package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/varve/varve/experiments/internal/flagval"
)

// Path names: the read paths compared, in the order runs and plots use.
const (
	pathRaw        = "raw"        // push loop of sendfile(2), no protocol: the machine's limit
	pathRawFetch   = "raw-fetch"  // the same raw loop answering fetch requests
	pathSendfile   = "sendfile"   // pagecache.Region.WriteTo
	pathReadWrite  = "readwrite"  // pread into a user buffer, write
	pathMmap       = "mmap"       // pagecache.MmapReader
	pathBlockCache = "blockcache" // pagecache.BlockCache (ristretto)
	pathSSL        = "ssl"        // pagecache.Region.WriteTo through crypto/tls: the broker's SSL listener
)

var allPaths = []string{pathRaw, pathRawFetch, pathSendfile, pathReadWrite, pathMmap, pathBlockCache, pathSSL}

// config is everything a run depends on; flags fill it.
type config struct {
	dir          string // parent of the temporary data directory
	out          string // results root; a dated subdirectory is written
	catchupBytes int64  // size of the log read by catch-up consumers
	tailBytes    int64  // the most recent bytes, read by tail consumers
	tailPasses   int    // tail consumers read their slice this many times
	segmentBytes int64  // Kafka's log.segment.bytes
	fetchBytes   int64  // bytes per fetch response (max.partition.fetch.bytes)
	cacheBytes   int64  // block cache bound
	consumers    []int
	paths        []string
	workloads    []string
	reps         int
	quick        bool
	keep         bool
	verify       bool
	inproc       bool // run consumers in this process (tests; CPU not separable)
	noModel      bool
	seqHint      bool // fadvise(SEQUENTIAL) the catch-up segments
	noProgress   bool
	role         string
}

// Default sizes. The full run is issue 4's: a 4 GiB log in Kafka-size
// (1 GiB) segments. The quick run keeps every run long enough to time (about
// half a second each on a loopback of a few GB/s) but the whole experiment
// to a minute or two.
var (
	fullSizes  = sizes{catchup: 4 << 30, tail: 1 << 30, segment: 1 << 30, tailPasses: 4, reps: 3}
	quickSizes = sizes{catchup: 512 << 20, tail: 128 << 20, segment: 128 << 20, tailPasses: 8, reps: 3}
)

type sizes struct {
	catchup, tail, segment int64
	tailPasses, reps       int
}

// applyDefaults fills every size flag the user did not set.
func (c *config) applyDefaults(set map[string]bool) {
	d := fullSizes
	if c.quick {
		d = quickSizes
	}
	fill := func(name string, p *int64, v int64) {
		if !set[name] {
			*p = v
		}
	}
	fill("catchup-bytes", &c.catchupBytes, d.catchup)
	fill("tail-bytes", &c.tailBytes, d.tail)
	fill("segment-bytes", &c.segmentBytes, d.segment)
	if !set["tail-passes"] {
		c.tailPasses = d.tailPasses
	}
	if !set["reps"] {
		c.reps = d.reps
	}
	if !set["cache-bytes"] {
		c.cacheBytes = c.tailBytes + c.tailBytes/8 // holds the whole tail, warm
	}
}

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("readpath", flag.ContinueOnError)
	fs.StringVar(&c.dir, "dir", os.TempDir(), "directory under which the segment files are written (and removed)")
	fs.StringVar(&c.out, "out", "experiments/readpath/results", "results root: a full run writes <root>/<YYYY-MM-DD>/, -quick writes <root>/quick/")
	sizes := map[string]*int64{"catchup-bytes": &c.catchupBytes, "tail-bytes": &c.tailBytes,
		"segment-bytes": &c.segmentBytes, "fetch-bytes": &c.fetchBytes, "cache-bytes": &c.cacheBytes}
	usage := map[string]string{
		"catchup-bytes": "bytes of log read by catch-up consumers (default 4GiB, -quick 512MiB)",
		"tail-bytes":    "most recent bytes read by tail consumers (default 1GiB, -quick 128MiB)",
		"segment-bytes": "segment file size, Kafka's log.segment.bytes (default 1GiB, -quick 128MiB)",
		"fetch-bytes":   "bytes per fetch response, Kafka's max.partition.fetch.bytes",
		"cache-bytes":   "block cache bound (default tail-bytes + 1/8)",
	}
	for name, p := range sizes {
		fs.Func(name, usage[name], func(s string) error { v, err := parseSize(s); *p = v; return err })
	}
	c.fetchBytes = 1 << 20
	fs.IntVar(&c.tailPasses, "tail-passes", 4, "times each tail consumer reads its slice (-quick 8)")
	fs.IntVar(&c.reps, "reps", 3, "repetitions of every run; the summary uses the median")
	consumers := fs.String("consumers", "1,4,16", "comma-separated consumer counts")
	paths := fs.String("paths", strings.Join(allPaths, ","), "comma-separated read paths")
	workloads := fs.String("workloads", "tail,catchup", "comma-separated workloads")
	fs.BoolVar(&c.quick, "quick", false, "small smoke run (512 MiB catch-up, 128 MiB tail, quick disk calibration)")
	fs.BoolVar(&c.keep, "keep", false, "keep the segment files")
	fs.BoolVar(&c.verify, "verify", true, "consumers hash what they receive and the run fails on a mismatch")
	fs.BoolVar(&c.inproc, "inproc", false, "consumers in this process (CPU per GB then includes them)")
	fs.BoolVar(&c.noModel, "no-model", false, "skip the disk model (no calibration, no model ratios)")
	fs.BoolVar(&c.seqHint, "fadvise-sequential", false, "advise SEQUENTIAL on catch-up segments (Kafka does not)")
	fs.BoolVar(&c.noProgress, "no-progress", false, "no progress bar")
	fs.StringVar(&c.role, "role", "", "internal: 'consumer' runs the consumer side, fed by stdin")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	c.applyDefaults(set)
	var err error
	if c.consumers, err = flagval.Counts(*consumers); err != nil {
		return c, err
	}
	c.paths, c.workloads = splitList(*paths), splitList(*workloads)
	return c, c.validate()
}

func (c *config) validate() error {
	for _, p := range c.paths {
		if !contains(allPaths, p) {
			return fmt.Errorf("unknown path %q (have %s)", p, strings.Join(allPaths, ","))
		}
	}
	for _, w := range c.workloads {
		if w != workloadTail && w != workloadCatchup {
			return fmt.Errorf("unknown workload %q (have tail,catchup)", w)
		}
	}
	switch {
	case c.segmentBytes < 1<<20 || c.segmentBytes%4096 != 0:
		return fmt.Errorf("segment-bytes %d: want a multiple of 4 KiB, at least 1 MiB", c.segmentBytes)
	case c.tailBytes > c.catchupBytes:
		return fmt.Errorf("tail-bytes %d exceeds the log (catchup-bytes %d)", c.tailBytes, c.catchupBytes)
	case c.fetchBytes <= 0 || c.fetchBytes > 1<<30:
		return fmt.Errorf("fetch-bytes %d out of range", c.fetchBytes)
	case c.reps < 1 || c.tailPasses < 1:
		return fmt.Errorf("reps and tail-passes must be at least 1")
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func parseSize(s string) (int64, error) { return flagval.Size(s) }

func splitList(s string) []string { return flagval.List(s) }
