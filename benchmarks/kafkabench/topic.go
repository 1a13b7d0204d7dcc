package kafkabench

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// EnsureTopic creates topic with partitions and replication factor rf
// if it does not exist (-1 for either takes the broker's default, as
// Kafka's CreateTopics v4+ allows), and reports whether it created it. An
// existing topic is left as it is, whatever its partition count.
func EnsureTopic(ctx context.Context, brokers []string, topic string, partitions int32, rf int16) (bool, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return false, fmt.Errorf("ensure topic %s: %w", topic, err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	details, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return false, fmt.Errorf("ensure topic %s: list: %w", topic, err)
	}
	if d, ok := details[topic]; ok && d.Err == nil {
		return false, nil
	}
	resp, err := adm.CreateTopic(ctx, partitions, rf, nil, topic)
	if err == nil {
		err = resp.Err
	}
	switch {
	case errors.Is(err, kerr.TopicAlreadyExists):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("ensure topic %s: create: %w", topic, err)
	}
	return true, nil
}

// TopicRecords returns how many offsets topic holds: the sum over its
// partitions of log end offset minus log start offset.
func TopicRecords(ctx context.Context, adm *kadm.Client, topic string) (int64, error) {
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return 0, fmt.Errorf("count records of %s: start offsets: %w", topic, err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return 0, fmt.Errorf("count records of %s: end offsets: %w", topic, err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) {
		if s, ok := starts.Lookup(o.Topic, o.Partition); ok {
			n += o.Offset - s.Offset
		}
	})
	return n, nil
}
