package quorum

// IncrementalAlterConfigs (44), every version kmsg knows (KIP-339):
// topic settings changed through ConfigRecords
// (controller.IncrementalAlterConfigs, with Kafka's validation);
// broker resources (dynamic broker settings, KIP-226) the same way.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
)

func init() {
	register(&api{key: kmsg.IncrementalAlterConfigs.Int16(), handle: handleIncrementalAlterConfigs,
		refuse: func(kreq kmsg.Request, code int16) kmsg.Response {
			resp := kmsg.NewPtrIncrementalAlterConfigsResponse()
			for _, r := range kreq.(*kmsg.IncrementalAlterConfigsRequest).Resources {
				rr := kmsg.NewIncrementalAlterConfigsResponseResource()
				rr.ResourceType, rr.ResourceName, rr.ErrorCode = r.ResourceType, r.ResourceName, code
				resp.Resources = append(resp.Resources, rr)
			}
			return resp
		}})
}

func handleIncrementalAlterConfigs(_ *Node, c *controller.Controller, _ int64, kreq kmsg.Request) ([]metadata.Record, kmsg.Response, error) {
	req := kreq.(*kmsg.IncrementalAlterConfigsRequest)
	var in []controller.ConfigResource
	for _, r := range req.Resources {
		cr := controller.ConfigResource{Type: metadata.ConfigResourceType(r.ResourceType), Name: r.ResourceName}
		for _, cfg := range r.Configs {
			cr.Changes = append(cr.Changes, controller.ConfigChange{Name: cfg.Name, Op: controller.ConfigOp(cfg.Op), Value: cfg.Value})
		}
		in = append(in, cr)
	}
	out, err := c.IncrementalAlterConfigs(in, req.ValidateOnly)
	if err != nil {
		return nil, nil, err
	}
	resp := kmsg.NewPtrIncrementalAlterConfigsResponse()
	for i, r := range out.Results {
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = req.Resources[i].ResourceType, r.Name
		rr.ErrorCode, rr.ErrorMessage = errorCode(r.Err), errorMessage(r.Err)
		resp.Resources = append(resp.Resources, rr)
	}
	return out.Records, resp, nil
}
