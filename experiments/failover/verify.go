package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// stored is one record as a full read of the partition found it.
type stored struct {
	offset int64
	epoch  int32 // the partition leader epoch of its batch: who appended it
}

// readBack reads partition 0 of topic from its start to its high
// watermark and returns every record by its value's sequence number
// (a value stored twice keeps every copy).
func readBack(ctx context.Context, bootstrap []string, topic string, timeout time.Duration) (map[uint64][]stored, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	adm, err := kgo.NewClient(kgo.SeedBrokers(bootstrap...))
	if err != nil {
		return nil, err
	}
	defer adm.Close()
	ends, err := kadm.NewClient(adm).ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("read back: list end offsets: %w", err)
	}
	end, ok := ends.Lookup(topic, 0)
	if !ok || end.Err != nil {
		return nil, fmt.Errorf("read back: end offset of %s-0: %v", topic, end.Err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	out := map[uint64][]stored{}
	for next := int64(0); next < end.Offset; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read back: at offset %d of %d: %w", next, end.Offset, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if seq, ok := decodeSeq(r.Value); ok {
				out[seq] = append(out[seq], stored{offset: r.Offset, epoch: r.LeaderEpoch})
			}
			next = r.Offset + 1
		})
	}
	return out, nil
}

// verdict is what the full read says about the acknowledged records.
type verdict struct {
	acked      int // acknowledged produces
	stored     int // distinct values read
	missing    int // acknowledged, never read
	duplicated int // values read at more than one offset
	moved      int // acknowledged at one offset, read at another
}

func check(acks []ack, read map[uint64][]stored) verdict {
	v := verdict{acked: len(acks), stored: len(read)}
	for _, copies := range read {
		if len(copies) > 1 {
			v.duplicated++
		}
	}
	for _, a := range acks {
		copies := read[a.seq]
		switch {
		case len(copies) == 0:
			v.missing++
		case copies[0].offset != a.offset:
			v.moved++
		}
	}
	return v
}
