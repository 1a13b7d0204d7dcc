package quorum

// DeleteTopics (20), every version kmsg knows: topics named by name
// (v0-5) or by name or id (v6+), deleted by the controller
// (controller.DeleteTopics).

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
)

func init() {
	register(&api{key: kmsg.DeleteTopics.Int16(), handle: handleDeleteTopics,
		refuse: func(kreq kmsg.Request, code int16) kmsg.Response {
			resp := kmsg.NewPtrDeleteTopicsResponse()
			for _, ref := range deleteRefs(kreq.(*kmsg.DeleteTopicsRequest)) {
				rt := kmsg.NewDeleteTopicsResponseTopic()
				rt.Topic, rt.TopicID, rt.ErrorCode = namePtr(ref.Name), ref.ID, code
				resp.Topics = append(resp.Topics, rt)
			}
			return resp
		}})
}

func handleDeleteTopics(_ *Node, c *controller.Controller, _ int64, kreq kmsg.Request) ([]metadata.Record, kmsg.Response, error) {
	out, err := c.DeleteTopics(deleteRefs(kreq.(*kmsg.DeleteTopicsRequest)))
	if err != nil {
		return nil, nil, err
	}
	resp := kmsg.NewPtrDeleteTopicsResponse()
	for _, r := range out.Results {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.Topic, rt.TopicID = namePtr(r.Name), r.ID
		rt.ErrorCode, rt.ErrorMessage = errorCode(r.Err), errorMessage(r.Err)
		resp.Topics = append(resp.Topics, rt)
	}
	return out.Records, resp, nil
}

func deleteRefs(req *kmsg.DeleteTopicsRequest) []controller.TopicRef {
	var refs []controller.TopicRef
	for _, name := range req.TopicNames {
		refs = append(refs, controller.TopicRef{Name: name})
	}
	for _, t := range req.Topics {
		ref := controller.TopicRef{ID: t.TopicID}
		if t.Topic != nil {
			ref.Name = *t.Topic
		}
		refs = append(refs, ref)
	}
	return refs
}

func namePtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
