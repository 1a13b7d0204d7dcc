package cluster

// FindCoordinator, versions 0-6.
//
// A group key is coordinated by the leader of its __consumer_offsets
// partition in the metadata image (v4+ batches keys). __consumer_offsets
// is created on demand, as Kafka does, with offsets.topic.num.partitions partitions;
// if that fails the answer is COORDINATOR_NOT_AVAILABLE. A transactional
// id (key type 1) is coordinated by the leader of its __transaction_state
// partition, created on demand likewise with
// transaction.state.log.num.partitions partitions. Other key types get
// INVALID_REQUEST.

import (
	"cmp"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/group"
	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/txn"
)

func init() {
	register(&api{key: kmsg.FindCoordinator.Int16(), min: 0, max: 6, serve: serveFindCoordinator})
}

func serveFindCoordinator(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.FindCoordinatorRequest)
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	var code int16
	switch req.CoordinatorType {
	case 0: // group
		if err := b.groups.ensureTopic(); err != nil {
			b.log.Warn("creating __consumer_offsets failed", "err", err)
			code = kerr.CoordinatorNotAvailable.Code
		}
	case 1: // transaction
		if err := b.txns.ensureTopic(); err != nil {
			b.log.Warn("creating __transaction_state failed", "err", err)
			code = kerr.CoordinatorNotAvailable.Code
		}
	default:
		code = kerr.InvalidRequest.Code
	}
	img := b.meta.image()
	keys := req.CoordinatorKeys
	if r.Version < 4 {
		keys = []string{req.CoordinatorKey}
	}
	for _, k := range keys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.ErrorCode = k, code
		c.NodeID, c.Host, c.Port = -1, "", -1
		if c.ErrorCode = cmp.Or(b.coordinatorKeyRefusal(r, req.CoordinatorType, k), code); c.ErrorCode == 0 {
			c.NodeID, c.Host, c.Port, c.ErrorCode = coordinatorFor(img, req.CoordinatorType, k, b.nodeID, b.clientListener(r))
		}
		resp.Coordinators = append(resp.Coordinators, c)
	}
	if r.Version < 4 {
		c := resp.Coordinators[0]
		resp.NodeID, resp.Host, resp.Port, resp.ErrorCode = c.NodeID, c.Host, c.Port, c.ErrorCode
		resp.Coordinators = nil
	}
	return resp
}

// coordinatorFor finds the broker coordinating a key: for a group, the
// leader of its __consumer_offsets partition (Kafka's partitionFor); for
// a transaction, the leader of its __transaction_state partition.
func coordinatorFor(img *metadata.Image, typ int8, key string, self int32, listener string) (int32, string, int32, int16) {
	topic, partitionFor := group.OffsetsTopic, group.PartitionFor
	if typ == 1 {
		topic, partitionFor = txn.Topic, txn.PartitionFor
	}
	t, ok := img.Topic(topic)
	if !ok || len(t.Partitions) == 0 {
		return -1, "", -1, kerr.CoordinatorNotAvailable.Code
	}
	node := t.Partitions[partitionFor(key, len(t.Partitions))].Leader
	br, ok := img.Broker(node)
	if !ok || br.Fenced {
		return -1, "", -1, kerr.CoordinatorNotAvailable.Code
	}
	e, ok := endpointOf(br, listener)
	if !ok {
		return -1, "", -1, kerr.CoordinatorNotAvailable.Code
	}
	return br.ID, e.Host, e.Port, 0
}
