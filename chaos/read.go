package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// CreateTopic creates topic with partitions partitions and replication
// factor rf, retrying while the brokers are starting.
func CreateTopic(ctx context.Context, brokers []string, topic string, partitions int32, rf int16) error {
	return CreateTopicWith(ctx, brokers, topic, partitions, rf, nil)
}

// CreateTopicWith is CreateTopic with topic configs (such as
// min.insync.replicas) and client options.
func CreateTopicWith(ctx context.Context, brokers []string, topic string, partitions int32, rf int16,
	configs map[string]*string, opts ...kgo.Opt) error {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	for {
		resp, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, rf, configs, topic)
		if err == nil {
			err = resp.Err
		}
		if err == nil || ctx.Err() != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// FullRead reads every partition of topic from its log start offset to
// its end offset at the time of the call: the final read the checkers
// compare everything else with. opts are added to its clients.
func FullRead(ctx context.Context, brokers []string, topic string, opts ...kgo.Opt) (map[int32][]Rec, error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("list start offsets of %s: %w", topic, err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("list end offsets of %s: %w", topic, err)
	}
	out, from, want := map[int32][]Rec{}, map[int32]kgo.Offset{}, map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		out[o.Partition] = nil
		if s, ok := starts.Lookup(topic, o.Partition); ok && o.Offset > s.Offset {
			from[o.Partition], want[o.Partition] = kgo.NewOffset().At(s.Offset), o.Offset
		}
	})
	if len(from) == 0 {
		return out, nil
	}
	return out, readUntil(ctx, brokers, topic, from, want, out, opts)
}

// readUntil consumes the partitions in from until each reaches its
// offset in want, appending to out.
func readUntil(ctx context.Context, brokers []string, topic string, from map[int32]kgo.Offset, want map[int32]int64,
	out map[int32][]Rec, opts []kgo.Opt) error {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: from})}, opts...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return fmt.Errorf("full read of %s: %d partitions short of their end: %w", topic, len(want), ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			if end, ok := want[r.Partition]; ok && r.Offset < end {
				out[r.Partition] = append(out[r.Partition], Rec{r.Partition, r.Offset, string(r.Value)})
			}
		})
		for p, end := range want {
			if n := len(out[p]); n > 0 && out[p][n-1].Offset >= end-1 {
				delete(want, p)
			}
		}
	}
	return nil
}
