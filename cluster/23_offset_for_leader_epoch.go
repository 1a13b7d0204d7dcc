package cluster

// OffsetForLeaderEpoch, versions 0-4 (Kafka's OffsetsForLeaderEpoch).
//
// For each partition, where the requested leader epoch ends in the
// leader's log: the largest epoch not above it and the start offset of
// the next (or the log end for the latest), from the leader-epoch cache
// (KIP-101, KIP-279). Followers (ReplicaID >= 0, v3+) and consumers
// checking for truncation after a leader change (KIP-320) both ask. A
// CurrentLeaderEpoch (v2+) older or newer than the leader's gets
// FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH; a broker that does not
// lead the partition answers NOT_LEADER_OR_FOLLOWER; an epoch the cache
// cannot place answers epoch -1, offset -1 (UNDEFINED).

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/replica"
)

func init() {
	register(&api{key: kmsg.OffsetForLeaderEpoch.Int16(), min: 0, max: 4, serve: serveOffsetForLeaderEpoch})
}

func serveOffsetForLeaderEpoch(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.OffsetForLeaderEpochRequest)
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	describe := b.topicCheck(r, acl.OpDescribe)
	for _, rt := range req.Topics {
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := b.offsetForLeaderEpoch(r.Version, rt.Topic, rp)
			if err := describe.err(rt.Topic); err != nil {
				sp = kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
				sp.Partition, sp.LeaderEpoch, sp.EndOffset, sp.ErrorCode = rp.Partition, -1, -1, errorCode(err)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

func (b *Broker) offsetForLeaderEpoch(version int16, topic string, rp kmsg.OffsetForLeaderEpochRequestTopicPartition) kmsg.OffsetForLeaderEpochResponseTopicPartition {
	sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
	sp.Partition, sp.LeaderEpoch, sp.EndOffset = rp.Partition, replica.UndefinedEpoch, replica.UndefinedOffset
	p, err := b.partition(topic, rp.Partition)
	if err != nil {
		sp.ErrorCode = errorCode(err)
		return sp
	}
	current := int32(-1)
	if version >= 2 {
		current = rp.CurrentLeaderEpoch
	}
	if err := p.CheckLeaderEpoch(current); err != nil {
		sp.ErrorCode = errorCode(err)
		return sp
	}
	end, err := p.OffsetForLeaderEpoch(current, rp.LeaderEpoch)
	if err != nil {
		sp.ErrorCode = errorCode(err)
		return sp
	}
	sp.LeaderEpoch, sp.EndOffset = end.Epoch, end.EndOffset
	return sp
}
