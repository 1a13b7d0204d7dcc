package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Where varve consume starts, as kcat's -o and the console consumer's
// --offset/--from-beginning take it:
//
//	earliest (beginning)  each partition's log start offset
//	latest (end)          each partition's log end offset (the default)
//	N                     offset N
//	-N                    N before the log end offset (not before the start)
//	@T                    the first record with a timestamp >= T ms (ListOffsets by time)
type offsetSpec struct {
	kind offsetKind
	n    int64
}

type offsetKind int

const (
	offsetLatest offsetKind = iota
	offsetEarliest
	offsetExact
	offsetFromEnd
	offsetTime
)

func parseOffsetSpec(s string) (offsetSpec, error) {
	switch strings.ToLower(s) {
	case "", "latest", "end", "newest":
		return offsetSpec{kind: offsetLatest}, nil
	case "earliest", "beginning", "oldest":
		return offsetSpec{kind: offsetEarliest}, nil
	}
	kind, num := offsetExact, s
	switch {
	case strings.HasPrefix(s, "@"):
		kind, num = offsetTime, s[1:]
	case strings.HasPrefix(s, "-"):
		kind, num = offsetFromEnd, s[1:]
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return offsetSpec{}, fmt.Errorf("--offset %q: want earliest, latest, N, -N or @timestamp-ms: %w", s, errUsage)
	}
	return offsetSpec{kind: kind, n: n}, nil
}

// resetOffset is where a partition without a usable position starts: a
// group member without a committed offset, or a position out of range.
func (s offsetSpec) resetOffset() kgo.Offset {
	switch s.kind {
	case offsetEarliest:
		return kgo.NewOffset().AtStart()
	case offsetExact:
		return kgo.NewOffset().At(s.n)
	case offsetFromEnd:
		return kgo.NewOffset().AtEnd().Relative(-s.n)
	case offsetTime:
		return kgo.NewOffset().AfterMilli(s.n)
	}
	return kgo.NewOffset().AtEnd()
}

// partitionRange is a partition's start position and its end offset when
// the command started.
type partitionRange struct{ pos, end int64 }

// resolveOffsets lists the earliest and latest offsets of topic's
// partitions (only partition, if >= 0) and where spec starts in each.
func resolveOffsets(ctx context.Context, adm *kadm.Client, topic string, partition int32, spec offsetSpec) (map[int32]partitionRange, error) {
	starts, ends, err := listRange(ctx, adm, topic)
	if err != nil {
		return nil, err
	}
	var byTime kadm.ListedOffsets
	if spec.kind == offsetTime {
		if byTime, err = adm.ListOffsetsAfterMilli(ctx, spec.n, topic); err == nil {
			err = byTime.Error()
		}
		if err != nil {
			return nil, fmt.Errorf("offsets of %s after %d ms: %w", topic, spec.n, err)
		}
	}
	out := map[int32]partitionRange{}
	ends.Each(func(e kadm.ListedOffset) {
		if partition >= 0 && e.Partition != partition {
			return
		}
		s, _ := starts.Lookup(topic, e.Partition)
		t, _ := byTime.Lookup(topic, e.Partition)
		out[e.Partition] = partitionRange{pos: spec.position(s.Offset, e.Offset, t.Offset), end: e.Offset}
	})
	if len(out) == 0 {
		return nil, fmt.Errorf("topic %s has no partition %d: %w", topic, partition, errUsage)
	}
	return out, nil
}

// position is where spec starts in a partition holding [start, end);
// atTime is ListOffsets' answer for a timestamp (-1 if no record is that
// recent: start at the end, as Kafka's consumer does).
func (s offsetSpec) position(start, end, atTime int64) int64 {
	switch s.kind {
	case offsetEarliest:
		return start
	case offsetExact:
		return s.n
	case offsetFromEnd:
		return max(end-s.n, start)
	case offsetTime:
		if atTime < 0 {
			return end
		}
		return atTime
	}
	return end
}

func listRange(ctx context.Context, adm *kadm.Client, topic string) (starts, ends kadm.ListedOffsets, err error) {
	if starts, err = adm.ListStartOffsets(ctx, topic); err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("earliest offsets of %s: %w", topic, err)
	}
	if ends, err = adm.ListEndOffsets(ctx, topic); err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("latest offsets of %s: %w", topic, err)
	}
	return starts, ends, nil
}

// committedPositions replaces the start positions of partitions that
// group has committed offsets for.
func committedPositions(ctx context.Context, adm *kadm.Client, group, topic string, ranges map[int32]partitionRange) error {
	resps, err := adm.FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return nil // a new group: nothing committed (kfake says so; Kafka answers empty)
	}
	if err != nil {
		return fmt.Errorf("committed offsets of group %s: %w", group, err)
	}
	for p, r := range ranges {
		if o, ok := resps.Lookup(topic, p); ok && o.Err == nil && o.At >= 0 {
			r.pos = o.At
			ranges[p] = r
		}
	}
	return nil
}
