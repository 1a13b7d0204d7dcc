package segment_test

import (
	"path/filepath"
	"testing"

	"github.com/varve/varve/index"
	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// Kafka: LogSegment.close appends the active segment's final time-index
// entry, (max timestamp, offset of its batch), as rolling a segment does;
// Kafka loading the segment takes its max timestamp from that entry, so
// without it ListOffsets for the max timestamp (KIP-734) after a clean
// shutdown named the wrong offset. The largest timestamp here is in the
// middle batch, and the batches are too small for index.interval.bytes
// to have written any entry.
func TestCloseWritesTheActiveSegmentsMaxTimestampEntry(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, segment.DefaultConfig())
	var maxOffset int64
	for i, ts := range []int64{1000, 3000, 2000} {
		b := record.NewBatchBuilder(record.CompressionNone)
		b.Append(record.Record{Key: []byte("k"), Value: []byte("v"), Timestamp: ts})
		b.Append(record.Record{Key: []byte("k"), Value: []byte("w"), Timestamp: ts})
		batch, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		info, err := l.Append(batch)
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			maxOffset = info.LastOffset
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	ti, err := index.OpenTimeIndex(filepath.Join(dir, segment.FilenamePrefix(0)+".timeindex"), 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer ti.Close()
	if e := ti.LastEntry(); e.Timestamp != 3000 || e.Offset != maxOffset {
		t.Fatalf("last time-index entry after close %+v; want timestamp 3000 at offset %d", e, maxOffset)
	}
	// Reopened, the log appends after the entry without complaint.
	l = open(t, dir, segment.DefaultConfig())
	defer l.Close()
	b := record.NewBatchBuilder(record.CompressionNone)
	b.Append(record.Record{Key: []byte("k"), Value: []byte("x"), Timestamp: 4000})
	batch, _ := b.Build()
	if _, err := l.Append(batch); err != nil {
		t.Fatal(err)
	}
	if off, _, found, err := l.OffsetForTime(3000); err != nil || !found || off != maxOffset-1 {
		t.Fatalf("OffsetForTime(3000) = %d, %v, %v; want %d", off, found, err, maxOffset-1)
	}
}
