package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"time"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// batchAt is a v2 batch of n records of size bytes each, with its base
// offset set to base, as a leader hands it to a follower.
func batchAt(base int64, n, size int) ([]byte, error) {
	b := record.NewBatchBuilder(record.CompressionNone)
	value := make([]byte, size)
	for i := range value {
		value[i] = byte('A' + i%26)
	}
	for range n {
		b.Append(record.Record{Value: value})
	}
	out, err := b.Build()
	if err != nil {
		return nil, err
	}
	binary.BigEndian.PutUint64(out[0:8], uint64(base))
	return out, nil
}

// fetchOf is a fetch response's records: consecutive 16-record batches
// of 1 KiB records from base, about max bytes in all.
func fetchOf(base int64, max int) ([]byte, int64, error) {
	var out []byte
	for len(out) < max {
		b, err := batchAt(base, 16, 1024)
		if err != nil {
			return nil, 0, err
		}
		out, base = append(out, b...), base+16
	}
	return out, base, nil
}

// followerAppendRate appends size bytes of 1 MiB fetches to a fresh
// segment.Log under dir (Kafka's default segment size and no flush
// policy, as a follower's log) and returns bytes per second.
func followerAppendRate(dir string, size int64) (float64, error) {
	d, err := os.MkdirTemp(dir, "append-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(d)
	l, err := segment.Open(d, segment.DefaultConfig())
	if err != nil {
		return 0, err
	}
	defer l.Close()
	// The fetches are built before the clock starts: the follower receives them.
	var fetches [][]byte
	next := int64(0)
	for w := int64(0); w < size; {
		f, n, err := fetchOf(next, 1<<20)
		if err != nil {
			return 0, err
		}
		fetches, next, w = append(fetches, f), n, w+int64(len(f))
	}
	var bytes int64
	start := time.Now()
	for _, f := range fetches {
		if _, err := l.AppendReplicated(f); err != nil {
			return 0, fmt.Errorf("follower append: %w", err)
		}
		bytes += int64(len(f))
	}
	return float64(bytes) / time.Since(start).Seconds(), nil
}

// followerAppendLatency is the median time of n AppendReplicated calls
// of one batch of one small record, each its own fetch response: the
// follower's share of an acks=all round trip. flushMessages 1 makes
// every append fsync, as flush.messages=1 does.
func followerAppendLatency(dir string, n int, flushMessages int64) (time.Duration, error) {
	d, err := os.MkdirTemp(dir, "append-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(d)
	cfg := segment.DefaultConfig()
	if flushMessages > 0 {
		cfg.FlushMessages = flushMessages
	}
	l, err := segment.Open(d, cfg)
	if err != nil {
		return 0, err
	}
	defer l.Close()
	lat := make([]time.Duration, 0, n)
	for i := range n {
		b, err := batchAt(int64(i), 1, 100)
		if err != nil {
			return 0, err
		}
		start := time.Now()
		if _, err := l.AppendReplicated(b); err != nil {
			return 0, fmt.Errorf("follower append: %w", err)
		}
		lat = append(lat, time.Since(start))
	}
	return medianDuration(lat), nil
}
