package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// readResult is one read_committed read of a topic from its start.
type readResult struct {
	records  int64
	bytes    int64
	elapsed  time.Duration
	distinct int64 // sequence numbers below want seen at least once
	dups     int64 // records whose sequence number was seen before
	foreign  int64 // records without a sequence number below want
}

// complete says every committed record was read once and nothing else.
func (r readResult) complete(want uint64) bool {
	return r.distinct == int64(want) && r.dups == 0 && r.foreign == 0
}

// readCommitted reads topic from the start with one read_committed
// consumer until it has seen want records or timeout passes, checking
// each record's sequence number against the committed range [0, want).
func readCommitted(ctx context.Context, addr, topic string, want uint64, timeout time.Duration) (readResult, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return readResult{}, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	seen := make([]uint64, (want+63)/64)
	var r readResult
	start := time.Now()
	for uint64(r.records) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		if err := fs.Err0(); err != nil {
			return r, fmt.Errorf("read %s: %w", topic, err)
		}
		fs.EachRecord(func(rec *kgo.Record) { r.note(rec.Value, seen, want) })
	}
	r.elapsed = time.Since(start)
	return r, nil
}

// note counts one record whose value starts with its sequence number.
func (r *readResult) note(v []byte, seen []uint64, want uint64) {
	r.records++
	r.bytes += int64(len(v))
	if len(v) < seqBytes {
		r.foreign++
		return
	}
	s := binary.BigEndian.Uint64(v)
	if s >= want {
		r.foreign++
		return
	}
	w, bit := s/64, uint64(1)<<(s%64)
	if seen[w]&bit != 0 {
		r.dups++
		return
	}
	seen[w] |= bit
	r.distinct++
}
