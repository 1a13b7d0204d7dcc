package controller

import (
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/varve/varve/metadata"
)

// CreateTopics (api key 19) as the controller decides it: names
// validated as Kafka's Topic.validate,
// replicas placed by place or by the request's manual assignments
// (assignments.go), topic ids from Config.NewTopicID. Not done here:
// validate-only requests (the request handler answers those), and the
// validation of configuration values (package config's, done by the
// caller before it asks).

// CreatableTopic is one topic to create; -1 asks for the cluster's
// default partition count or replication factor. With Assignments, the
// partitions are placed as they say, and NumPartitions and
// ReplicationFactor must be -1.
type CreatableTopic struct {
	Name              string
	NumPartitions     int32
	ReplicationFactor int16
	Configs           map[string]string
	Assignments       []ReplicaAssignment
}

// CreatedTopic is the outcome for one topic.
type CreatedTopic struct {
	Name              string
	Err               error
	TopicID           metadata.TopicID
	NumPartitions     int32
	ReplicationFactor int16
}

// maxTopicNameLength is Kafka's Topic.MAX_NAME_LENGTH.
const maxTopicNameLength = 249

// MaxPartitionsPerRequest bounds the partitions one CreateTopics or
// CreatePartitions request may create, and so the records (and memory)
// one request costs. Kafka: ReplicationControlManager's
// MAX_PARTITIONS_PER_BATCH (10000); beyond it the whole request fails
// with POLICY_VIOLATION.
const MaxPartitionsPerRequest = 10_000

// CreateTopics creates topics; each gets its own result and records.
func (c *Controller) CreateTopics(topics []CreatableTopic) ([]metadata.Record, []CreatedTopic, error) {
	var recs []metadata.Record
	out := make([]CreatedTopic, 0, len(topics))
	tooMany := c.requestedPartitions(topics) > MaxPartitionsPerRequest
	for _, t := range topics {
		res := CreatedTopic{Name: t.Name}
		if tooMany {
			res.Err = kerr.PolicyViolation
			out = append(out, res)
			continue
		}
		r, err := c.createTopic(t, &res)
		if err != nil {
			return nil, nil, err
		}
		recs = append(recs, r...)
		out = append(out, res)
	}
	return recs, out, nil
}

// requestedPartitions sums the partitions a request asks for.
func (c *Controller) requestedPartitions(topics []CreatableTopic) int64 {
	var n int64
	for _, t := range topics {
		if len(t.Assignments) > 0 {
			n += int64(len(t.Assignments))
		} else if t.NumPartitions == -1 {
			n += int64(c.cfg.NumPartitions)
		} else if t.NumPartitions > 0 {
			n += int64(t.NumPartitions)
		}
	}
	return n
}

func (c *Controller) createTopic(t CreatableTopic, res *CreatedTopic) ([]metadata.Record, error) {
	if len(t.Assignments) > 0 {
		return c.createAssignedTopic(t, res)
	}
	if t.NumPartitions == -1 {
		t.NumPartitions = c.cfg.NumPartitions
	}
	if t.ReplicationFactor == -1 {
		t.ReplicationFactor = c.cfg.DefaultReplicationFactor
	}
	if res.Err = c.validateNewTopic(t); res.Err != nil {
		return nil, nil
	}
	id := c.newTopicID()
	recs := []metadata.Record{metadata.TopicRecord{Name: t.Name, TopicID: id}}
	for _, k := range slices.Sorted(maps.Keys(t.Configs)) {
		v := t.Configs[k]
		recs = append(recs, metadata.ConfigRecord{ResourceType: metadata.ConfigResourceTopic, ResourceName: t.Name, Name: k, Value: &v})
	}
	recs = append(recs, c.newPartitions(id, 0, t.NumPartitions, int(t.ReplicationFactor))...)
	if err := c.propose(recs); err != nil {
		return nil, err
	}
	res.TopicID, res.NumPartitions, res.ReplicationFactor = id, t.NumPartitions, t.ReplicationFactor
	return recs, nil
}

// createAssignedTopic creates a topic placed by its manual assignments.
func (c *Controller) createAssignedTopic(t CreatableTopic, res *CreatedTopic) ([]metadata.Record, error) {
	if res.Err = CheckTopicAssignments(c.img, t.NumPartitions, t.ReplicationFactor, t.Assignments); res.Err != nil {
		return nil, nil
	}
	if res.Err = c.validateNewTopic(CreatableTopic{Name: t.Name, NumPartitions: 1, ReplicationFactor: 1}); res.Err != nil {
		return nil, nil
	}
	id := c.newTopicID()
	recs := []metadata.Record{metadata.TopicRecord{Name: t.Name, TopicID: id}}
	recs = append(recs, metadata.TopicConfigRecords(t.Name, nil, t.Configs)...)
	as := make([][]int32, len(t.Assignments))
	for i, a := range t.Assignments {
		as[i] = a.Replicas
	}
	recs = append(recs, assignedPartitions(c.img, id, 0, as)...)
	if err := c.propose(recs); err != nil {
		return nil, err
	}
	res.TopicID, res.NumPartitions, res.ReplicationFactor = id, int32(len(as)), int16(len(as[0]))
	return recs, nil
}

// newTopicID draws an id that no topic has (Kafka: Uuid.randomUuid,
// redrawn on a clash or the zero id).
func (c *Controller) newTopicID() metadata.TopicID {
	for {
		id := c.cfg.NewTopicID()
		if _, taken := c.img.TopicByID(id); !taken && id != (metadata.TopicID{}) {
			return id
		}
	}
}

// newPartitions places partitions from..from+n-1 and records them: every
// replica in the ISR, the first replica leading.
func (c *Controller) newPartitions(id metadata.TopicID, from, n int32, rf int) []metadata.Record {
	var recs []metadata.Record
	for i, replicas := range c.place(n, rf) {
		recs = append(recs, metadata.PartitionRecord{PartitionID: from + int32(i), TopicID: id,
			Replicas: replicas, ISR: slices.Clone(replicas), Leader: replicas[0]})
	}
	return recs
}

func (c *Controller) validateNewTopic(t CreatableTopic) error {
	switch {
	case !validTopicName(t.Name):
		return kerr.InvalidTopicException
	case c.exists(t.Name):
		return kerr.TopicAlreadyExists
	case c.collides(t.Name):
		return kerr.InvalidTopicException
	case t.NumPartitions <= 0:
		return kerr.InvalidPartitions
	case t.ReplicationFactor <= 0 || int(t.ReplicationFactor) > c.usableBrokers():
		return kerr.InvalidReplicationFactor
	}
	return nil
}

func (c *Controller) exists(name string) bool {
	_, ok := c.img.Topic(name)
	return ok
}

// collides reports whether name differs from an existing name only by
// '.' against '_', which metric names cannot tell apart: Kafka refuses
// such a topic with INVALID_TOPIC_EXCEPTION.
func (c *Controller) collides(name string) bool {
	norm := strings.ReplaceAll(name, ".", "_")
	for t := range c.img.Topics() {
		if strings.ReplaceAll(t.Name, ".", "_") == norm {
			return true
		}
	}
	return false
}

// validTopicName is Kafka's Topic.validate: 1 to 249 characters of
// [a-zA-Z0-9._-], and neither "." nor "..".
func validTopicName(name string) bool {
	if name == "" || name == "." || name == ".." || len(name) > maxTopicNameLength {
		return false
	}
	for _, r := range name {
		ok := r == '.' || r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}
