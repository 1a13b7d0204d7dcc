package retention_test

import (
	"testing"
	"time"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// t0 is the base of the timestamps the tests write, in milliseconds.
var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// logConfig is the tests' log configuration: Kafka's defaults, except
// that a removed segment's files go after 1 ms instead of 60 s.
func logConfig() segment.Config {
	c := segment.DefaultConfig()
	c.FileDeleteDelay = time.Millisecond
	return c
}

func openLog(t testing.TB, dir string, cfg segment.Config) *segment.Log {
	t.Helper()
	l, err := segment.Open(dir, cfg)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return l
}

// batch builds one batch of n records of valueSize bytes with timestamp
// ts (milliseconds; -1 for none).
func batch(t testing.TB, n, valueSize int, ts int64) []byte {
	t.Helper()
	b := record.NewBatchBuilder(record.CompressionNone)
	for i := 0; i < n; i++ {
		b.Append(record.Record{Key: []byte{byte(i)}, Value: make([]byte, valueSize), Timestamp: ts})
	}
	out, err := b.Build()
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return out
}

// segmentsAt fills l with one sealed segment per timestamp (one batch of
// 10 records each, rolled after), leaving an empty active segment.
func segmentsAt(t testing.TB, l *segment.Log, tss ...time.Time) {
	t.Helper()
	for _, ts := range tss {
		if _, err := l.Append(batch(t, 10, 100, ts.UnixMilli())); err != nil {
			t.Fatalf("append: %v", err)
		}
		if err := l.Roll(); err != nil {
			t.Fatalf("roll: %v", err)
		}
	}
}

// bases lists the base offsets of l's segments.
func bases(l *segment.Log) []int64 {
	var out []int64
	for _, s := range l.Segments() {
		out = append(out, s.BaseOffset)
	}
	return out
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
