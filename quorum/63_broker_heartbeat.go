package quorum

// BrokerHeartbeat (63), every version kmsg knows: a broker's liveness,
// the metadata offset it has replayed, and its wish to be fenced or to
// shut down (controller.Heartbeat). The answer waits for the records
// the heartbeat caused, and for those proposed before them.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
)

func init() {
	register(&api{key: kmsg.BrokerHeartbeat.Int16(), handle: handleBrokerHeartbeat,
		refuse: func(_ kmsg.Request, code int16) kmsg.Response {
			resp := kmsg.NewPtrBrokerHeartbeatResponse()
			resp.ErrorCode, resp.IsFenced = code, true
			return resp
		}})
}

func handleBrokerHeartbeat(_ *Node, c *controller.Controller, now int64, kreq kmsg.Request) ([]metadata.Record, kmsg.Response, error) {
	req := kreq.(*kmsg.BrokerHeartbeatRequest)
	out, err := c.Heartbeat(now, controller.HeartbeatRequest{BrokerID: req.BrokerID, BrokerEpoch: req.BrokerEpoch,
		MetadataOffset: req.CurrentMetadataOffset, WantFence: req.WantFence, WantShutDown: req.WantShutdown})
	if err != nil {
		return nil, nil, err
	}
	resp := kmsg.NewPtrBrokerHeartbeatResponse()
	resp.ErrorCode = errorCode(out.Err)
	resp.IsCaughtUp, resp.IsFenced, resp.ShouldShutdown = out.IsCaughtUp, out.IsFenced, out.ShouldShutDown
	if out.Err != nil {
		resp.IsFenced = true
	}
	return out.Records, resp, nil
}
