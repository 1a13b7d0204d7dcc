package quorum

// CreatePartitions (37), every version kmsg knows
// (controller.CreatePartitions), manual assignments included;
// validate-only requests run on a copy of the controller whose records
// are dropped.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
)

func init() {
	register(&api{key: kmsg.CreatePartitions.Int16(), handle: handleCreatePartitions,
		refuse: func(kreq kmsg.Request, code int16) kmsg.Response {
			resp := kmsg.NewPtrCreatePartitionsResponse()
			for _, t := range kreq.(*kmsg.CreatePartitionsRequest).Topics {
				rt := kmsg.NewCreatePartitionsResponseTopic()
				rt.Topic, rt.ErrorCode = t.Topic, code
				resp.Topics = append(resp.Topics, rt)
			}
			return resp
		}})
}

func handleCreatePartitions(n *Node, c *controller.Controller, now int64, kreq kmsg.Request) ([]metadata.Record, kmsg.Response, error) {
	req := kreq.(*kmsg.CreatePartitionsRequest)
	if req.ValidateOnly {
		c = controller.New(n.cfg.Controller, c.Image(), c.EndOffset(), now)
	}
	resp := kmsg.NewPtrCreatePartitionsResponse()
	var recs []metadata.Record
	for _, t := range req.Topics {
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic = t.Topic
		var as [][]int32
		for _, a := range t.Assignment {
			as = append(as, a.Replicas)
		}
		out, bug := c.CreatePartitions(t.Topic, t.Count, as)
		if bug != nil {
			return nil, nil, bug
		}
		recs = append(recs, out.Records...)
		err := out.Err
		rt.ErrorCode, rt.ErrorMessage = errorCode(err), errorMessage(err)
		resp.Topics = append(resp.Topics, rt)
	}
	if req.ValidateOnly {
		recs = nil
	}
	return recs, resp, nil
}
