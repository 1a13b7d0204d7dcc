package retention_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/varve/varve/record"
	"github.com/varve/varve/retention"
	"github.com/varve/varve/segment"
)

// BenchmarkEnforceBySegmentSize measures one Enforce call that deletes
// benchSegments old segments, for growing segment sizes. Retention reads
// no segment data, so ns/segment should stay flat as the size grows
// (MB/s then grows with the size). Setup is not timed.
//
//	go test ./retention -run '^$' -bench EnforceBySegmentSize -benchtime 20x
func BenchmarkEnforceBySegmentSize(b *testing.B) {
	const benchSegments = 8
	for _, size := range []int{64 << 10, 1 << 20, 8 << 20} {
		b.Run(fmt.Sprintf("segment=%dKiB", size>>10), func(b *testing.B) {
			value := make([]byte, size-200)
			b.SetBytes(int64(benchSegments * size))
			var total time.Duration
			for range b.N {
				b.StopTimer()
				l := benchLog(b, benchSegments, value)
				b.StartTimer()
				began := time.Now()
				p := retention.DefaultPolicy()
				p.RetentionMs = time.Hour
				res, err := retention.Enforce(l, p, l.EndOffset(), t0.Add(48*time.Hour))
				total += time.Since(began)
				b.StopTimer()
				if err != nil || len(res.Deleted) != benchSegments {
					b.Fatalf("deleted %d, err %v", len(res.Deleted), err)
				}
				l.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(b.N*benchSegments), "ns/segment")
		})
	}
}

// benchLog makes a log of n sealed segments, each one record of value,
// timestamped t0.
func benchLog(b *testing.B, n int, value []byte) *segment.Log {
	cfg := logConfig()
	cfg.SegmentBytes = int64(len(value) + 200)
	cfg.MaxMessageBytes = len(value) + 200
	cfg.FileDeleteDelay = time.Hour
	l := openLog(b, b.TempDir(), cfg)
	for range n {
		bb := record.NewBatchBuilder(record.CompressionNone)
		bb.Append(record.Record{Key: []byte("k"), Value: value, Timestamp: t0.UnixMilli()})
		batch, err := bb.Build()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := l.Append(batch); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Roll(); err != nil {
		b.Fatal(err)
	}
	if err := l.Flush(); err != nil { // keep the flusher's fsyncs out of the timing
		b.Fatal(err)
	}
	return l
}
