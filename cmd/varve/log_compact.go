package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/varve/varve/compaction"
	"github.com/varve/varve/segment"
)

// varve log compact runs one pass of Kafka's log cleaner over one
// partition directory (package compaction) and prints what it did:
// the offset range, the offset map, segments and bytes before and after,
// records kept and dropped by reason, tombstones and the duration.

// compactOptions are the flags of varve log compact, named after the
// Kafka settings they set.
type compactOptions struct {
	deleteRetentionMs   int64 // delete.retention.ms
	minCompactionLagMs  int64 // min.compaction.lag.ms
	dedupeBufferSize    int64 // log.cleaner.dedupe.buffer.size
	ioMaxBytesPerSecond float64
	segmentBytes        int64 // segment.bytes: the group size limit
	nowMs               int64 // the pass's clock, for reproducible runs
}

func init() { logCmd.AddCommand(newCompactCmd()) }

func newCompactCmd() *cobra.Command {
	var o compactOptions
	cmd := &cobra.Command{
		Use:   "compact DIR",
		Short: "Run one compaction pass over a partition directory and print what it did",
		Long: `Run one pass of the log cleaner (cleanup.policy=compact) over a partition
directory: keep the last record of every key, drop tombstones past their
delete horizon, merge small segments, and swap the result in crash-safely.
The log is opened (and recovered if needed) as a standalone log, so its
checkpoints, including cleaner-offset-checkpoint, are kept in DIR. Do not
run it on a directory a broker has open.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompact(cmd, args[0], o)
		},
	}
	f := cmd.Flags()
	f.Int64Var(&o.deleteRetentionMs, "delete-retention-ms", compaction.DefaultDeleteRetention.Milliseconds(),
		"delete.retention.ms: how long tombstones stay after the first cleaning that saw them")
	f.Int64Var(&o.minCompactionLagMs, "min-compaction-lag-ms", 0,
		"min.compaction.lag.ms: leave segments with records newer than this alone")
	f.Int64Var(&o.dedupeBufferSize, "dedupe-buffer-size", compaction.DefaultDedupeBufferSize,
		"log.cleaner.dedupe.buffer.size: memory of the offset map, in bytes")
	f.Float64Var(&o.ioMaxBytesPerSecond, "io-max-bytes-per-second", 0,
		"log.cleaner.io.max.bytes.per.second: throttle reads and writes (0: unlimited)")
	f.Int64Var(&o.segmentBytes, "segment-bytes", segment.DefaultSegmentBytes,
		"segment.bytes: the largest cleaned segment (small segments are merged up to it)")
	f.Int64Var(&o.nowMs, "now-ms", 0, "the pass's time in ms since the epoch (0: now)")
	return cmd
}

func runCompact(cmd *cobra.Command, dir string, o compactOptions) error {
	if o.deleteRetentionMs < 1 || o.minCompactionLagMs < 0 {
		return fmt.Errorf("log compact: --delete-retention-ms must be at least 1 and --min-compaction-lag-ms not negative")
	}
	lc := segment.DefaultConfig()
	lc.SegmentBytes = o.segmentBytes
	l, err := segment.Open(dir, lc)
	if err != nil {
		return fmt.Errorf("log compact: %w", err)
	}
	now := time.Now()
	if o.nowMs != 0 {
		now = time.UnixMilli(o.nowMs)
	}
	cfg := compaction.DefaultConfig()
	cfg.DeleteRetention = time.Duration(o.deleteRetentionMs) * time.Millisecond
	cfg.MinCompactionLag = time.Duration(o.minCompactionLagMs) * time.Millisecond
	cfg.DedupeBufferSize = o.dedupeBufferSize
	if o.ioMaxBytesPerSecond > 0 { // 0: unlimited
		cfg.MaxIOBytesPerSecond = o.ioMaxBytesPerSecond
	}
	st, err := compaction.Clean(l, cfg, now)
	if cerr := l.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("log compact: %w", err)
	}
	fmt.Fprint(cmd.OutOrStdout(), st.String())
	return nil
}
