package cluster

// ElectLeaders (versions 0-2), AlterPartitionReassignments (0-1),
// ListPartitionReassignments (0) and DescribeQuorum (0-2): the
// controller's own APIs, which Kafka's brokers accept and forward to the
// active controller (KIP-590), so that kafka-leader-election,
// kafka-reassign-partitions and kafka-metadata-quorum work with only
// --bootstrap-server. In a cluster the request goes to the controller as
// the client sent it and the controller's answer comes back at the
// client's version. A single node, whose metadata is its own file,
// answers from its image: it is the only replica and the only voter.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.ElectLeaders.Int16(), min: 0, max: 2, serve: serveControllerAPI})
	register(&api{key: kmsg.AlterPartitionAssignments.Int16(), min: 0, max: 1, serve: serveControllerAPI})
	register(&api{key: kmsg.ListPartitionReassignments.Int16(), min: 0, max: 0, serve: serveControllerAPI})
	register(&api{key: kmsg.DescribeQuorum.Int16(), min: 0, max: 2, serve: serveControllerAPI})
}

func serveControllerAPI(b *Broker, r *vnet.Request, req kmsg.Request, respond func(vnet.Response)) kmsg.Response {
	if err := b.controllerAPIError(r, req); err != nil {
		return controllerFailureCode(req, err, errorCode(err))
	}
	if b.ctrl == nil {
		return singleNodeControllerAnswer(b, req)
	}
	// The forward may wait for an election: never on a handler goroutine.
	go func() {
		ctx, cancel := b.controllerContext()
		defer cancel()
		resp, err := b.ctrl.Do(ctx, req)
		if err != nil {
			resp = controllerFailure(req, err)
		}
		resp.SetVersion(r.Version)
		respond(bytesResponse(resp.AppendTo(nil)))
	}()
	return nil
}

// controllerFailure answers a request the controller could not be
// reached for: REQUEST_TIMED_OUT where the response has a top-level
// error code, else on every item.
func controllerFailure(req kmsg.Request, err error) kmsg.Response {
	return controllerFailureCode(req, err, kerr.RequestTimedOut.Code)
}

// controllerFailureCode answers a request with code, as controllerFailure.
func controllerFailureCode(req kmsg.Request, err error, code int16) kmsg.Response {
	switch req := req.(type) {
	case *kmsg.ElectLeadersRequest:
		resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.AlterPartitionAssignmentsRequest:
		resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
		resp.ErrorCode = code
		msg := err.Error()
		resp.ErrorMessage = &msg
		return resp
	case *kmsg.ListPartitionReassignmentsRequest:
		resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
		resp.ErrorCode = code
		msg := err.Error()
		resp.ErrorMessage = &msg
		return resp
	case *kmsg.DescribeQuorumRequest:
		resp := req.ResponseKind().(*kmsg.DescribeQuorumResponse)
		resp.ErrorCode = code
		msg := err.Error()
		resp.ErrorMessage = &msg
		return resp
	}
	return req.ResponseKind()
}

// singleNodeControllerAnswer answers a controller API on a single node.
func singleNodeControllerAnswer(b *Broker, kreq kmsg.Request) kmsg.Response {
	img := b.meta.image()
	switch req := kreq.(type) {
	case *kmsg.ElectLeadersRequest:
		// The only replica leads every partition: nothing to elect.
		resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
		resp.Topics = electionTopics(img, req)
		return resp
	case *kmsg.AlterPartitionAssignmentsRequest:
		resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewAlterPartitionAssignmentsResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
				sp.Partition = rp.Partition
				_, ok := img.Partition(rt.Topic, rp.Partition)
				switch {
				case !ok:
					sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				case rp.Replicas == nil:
					sp.ErrorCode = kerr.NoReassignmentInProgress.Code
				case len(rp.Replicas) != 1 || rp.Replicas[0] != b.nodeID:
					sp.ErrorCode = kerr.InvalidReplicaAssignment.Code
				}
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp
	case *kmsg.ListPartitionReassignmentsRequest:
		return req.ResponseKind() // never any under way
	case *kmsg.DescribeQuorumRequest:
		resp := req.ResponseKind().(*kmsg.DescribeQuorumResponse)
		resp.ErrorCode = kerr.UnknownServerError.Code
		msg := "a single node has no controller quorum: its metadata is its own file (set controller.quorum.voters to run a cluster)"
		resp.ErrorMessage = &msg
		return resp
	}
	return kreq.ResponseKind()
}

// electionTopics answers a single node's ElectLeaders: every named
// partition ELECTION_NOT_NEEDED, unknown ones UNKNOWN_TOPIC_OR_PARTITION.
func electionTopics(img *metadata.Image, req *kmsg.ElectLeadersRequest) []kmsg.ElectLeadersResponseTopic {
	var out []kmsg.ElectLeadersResponseTopic
	for _, rt := range req.Topics {
		st := kmsg.NewElectLeadersResponseTopic()
		st.Topic = rt.Topic
		for _, p := range rt.Partitions {
			sp := kmsg.NewElectLeadersResponseTopicPartition()
			sp.Partition, sp.ErrorCode = p, kerr.ElectionNotNeeded.Code
			if _, ok := img.Partition(rt.Topic, p); !ok {
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			}
			st.Partitions = append(st.Partitions, sp)
		}
		out = append(out, st)
	}
	return out
}
