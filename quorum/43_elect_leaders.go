package quorum

// ElectLeaders (43), every version kmsg knows (KIP-460): PREFERRED or
// UNCLEAN elections (controller.ElectLeaders); null topics ask for every
// partition that needs one. Version 0 has no election type: PREFERRED.

import (
	"cmp"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
)

func init() {
	register(&api{key: kmsg.ElectLeaders.Int16(), handle: handleElectLeaders,
		refuse: func(_ kmsg.Request, code int16) kmsg.Response {
			resp := kmsg.NewPtrElectLeadersResponse()
			resp.ErrorCode = code
			return resp
		}})
}

func handleElectLeaders(_ *Node, c *controller.Controller, _ int64, kreq kmsg.Request) ([]metadata.Record, kmsg.Response, error) {
	req := kreq.(*kmsg.ElectLeadersRequest)
	var parts []controller.TopicPartition
	if req.Topics != nil {
		parts = []controller.TopicPartition{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				parts = append(parts, controller.TopicPartition{Topic: t.Topic, Partition: p})
			}
		}
	}
	out, err := c.ElectLeaders(controller.ElectionType(req.ElectionType), parts)
	if err != nil {
		return nil, nil, err
	}
	resp := kmsg.NewPtrElectLeadersResponse()
	for _, tp := range sortedPartitions(out.Results) {
		e := out.Results[tp]
		if len(resp.Topics) == 0 || resp.Topics[len(resp.Topics)-1].Topic != tp.Topic {
			rt := kmsg.NewElectLeadersResponseTopic()
			rt.Topic = tp.Topic
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewElectLeadersResponseTopicPartition()
		rp.Partition, rp.ErrorCode, rp.ErrorMessage = tp.Partition, errorCode(e), errorMessage(e)
		rt := &resp.Topics[len(resp.Topics)-1]
		rt.Partitions = append(rt.Partitions, rp)
	}
	return out.Records, resp, nil
}

func sortedPartitions(m map[controller.TopicPartition]error) []controller.TopicPartition {
	out := make([]controller.TopicPartition, 0, len(m))
	for tp := range m {
		out = append(out, tp)
	}
	slices.SortFunc(out, func(a, b controller.TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}
