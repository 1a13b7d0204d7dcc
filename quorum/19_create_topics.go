package quorum

// CreateTopics (19), every version kmsg knows: topics placed by the
// controller (controller.CreateTopics). Validate-only requests run on a
// copy of the controller whose records are dropped. Manual replica
// assignments are checked and placed by the controller
// (controller.CheckTopicAssignments). Configuration overrides
// are checked by Config.Controller.TopicSettings when set (INVALID_CONFIG),
// as Kafka's controller validates them before it writes ConfigRecords.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
)

func init() {
	register(&api{key: kmsg.CreateTopics.Int16(), handle: handleCreateTopics,
		refuse: func(kreq kmsg.Request, code int16) kmsg.Response {
			req := kreq.(*kmsg.CreateTopicsRequest)
			resp := kmsg.NewPtrCreateTopicsResponse()
			for _, t := range req.Topics {
				rt := kmsg.NewCreateTopicsResponseTopic()
				rt.Topic, rt.ErrorCode = t.Topic, code
				rt.NumPartitions, rt.ReplicationFactor = -1, -1
				resp.Topics = append(resp.Topics, rt)
			}
			return resp
		}})
}

func handleCreateTopics(n *Node, c *controller.Controller, now int64, kreq kmsg.Request) ([]metadata.Record, kmsg.Response, error) {
	req := kreq.(*kmsg.CreateTopicsRequest)
	var asked []controller.CreatableTopic
	refused := map[string]error{}
	for _, t := range req.Topics {
		ct := controller.CreatableTopic{Name: t.Topic, NumPartitions: t.NumPartitions, ReplicationFactor: t.ReplicationFactor}
		for _, a := range t.ReplicaAssignment {
			ct.Assignments = append(ct.Assignments, controller.ReplicaAssignment{Partition: a.Partition, Replicas: a.Replicas})
		}
		for _, cfg := range t.Configs {
			if ct.Configs == nil {
				ct.Configs = map[string]string{}
			}
			if cfg.Value != nil {
				ct.Configs[cfg.Name] = *cfg.Value
			}
		}
		if err := n.checkNewTopic(ct.Configs); err != nil {
			refused[t.Topic] = err
			continue
		}
		asked = append(asked, ct)
	}
	if req.ValidateOnly {
		c = controller.New(n.cfg.Controller, c.Image(), c.EndOffset(), now)
	}
	recs, created, err := c.CreateTopics(asked)
	if err != nil {
		return nil, nil, err
	}
	if req.ValidateOnly {
		recs = nil
	}
	return recs, createTopicsResponse(req, created, refused), nil
}

// checkNewTopic refuses what the controller does not decide: invalid
// configuration values.
func (n *Node) checkNewTopic(configs map[string]string) error {
	if n.cfg.Controller.TopicSettings != nil {
		if _, err := n.cfg.Controller.TopicSettings(configs); err != nil {
			return fmt.Errorf("%w: %v", kerr.InvalidConfig, err)
		}
	}
	return nil
}

func createTopicsResponse(req *kmsg.CreateTopicsRequest, created []controller.CreatedTopic, refused map[string]error) *kmsg.CreateTopicsResponse {
	resp := kmsg.NewPtrCreateTopicsResponse()
	byName := map[string]controller.CreatedTopic{}
	for _, ct := range created {
		byName[ct.Name] = ct
	}
	for _, t := range req.Topics {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = t.Topic, -1, -1
		ct, ok := byName[t.Topic]
		err := refused[t.Topic]
		if ok && err == nil {
			err = ct.Err
		}
		rt.ErrorCode, rt.ErrorMessage = errorCode(err), errorMessage(err)
		if err == nil {
			rt.TopicID, rt.NumPartitions, rt.ReplicationFactor = ct.TopicID, ct.NumPartitions, ct.ReplicationFactor
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
