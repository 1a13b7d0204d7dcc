package cluster

import (
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/config"
	"github.com/varve/varve/controller"
	"github.com/varve/varve/logdir"
	"github.com/varve/varve/metadata"
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
// image's topic it was resolved from: a change to the topic replaces it
// in the next image, so a cached entry is used only while the topic it
// came from is current.
func (b *Broker) topicConfig(name string) config.Topic {
	t, _ := b.meta.image().Topic(name)
	cfg := b.effectiveConfig()
	if c, ok := b.topicConfigs.Load(name); ok && c.(cachedTopicConfig).topic == t && c.(cachedTopicConfig).cfg == cfg {
		return c.(cachedTopicConfig).tc
	}
	tc := resolveTopicConfig(b, cfg, t)
	b.topicConfigs.Store(name, cachedTopicConfig{topic: t, cfg: cfg, tc: tc})
	return tc
}

type cachedTopicConfig struct {
	topic *metadata.Topic // nil: no such topic, the defaults
	cfg   *config.Broker  // the broker configuration (with its dynamic settings) it was resolved over
	tc    config.Topic
}

// forgetTopicConfig drops a topic's cached configuration (the topic
// check alone would also catch it).
func (b *Broker) forgetTopicConfig(name string) { b.topicConfigs.Delete(name) }

func resolveTopicConfig(b *Broker, cfg *config.Broker, t *metadata.Topic) config.Topic {
	if t == nil {
		return cfg.TopicDefaults()
	}
	tc, err := cfg.ParseTopic(t.Configs)
	if err != nil {
		b.log.Warn("stored topic config no longer parses; using defaults", "topic", t.Name, "err", err)
		return cfg.TopicDefaults()
	}
	return tc
}

// topicSpec is a topic a request asks for.
type topicSpec struct {
	name       string
	partitions int32 // -1: num.partitions
	rf         int16 // -1: default.replication.factor
	configs    map[string]string
	// assignments are CreateTopics' manual replica assignments (then
	// partitions and rf must be -1, and become the assignments' count
	// and length once checked).
	assignments []controller.ReplicaAssignment
}

// checkTopic fills a spec's defaults and validates it, with a kerr
// error for the client.
func (b *Broker) checkTopic(s *topicSpec) error {
	if err := validTopicName(s.name); err != nil {
		return err
	}
	if len(s.assignments) > 0 {
		if err := b.checkAssignments(s); err != nil {
			return err
		}
		s.partitions, s.rf = int32(len(s.assignments)), int16(len(s.assignments[0].Replicas))
	}
	if s.partitions == -1 {
		s.partitions = int32(b.cfg.NumPartitions)
	}
	if s.rf == -1 {
		s.rf = int16(b.cfg.DefaultReplicationFactor)
	}
	if s.partitions < 1 || s.partitions > maxPartitionsPerTopic {
		return fmt.Errorf("%w: %d partitions, this node allows 1 to %d per topic", kerr.InvalidPartitions, s.partitions, maxPartitionsPerTopic)
	}
	switch {
	case b.ctrl != nil && s.rf < 1:
		return kerr.InvalidReplicationFactor
	case b.ctrl == nil && s.rf != 1:
		// One node: a replication factor above 1 cannot be placed.
		return kerr.InvalidReplicationFactor
	}
	if _, err := b.cfg.ParseTopic(s.configs); err != nil {
		return fmt.Errorf("%w: %v", kerr.InvalidConfig, err)
	}
	return nil
}

// checkAssignments checks manual assignments: a single node against its
// image (they can name this node alone), a broker of a cluster their
// shape only, the controller deciding the rest.
func (b *Broker) checkAssignments(s *topicSpec) error {
	if b.ctrl != nil {
		return controller.CheckAssignmentShape(s.partitions, s.rf, s.assignments)
	}
	return controller.CheckTopicAssignments(b.meta.image(), s.partitions, s.rf, s.assignments)
}

// createTopic creates one topic outside any client's quota (the
// broker's internal topics).
func (b *Broker) createTopic(s topicSpec) (*metadata.Topic, error) {
	ts, errs := b.createTopics([]topicSpec{s}, false, quotaCheck{})
	return ts[0], errs[0]
}

// createTopics validates topics, records them in one metadata change,
// then creates their partitions. Topics beyond the quota (nil: none)
// get THROTTLING_QUOTA_EXCEEDED. Errors are kerr errors, one per spec.
func (b *Broker) createTopics(specs []topicSpec, validateOnly bool, q quotaCheck) ([]*metadata.Topic, []error) {
	b.meta.admin.Lock()
	defer b.meta.admin.Unlock()
	topics, errs := make([]*metadata.Topic, len(specs)), make([]error, len(specs))
	ids := make([]metadata.TopicID, len(specs))
	adding := int32(0)
	for i := range specs {
		errs[i] = b.checkTopic(&specs[i])
		if errs[i] == nil {
			adding += specs[i].partitions
			errs[i] = b.checkFileLimit(adding) // refused before anything is written
		}
	}
	if b.ctrl != nil {
		return b.forwardCreateTopics(specs, errs, validateOnly, q), errs
	}
	if validateOnly {
		img := b.meta.image()
		for i, s := range specs {
			if _, exists := img.Topic(s.name); exists && errs[i] == nil {
				errs[i] = kerr.TopicAlreadyExists
			}
			topics[i] = &metadata.Topic{Name: s.name, ID: newTopicID(), Partitions: make([]metadata.Partition, s.partitions)}
		}
		return topics, errs
	}
	next, err := b.meta.change(func(cur *metadata.Image) ([]metadata.Record, error) {
		var recs []metadata.Record
		planned := map[string]bool{}
		for i, s := range specs {
			if _, exists := cur.Topic(s.name); (exists || planned[s.name]) && errs[i] == nil {
				errs[i] = kerr.TopicAlreadyExists
			}
			if errs[i] == nil {
				errs[i] = q.admit(s.partitions)
			}
			if errs[i] != nil {
				continue
			}
			planned[s.name], ids[i] = true, newTopicID()
			recs = append(recs, b.meta.topicRecords(s.name, ids[i], 0, s.partitions, s.configs)...)
		}
		return recs, nil
	})
	for i, s := range specs {
		if errs[i] != nil {
			continue
		}
		if err != nil {
			errs[i] = fmt.Errorf("%w: %v", kerr.KafkaStorageError, err)
			continue
		}
		topics[i], _ = next.TopicByID(ids[i])
		b.forgetTopicConfig(s.name)
		errs[i] = b.createPartitions(topics[i], 0)
		b.log.Info("topic created", "topic", s.name, "partitions", s.partitions, "configs", s.configs, "err", errs[i])
	}
	return topics, errs
}

// createPartitions creates a topic's partitions from from on, as the
// image describes them. REQUIRES b.meta.admin.
func (b *Broker) createPartitions(t *metadata.Topic, from int32) error {
	for p := from; p < int32(len(t.Partitions)); p++ {
		if err := b.meta.step("create partition"); err != nil {
			return err
		}
		tp := segment.TopicPartition{Topic: t.Name, Partition: p}
		if _, err := b.parts.CreatePartition(tp, replica.TopicID(t.ID)); err != nil && !errors.Is(err, replica.ErrPartitionExists) {
			return fmt.Errorf("%w: %v", kerr.KafkaStorageError, err)
		}
	}
	return nil
}

// deleteTopics removes topics: first from the metadata, with their
// directories queued for deletion in the same write, then their
// partitions, then the queue entry. Killed midway, the node finishes
// the deletion at its next start. Errors are kerr errors, one per name.
func (b *Broker) deleteTopics(names []string, q quotaCheck) []error {
	b.meta.admin.Lock()
	defer b.meta.admin.Unlock()
	errs := make([]error, len(names))
	img := b.meta.image()
	var gone []*metadata.Topic
	seen := map[string]bool{}
	for i, name := range names {
		t, ok := img.Topic(name)
		switch {
		case !ok || seen[name]:
			errs[i] = kerr.UnknownTopicOrPartition
		default:
			errs[i] = q.admit(int32(len(t.Partitions)))
		}
		if errs[i] == nil {
			seen[name] = true
			gone = append(gone, t)
		}
	}
	if len(gone) == 0 {
		return errs
	}
	if b.ctrl != nil {
		b.forwardDeleteTopics(names, errs)
		return errs
	}
	if err := b.meta.removeTopics(gone); err != nil {
		for i := range names {
			if seen[names[i]] {
				errs[i] = fmt.Errorf("%w: %v", kerr.KafkaStorageError, err)
			}
		}
		return errs
	}
	var done []metadata.TopicID
	for _, t := range gone {
		b.forgetTopicConfig(t.Name)
		err := b.deletePartitions(t.Name, t.ID)
		if err == nil {
			done = append(done, t.ID)
		}
		errs[slices.Index(names, t.Name)] = err
		b.log.Info("topic deleted", "topic", t.Name, "err", err)
	}
	if err := b.meta.deleted(done); err != nil {
		b.log.Warn("topics deleted, but not yet from the deletion queue; the next start finishes it", "err", err)
	}
	return errs
}

// deletePartitions deletes every partition of topic whose id is id (or
// which has no id, from before ids existed). REQUIRES b.meta.admin.
func (b *Broker) deletePartitions(topic string, id metadata.TopicID) error {
	var errs error
	for _, p := range b.parts.Partitions() {
		if p.TP.Topic != topic || (p.TopicID != replica.TopicID(id) && p.TopicID != (replica.TopicID{})) {
			continue
		}
		if err := b.meta.step("delete partition"); err != nil {
			return err
		}
		err := b.parts.DeletePartition(p.TP)
		if err != nil && !errors.Is(err, replica.ErrUnknownPartition) {
			errs = errors.Join(errs, err)
		}
	}
	return errs
}

// addPartitions grows a topic to count partitions: recorded first,
// then created.
func (b *Broker) addPartitions(name string, count int32, assignments [][]int32, validateOnly bool, q quotaCheck) error {
	b.meta.admin.Lock()
	defer b.meta.admin.Unlock()
	t, ok := b.meta.image().Topic(name)
	n := int32(0)
	if ok {
		n = int32(len(t.Partitions))
	}
	switch {
	case !ok:
		return kerr.UnknownTopicOrPartition
	case count < n:
		return fmt.Errorf("%w: topic has %d partitions, cannot go down to %d", kerr.InvalidPartitions, n, count)
	case count > maxPartitionsPerTopic:
		return fmt.Errorf("%w: %d partitions, this node allows at most %d per topic", kerr.InvalidPartitions, count, maxPartitionsPerTopic)
	case count == n:
		return fmt.Errorf("%w: topic already has %d partitions", kerr.InvalidPartitions, count)
	}
	if b.ctrl != nil {
		if !validateOnly {
			if err := q.admit(count - n); err != nil {
				return err
			}
		}
		return b.forwardCreatePartitions(name, count, assignments, validateOnly)
	}
	if assignments != nil {
		// One node: the new partitions may be assigned to it alone.
		if err := controller.CheckPartitionAssignments(b.meta.image(), n, count, 1, assignments); err != nil {
			return err
		}
	}
	if err := b.checkFileLimit(count - n); err != nil || validateOnly {
		return err
	}
	if err := q.admit(count - n); err != nil {
		return err
	}
	next, err := b.meta.change(func(*metadata.Image) ([]metadata.Record, error) {
		return b.meta.topicRecords(name, t.ID, n, count, nil), nil
	})
	if err != nil {
		return fmt.Errorf("%w: %v", kerr.KafkaStorageError, err)
	}
	t, _ = next.TopicByID(t.ID)
	return b.createPartitions(t, n)
}

// partition finds a partition or returns the Kafka error for its absence.
// On a cluster node, a partition loaded from disk that the metadata has
// not yet made a leader or follower here is NOT_LEADER_OR_FOLLOWER: its
// log may be the unsynced remains of a process that did not shut down
// cleanly (see registeredIn), and serving it alone would answer reads
// past its end with OFFSET_OUT_OF_RANGE and take writes no replica
// holds.
func (b *Broker) partition(topic string, p int32) (*replica.Partition, error) {
	part, ok := b.parts.Partition(segment.TopicPartition{Topic: topic, Partition: p})
	if !ok {
		return nil, kerr.UnknownTopicOrPartition
	}
	if b.quorum != nil && !part.Replicated() {
		return nil, kerr.NotLeaderForPartition
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
	case errors.Is(err, segment.ErrTransactionCoordinatorFenced):
		return kerr.TransactionCoordinatorFenced.Code
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
	case errors.Is(err, segment.ErrLogFailed), errors.Is(err, segment.ErrClosed), errors.Is(err, logdir.ErrOffline), isIOError(err):
		return kerr.KafkaStorageError.Code
	}
	return kerr.UnknownServerError.Code
}

// checkFileLimit refuses, before anything is written, a creation of
// adding partitions that would take the node past its open-files limit.
// Kafka answers a creation the broker's policy refuses with
// POLICY_VIOLATION and a message (CreateTopicPolicy); so do we.
func (b *Broker) checkFileLimit(adding int32) error {
	if err := segment.CheckCanCreate(len(b.parts.Partitions()), int(adding), nil); err != nil {
		return fmt.Errorf("%w: %v", kerr.PolicyViolation, err)
	}
	return nil
}

// isIOError: a write, fsync or other file operation failed (Kafka answers
// KAFKA_STORAGE_ERROR from the first failure).
func isIOError(err error) bool {
	var ioe *segment.IOError
	return errors.As(err, &ioe)
}
