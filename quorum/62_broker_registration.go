package quorum

// BrokerRegistration (62), every version kmsg knows: a broker joins the
// cluster and gets its broker epoch (controller.Register). The request's
// listeners become the registration's endpoints, which other brokers
// dial. A registration naming another cluster.id gets
// INCONSISTENT_CLUSTER_ID, as Kafka's ClusterControlManager answers.
//
// Varve's brokers add one tagged field, producerIDFloorTag, which
// Kafka's controller would skip as unknown: the broker's producer-id
// floor (controller.RegisterRequest.ProducerIDFloor), 8 bytes,
// big-endian.

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
)

// producerIDFloorTag is the tag of the registration's producer-id
// floor, far above the tags Kafka numbers from 0.
const producerIDFloorTag = 10000

// setProducerIDFloor puts floor into req's Varve tagged field.
func setProducerIDFloor(req *kmsg.BrokerRegistrationRequest, floor int64) {
	req.UnknownTags.Set(producerIDFloorTag, binary.BigEndian.AppendUint64(nil, uint64(floor)))
}

// producerIDFloor reads req's producer-id floor: 0 when the field is
// absent or not 8 bytes.
func producerIDFloor(req *kmsg.BrokerRegistrationRequest) int64 {
	var floor int64
	req.UnknownTags.Each(func(tag uint32, v []byte) {
		if tag == producerIDFloorTag && len(v) == 8 {
			floor = int64(binary.BigEndian.Uint64(v))
		}
	})
	return floor
}

func init() {
	register(&api{key: kmsg.BrokerRegistration.Int16(), handle: handleBrokerRegistration,
		refuse: func(_ kmsg.Request, code int16) kmsg.Response {
			resp := kmsg.NewPtrBrokerRegistrationResponse()
			resp.ErrorCode, resp.BrokerEpoch = code, -1
			return resp
		}})
}

func handleBrokerRegistration(n *Node, c *controller.Controller, now int64, kreq kmsg.Request) ([]metadata.Record, kmsg.Response, error) {
	req := kreq.(*kmsg.BrokerRegistrationRequest)
	resp := kmsg.NewPtrBrokerRegistrationResponse()
	resp.BrokerEpoch = -1
	if req.ClusterID != n.cfg.ClusterID {
		resp.ErrorCode = kerr.InconsistentClusterID.Code
		return nil, resp, nil
	}
	reg := controller.RegisterRequest{BrokerID: req.BrokerID, IncarnationID: req.IncarnationID,
		PreviousBrokerEpoch: -1, ProducerIDFloor: producerIDFloor(req)}
	if req.Version >= 3 {
		reg.PreviousBrokerEpoch = req.PreviousBrokerEpoch
	}
	if req.Rack != nil {
		reg.Rack = *req.Rack
	}
	for _, l := range req.Listeners {
		reg.Endpoints = append(reg.Endpoints, metadata.Endpoint{Listener: l.Name, Host: l.Host,
			Port: int32(l.Port), SecurityProtocol: securityProtocolName(l.SecurityProtocol)})
	}
	out, err := c.Register(now, reg)
	if err != nil {
		return nil, nil, err
	}
	resp.ErrorCode = errorCode(out.Err)
	if out.Err == nil {
		resp.BrokerEpoch = out.BrokerEpoch
	}
	return out.Records, resp, nil
}

// securityProtocolName is Kafka's name of a SecurityProtocol id.
func securityProtocolName(id int16) string {
	switch id {
	case 1:
		return "SSL"
	case 2:
		return "SASL_PLAINTEXT"
	case 3:
		return "SASL_SSL"
	}
	return "PLAINTEXT"
}

// securityProtocolID is the inverse of securityProtocolName.
func securityProtocolID(name string) int16 {
	switch name {
	case "SSL":
		return 1
	case "SASL_PLAINTEXT":
		return 2
	case "SASL_SSL":
		return 3
	}
	return 0
}
