package diskmodel

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"
)

// figure is one row of the String table.
type figure struct {
	run, label string
	latency    bool // nanoseconds, else bytes/s
}

var figures = []figure{
	{RunSeqWrite, "sequential write + fdatasync", false},
	{RunPageCacheWrite, "page-cache write (no fsync)", false},
	{RunSeqRead, "sequential read, device", false},
	{RunColdBuffered, "sequential read, cold buffered", false},
	{RunPageCacheRead, "page-cache read (pread)", false},
	{RunFsync4K, "write 4 KiB + fdatasync", true},
	{RunFsync1M, "write 1 MiB + fdatasync", true},
	{RunRandRead4K, "random 4 KiB read, device", true},
}

// String renders the calibration as a header and a table: one row per
// figure with its median, min, max, p99 and number of samples. Bandwidths
// are in MB/s (10^6 bytes per second).
func (c Calibration) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "disk model of %s (%s, device %d:%d, host %s)\n",
		c.Dir, c.FSType, unix.Major(c.Device), unix.Minor(c.Device), c.Host)
	fmt.Fprintf(&sb, "taken %s in %s; %s; test file %d MiB; device reads via %s; %.1f%% resident after eviction; load average %.2f on %d CPUs\n",
		c.Taken.Format(time.RFC3339), c.Elapsed.Round(time.Millisecond), c.mode(),
		c.FileSize>>20, c.ReadMethod, 100*c.ColdResident, c.LoadAvg1, c.CPUs)
	for _, w := range c.warnings() {
		fmt.Fprintf(&sb, "warning: %s\n", w)
	}
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-30s\tmedian\tmin\tmax\tp99\tn\t\n", "figure")
	for _, f := range figures {
		r := c.Runs[f.run]
		p99 := "-" // of a bandwidth, the fastest pass: not a tail worth showing
		if f.latency {
			p99 = f.format(r.P99)
		}
		fmt.Fprintf(tw, "%-30s\t%s\t%s\t%s\t%s\t%d\t\n", f.label,
			f.format(r.Median), f.format(r.Min), f.format(r.Max), p99, r.N)
	}
	tw.Flush()
	return sb.String()
}

// warnings lists what makes the figures less trustworthy.
func (c Calibration) warnings() []string {
	var w []string
	if c.ColdResident > 0.5 {
		w = append(w, fmt.Sprintf("%.0f%% of the test file stayed in memory after eviction (%s): the device figures are memory figures",
			100*c.ColdResident, c.FSType))
	}
	if c.CPUs > 0 && c.LoadAvg1 >= float64(c.CPUs)/2 {
		w = append(w, fmt.Sprintf("load average %.2f on %d CPUs: the machine was busy, figures are pessimistic", c.LoadAvg1, c.CPUs))
	}
	return w
}

func (c Calibration) mode() string {
	if c.Quick {
		return "quick"
	}
	return "full"
}

// format renders one value of f in its unit.
func (f figure) format(v float64) string {
	if f.latency {
		return time.Duration(v).Round(time.Microsecond).String()
	}
	return fmt.Sprintf("%.1f MB/s", v/1e6)
}
