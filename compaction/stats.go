package compaction

import (
	"fmt"
	"strings"
	"time"
)

// Stats says what one cleaning pass did (Kafka's CleanerStats, with the
// record counts split by reason).
type Stats struct {
	Dir string // the log's directory

	// The pass's range: the map covered [FirstDirty, EndOffset); the
	// segments below EndOffset were rewritten. FirstUncleanable is where
	// the dirty section would have ended had the map not filled. EndOffset
	// is checkpointed as the next pass's first dirty offset.
	FirstDirty       int64
	FirstUncleanable int64
	EndOffset        int64

	// The offset map.
	MapKeys         int     // distinct keys mapped
	MapFull         bool    // the map filled before firstUncleanable: the rest waits for the next pass
	MapUtilization  float64 // keys / slots of the table used
	MapMemory       int64   // bytes of the table
	MapBytesRead    int64   // dirty bytes read to build the map
	MapRecordsRead  int64
	ProbesPerLookup float64

	// The rewrite.
	SegmentsRead      int
	SegmentsWritten   int
	BytesRead         int64 // size of the segments rewritten ("bytes before")
	BytesWritten      int64 // size of what replaced them ("bytes after")
	BatchesRead       int64
	BatchesWritten    int64
	RecordsRead       int64
	RecordsKept       int64
	RecordsSuperseded int64 // dropped: a later record has the same key
	KeylessDropped    int64 // dropped: no key (invalid in a compacted log)
	TombstonesKept    int64
	TombstonesDropped int64 // dropped: past their delete horizon
	HorizonsSet       int64 // batches that got a delete horizon in this pass
	EmptyBatchesKept  int64 // emptied batches written: for producer state, or as a group's end until its swap
	// Transactions (txn.go).
	AbortedBatchesDropped int64 // batches of aborted transactions removed
	MarkersDropped        int64 // transaction markers removed past their delete horizon

	Duration time.Duration
}

// Cleaned reports whether the pass rewrote anything.
func (s Stats) Cleaned() bool { return s.SegmentsRead > 0 }

// String renders the stats in a few lines, for the command line and logs.
func (s Stats) String() string {
	var b strings.Builder
	if !s.Cleaned() {
		fmt.Fprintf(&b, "%s: nothing to clean (first dirty offset %d, first uncleanable offset %d)\n", s.Dir, s.FirstDirty, s.FirstUncleanable)
		return b.String()
	}
	fmt.Fprintf(&b, "%s: cleaned offsets [0, %d), dirty section [%d, %d) of [%d, %d)", s.Dir, s.EndOffset, s.FirstDirty, s.EndOffset, s.FirstDirty, s.FirstUncleanable)
	if s.MapFull {
		b.WriteString(" (offset map full: the rest waits for the next pass)")
	}
	fmt.Fprintf(&b, "\n  offset map: %d keys, %.1f%% of %d KiB, %.2f probes per lookup, %d dirty bytes read\n",
		s.MapKeys, 100*s.MapUtilization, s.MapMemory>>10, s.ProbesPerLookup, s.MapBytesRead)
	fmt.Fprintf(&b, "  segments: %d read, %d written; bytes: %d before, %d after (%.1f%%)\n",
		s.SegmentsRead, s.SegmentsWritten, s.BytesRead, s.BytesWritten, pct(s.BytesWritten, s.BytesRead))
	fmt.Fprintf(&b, "  records: %d read, %d kept, %d superseded, %d keyless dropped\n",
		s.RecordsRead, s.RecordsKept, s.RecordsSuperseded, s.KeylessDropped)
	fmt.Fprintf(&b, "  tombstones: %d kept, %d dropped past their horizon; %d delete horizons set; %d empty batches kept\n",
		s.TombstonesKept, s.TombstonesDropped, s.HorizonsSet, s.EmptyBatchesKept)
	if s.AbortedBatchesDropped > 0 || s.MarkersDropped > 0 {
		fmt.Fprintf(&b, "  transactions: %d aborted batches removed, %d markers removed past their horizon\n",
			s.AbortedBatchesDropped, s.MarkersDropped)
	}
	fmt.Fprintf(&b, "  duration: %v\n", s.Duration.Round(time.Microsecond))
	return b.String()
}

func pct(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
