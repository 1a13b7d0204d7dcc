package quorum

// AllocateProducerIds (67), every version kmsg knows (KIP-730): the
// next block of producer ids for a broker
// (controller.AllocateProducerIds).

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
)

func init() {
	register(&api{key: kmsg.AllocateProducerIDs.Int16(), handle: handleAllocateProducerIDs,
		refuse: func(_ kmsg.Request, code int16) kmsg.Response {
			resp := kmsg.NewPtrAllocateProducerIDsResponse()
			resp.ErrorCode, resp.ProducerIDStart = code, -1
			return resp
		}})
}

func handleAllocateProducerIDs(_ *Node, c *controller.Controller, _ int64, kreq kmsg.Request) ([]metadata.Record, kmsg.Response, error) {
	req := kreq.(*kmsg.AllocateProducerIDsRequest)
	out, err := c.AllocateProducerIds(req.BrokerID, req.BrokerEpoch)
	if err != nil {
		return nil, nil, err
	}
	resp := kmsg.NewPtrAllocateProducerIDsResponse()
	resp.ErrorCode, resp.ProducerIDStart, resp.ProducerIDLen = errorCode(out.Err), out.Start, out.Len
	if out.Err != nil {
		resp.ProducerIDStart = -1
	}
	return out.Records, resp, nil
}
