package cluster

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/config"
	"github.com/varve/varve/record"
	"github.com/varve/varve/replica"
	"github.com/varve/varve/segment"
)

// Kafka's topic name rule (Topic.validate): 1 to 249 of [a-zA-Z0-9._-],
// and not "." or "..".
var legalTopic = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`)

// maxPartitionsPerTopic bounds what one request can make a node create.
// Kafka has no such limit, but each partition costs three files and two
// index mappings here: a request for millions must get an error, not
// exhaust the node.
const maxPartitionsPerTopic = 10000

func validTopicName(name string) error {
	if !legalTopic.MatchString(name) || name == "." || name == ".." {
		return kerr.InvalidTopicException
	}
	return nil
}

// topicConfig resolves a topic's configuration: its overrides over the
// broker's log.* defaults.
//
// Resolved configurations are cached (every Produce asks), each with the
// metadata version it was resolved from: any metadata change makes every
// entry stale, so a resolution racing a change can never outlive it.
func (b *Broker) topicConfig(name string) config.Topic {
	v := b.meta.version.Load()
	if c, ok := b.topicConfigs.Load(name); ok && c.(cachedTopicConfig).version == v {
		return c.(cachedTopicConfig).tc
	}
	tc := b.resolveTopicConfig(name)
	b.topicConfigs.Store(name, cachedTopicConfig{version: v, tc: tc})
	return tc
}

type cachedTopicConfig struct {
	version uint64
	tc      config.Topic
}

// forgetTopicConfig drops a topic's cached configuration (the version
// check alone would also catch it).
func (b *Broker) forgetTopicConfig(name string) { b.topicConfigs.Delete(name) }

func (b *Broker) resolveTopicConfig(name string) config.Topic {
	t, ok := b.meta.topic(name)
	if !ok {
		return b.cfg.TopicDefaults()
	}
	tc, err := b.cfg.ParseTopic(t.Configs)
	if err != nil {
		b.log.Warn("stored topic config no longer parses; using defaults", "topic", name, "err", err)
		return b.cfg.TopicDefaults()
	}
	return tc
}

// logConfig is what the replica manager opens a topic's logs with.
func (b *Broker) logConfig(topic string) segment.Config {
	c := b.topicConfig(topic).SegmentConfig()
	c.OnFlush = b.metrics.flushed
	c.ProducerIDExpiration = b.cfg.ProducerIDExpirationMs.Duration()
	return c
}

// createTopic validates and records a topic, then creates its
// partitions. It returns a kerr error for the client.
func (b *Broker) createTopic(name string, partitions int32, rf int16, configs map[string]string, validateOnly bool) (topicMeta, error) {
	if err := validTopicName(name); err != nil {
		return topicMeta{}, err
	}
	if partitions == -1 {
		partitions = int32(b.cfg.NumPartitions)
	}
	if rf == -1 {
		rf = int16(b.cfg.DefaultReplicationFactor)
	}
	if partitions < 1 || partitions > maxPartitionsPerTopic {
		return topicMeta{}, fmt.Errorf("%w: %d partitions, this node allows 1 to %d per topic", kerr.InvalidPartitions, partitions, maxPartitionsPerTopic)
	}
	if rf != 1 {
		// One node: a replication factor above 1 cannot be placed.
		return topicMeta{}, kerr.InvalidReplicationFactor
	}
	if _, err := b.cfg.ParseTopic(configs); err != nil {
		return topicMeta{}, fmt.Errorf("%w: %v", kerr.InvalidConfig, err)
	}
	t := topicMeta{Name: name, ID: newTopicID(), Partitions: partitions, Configs: configs}
	if validateOnly {
		if _, exists := b.meta.topic(name); exists {
			return topicMeta{}, kerr.TopicAlreadyExists
		}
		return t, nil
	}
	err := b.meta.update(func(f *metaFile) error {
		if _, exists := f.Topics[name]; exists {
			return kerr.TopicAlreadyExists
		}
		tc := t
		f.Topics[name] = &tc
		return nil
	})
	if err != nil {
		return topicMeta{}, err
	}
	b.forgetTopicConfig(name)
	for p := int32(0); p < partitions; p++ {
		if _, err := b.parts.CreatePartition(segment.TopicPartition{Topic: name, Partition: p}, t.ID); err != nil && !errors.Is(err, replica.ErrPartitionExists) {
			return t, fmt.Errorf("%w: %v", kerr.KafkaStorageError, err)
		}
	}
	b.log.Info("topic created", "topic", name, "partitions", partitions, "configs", configs)
	return t, nil
}

// deleteTopic removes a topic and its partitions.
func (b *Broker) deleteTopic(name string) error {
	var t topicMeta
	err := b.meta.update(func(f *metaFile) error {
		tm, ok := f.Topics[name]
		if !ok {
			return kerr.UnknownTopicOrPartition
		}
		t = *tm
		delete(f.Topics, name)
		return nil
	})
	if err != nil {
		return err
	}
	b.forgetTopicConfig(name)
	var errs error
	for p := int32(0); p < t.Partitions; p++ {
		err := b.parts.DeletePartition(segment.TopicPartition{Topic: name, Partition: p})
		if err != nil && !errors.Is(err, replica.ErrUnknownPartition) {
			errs = errors.Join(errs, err)
		}
	}
	b.log.Info("topic deleted", "topic", name, "err", errs)
	return errs
}

// addPartitions grows a topic to count partitions.
func (b *Broker) addPartitions(name string, count int32, validateOnly bool) error {
	t, ok := b.meta.topic(name)
	switch {
	case !ok:
		return kerr.UnknownTopicOrPartition
	case count < t.Partitions:
		return fmt.Errorf("%w: topic has %d partitions, cannot go down to %d", kerr.InvalidPartitions, t.Partitions, count)
	case count > maxPartitionsPerTopic:
		return fmt.Errorf("%w: %d partitions, this node allows at most %d per topic", kerr.InvalidPartitions, count, maxPartitionsPerTopic)
	case count == t.Partitions:
		return fmt.Errorf("%w: topic already has %d partitions", kerr.InvalidPartitions, count)
	case validateOnly:
		return nil
	}
	if err := b.meta.update(func(f *metaFile) error { f.Topics[name].Partitions = count; return nil }); err != nil {
		return err
	}
	for p := t.Partitions; p < count; p++ {
		if _, err := b.parts.CreatePartition(segment.TopicPartition{Topic: name, Partition: p}, t.ID); err != nil && !errors.Is(err, replica.ErrPartitionExists) {
			return fmt.Errorf("%w: %v", kerr.KafkaStorageError, err)
		}
	}
	return nil
}

// adoptPartitions reconciles the catalogue with the partitions found on
// disk at start: a partition whose topic the catalogue lacks (a lost or
// older metadata file) is adopted rather than deleted, so that data is
// never dropped because of metadata.
func (b *Broker) adoptPartitions() error {
	return b.meta.update(func(f *metaFile) error {
		for _, p := range b.parts.Partitions() {
			t, ok := f.Topics[p.TP.Topic]
			if !ok {
				id := p.TopicID
				if id == (replica.TopicID{}) {
					id = newTopicID()
				}
				t = &topicMeta{Name: p.TP.Topic, ID: id}
				f.Topics[p.TP.Topic] = t
				b.log.Warn("adopted a partition missing from the metadata", "partition", p.TP, "topic_id", id)
			}
			t.Partitions = max(t.Partitions, p.TP.Partition+1)
		}
		// Partitions the catalogue names but the disk lacks are created.
		for _, t := range f.Topics {
			for p := int32(0); p < t.Partitions; p++ {
				tp := segment.TopicPartition{Topic: t.Name, Partition: p}
				if _, ok := b.parts.Partition(tp); !ok {
					if _, err := b.parts.CreatePartition(tp, t.ID); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
}

// partition finds a partition or returns the Kafka error for its absence.
func (b *Broker) partition(topic string, p int32) (*replica.Partition, error) {
	part, ok := b.parts.Partition(segment.TopicPartition{Topic: topic, Partition: p})
	if !ok {
		return nil, kerr.UnknownTopicOrPartition
	}
	return part, nil
}

// errorCode maps an error to a Kafka error code.
func errorCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	switch {
	case errors.Is(err, segment.ErrOutOfOrderSequence):
		return kerr.OutOfOrderSequenceNumber.Code
	case errors.Is(err, segment.ErrInvalidProducerEpoch):
		return kerr.InvalidProducerEpoch.Code
	case errors.Is(err, segment.ErrInvalidTxnState):
		return kerr.InvalidTxnState.Code
	case errors.Is(err, record.ErrInvalidTimestamp):
		return kerr.InvalidTimestamp.Code
	case errors.Is(err, record.ErrInvalidRecord):
		return kerr.InvalidRecord.Code
	case errors.Is(err, segment.ErrOffsetOutOfRange):
		return kerr.OffsetOutOfRange.Code
	case errors.Is(err, segment.ErrRecordBatchTooLarge), errors.Is(err, record.ErrBatchTooLarge):
		return kerr.MessageTooLarge.Code
	case errors.Is(err, record.ErrCorruptBatch), errors.Is(err, record.ErrInvalidRecordCount):
		return kerr.CorruptMessage.Code
	case errors.Is(err, replica.ErrUnknownPartition):
		return kerr.UnknownTopicOrPartition.Code
	case errors.Is(err, segment.ErrLogFailed), errors.Is(err, segment.ErrClosed):
		return kerr.KafkaStorageError.Code
	}
	return kerr.UnknownServerError.Code
}
