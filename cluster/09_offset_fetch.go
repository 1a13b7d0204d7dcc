package cluster

// OffsetFetch, versions 0-9.
//
// The committed offsets of a group (v0-7) or of several groups (v8+,
// each answered by its own coordinator), -1 with empty metadata for
// partitions without a commit, every committed offset when the topic
// list is null (v2+). A group-level error is top-level from v2 and
// repeated in each requested partition before, as Kafka's
// OffsetFetchResponse does. With require_stable (v7+, KIP-447) a
// partition whose group has a transactional offset still pending answers
// UNSTABLE_OFFSET_COMMIT, and the consumer retries. The v9 member id
// and epoch are checked for a KIP-848 consumer group (UNKNOWN_MEMBER_ID,
// STALE_MEMBER_EPOCH) and ignored for a classic group, as Kafka does.
//
// Not served: topic ids (v10).

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/group"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.OffsetFetch.Int16(), min: 0, max: 9, serve: serveOffsetFetch})
}

func serveOffsetFetch(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.OffsetFetchRequest)
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if r.Version >= 8 {
		for _, rg := range req.Groups {
			g := kmsg.NewOffsetFetchResponseGroup()
			g.Group = rg.Group
			if r.Version >= 9 && b.groupRefusal(r, acl.OpDescribe, rg.Group) == 0 {
				b.groups.do(rg.Group, func(c *group.Coordinator) {
					g.ErrorCode = c.CheckFetchMember(time.Now(), rg.Group, rg.MemberID, rg.MemberEpoch)
				})
			}
			if g.ErrorCode == 0 {
				g.ErrorCode, g.Topics = b.fetchOffsets(r, rg.Group, rg.Topics, req.RequireStable)
			}
			if g.Topics == nil {
				g.Topics = []kmsg.OffsetFetchResponseGroupTopic{}
			}
			resp.Groups = append(resp.Groups, g)
		}
		return resp
	}
	var topics []kmsg.OffsetFetchRequestGroupTopic
	if req.Topics != nil || r.Version < 2 {
		topics = []kmsg.OffsetFetchRequestGroupTopic{}
		for _, t := range req.Topics {
			gt := kmsg.NewOffsetFetchRequestGroupTopic()
			gt.Topic, gt.Partitions = t.Topic, t.Partitions
			topics = append(topics, gt)
		}
	}
	code, got := b.fetchOffsets(r, req.Group, topics, req.RequireStable)
	resp.ErrorCode = code
	if code != 0 && r.Version < 2 {
		got = errorPartitions(topics, code)
	}
	for _, gt := range got {
		t := kmsg.NewOffsetFetchResponseTopic()
		t.Topic = gt.Topic
		for _, gp := range gt.Partitions {
			p := kmsg.NewOffsetFetchResponseTopicPartition()
			p.Partition, p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode = gp.Partition, gp.Offset, gp.LeaderEpoch, gp.Metadata, gp.ErrorCode
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

func (b *Broker) fetchOffsets(r *vnet.Request, groupID string, topics []kmsg.OffsetFetchRequestGroupTopic, requireStable bool) (code int16, out []kmsg.OffsetFetchResponseGroupTopic) {
	if code = b.groupRefusal(r, acl.OpDescribe, groupID); code != 0 {
		return code, nil
	}
	b.groups.do(groupID, func(c *group.Coordinator) {
		code, out = c.FetchOffsetsRequireStable(time.Now(), groupID, topics, requireStable)
	})
	return code, b.authorizeOffsetFetch(r, topics != nil, out)
}

// errorPartitions answers every requested partition with code (v0-1).
func errorPartitions(topics []kmsg.OffsetFetchRequestGroupTopic, code int16) []kmsg.OffsetFetchResponseGroupTopic {
	out := make([]kmsg.OffsetFetchResponseGroupTopic, 0, len(topics))
	for _, t := range topics {
		gt := kmsg.NewOffsetFetchResponseGroupTopic()
		gt.Topic = t.Topic
		for _, p := range t.Partitions {
			gp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
			md := ""
			gp.Partition, gp.Offset, gp.Metadata, gp.ErrorCode = p, -1, &md, code
			gt.Partitions = append(gt.Partitions, gp)
		}
		out = append(out, gt)
	}
	return out
}
