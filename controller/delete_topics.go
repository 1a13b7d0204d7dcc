package controller

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/varve/varve/metadata"
)

// DeleteTopics (api key 20) as the controller decides it: one
// RemoveTopicRecord per topic, which removes the topic, its partitions
// and its configuration overrides. Kafka:
// ReplicationControlManager.deleteTopics. Topics are named by name, or
// by id (version 6+).

// TopicRef names a topic to delete: by Name, or by ID when Name is "".
type TopicRef struct {
	Name string
	ID   metadata.TopicID
}

// DeletedTopic is the outcome for one topic: its name and id when it
// exists, or an error.
type DeletedTopic struct {
	Name string
	ID   metadata.TopicID
	Err  error
}

// DeleteTopicsResponse answers DeleteTopics, one result per topic asked
// for, in order.
type DeleteTopicsResponse struct {
	Records []metadata.Record
	Results []DeletedTopic
}

// DeleteTopics deletes topics. Errors per topic:
// UNKNOWN_TOPIC_OR_PARTITION for an unknown name, UNKNOWN_TOPIC_ID for
// an unknown id, INVALID_REQUEST for a topic named twice in the request
// (Kafka's "Duplicate topic name").
func (c *Controller) DeleteTopics(topics []TopicRef) (DeleteTopicsResponse, error) {
	var resp DeleteTopicsResponse
	seen := map[metadata.TopicID]int{}
	for _, ref := range topics {
		res := c.lookupForDelete(ref)
		if res.Err == nil {
			seen[res.ID]++
		}
		resp.Results = append(resp.Results, res)
	}
	for i, res := range resp.Results {
		if res.Err != nil {
			continue
		}
		if seen[res.ID] > 1 {
			resp.Results[i].Err = kerr.InvalidRequest
			continue
		}
		rec := metadata.RemoveTopicRecord{TopicID: res.ID}
		if err := c.propose([]metadata.Record{rec}); err != nil {
			return DeleteTopicsResponse{}, err
		}
		resp.Records = append(resp.Records, rec)
	}
	return resp, nil
}

func (c *Controller) lookupForDelete(ref TopicRef) DeletedTopic {
	if ref.Name != "" {
		t, ok := c.img.Topic(ref.Name)
		if !ok {
			return DeletedTopic{Name: ref.Name, Err: kerr.UnknownTopicOrPartition}
		}
		return DeletedTopic{Name: t.Name, ID: t.ID}
	}
	t, ok := c.img.TopicByID(ref.ID)
	if !ok {
		return DeletedTopic{ID: ref.ID, Err: kerr.UnknownTopicID}
	}
	return DeletedTopic{Name: t.Name, ID: t.ID}
}
