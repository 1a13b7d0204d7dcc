package cluster

// OffsetCommit, versions 0-9.
//
// Commits go to the group's coordinator (package group), which checks
// the member and generation, or accepts a simple commit (generation -1,
// no member id) for a group without members, and writes the offsets to
// __consumer_offsets. Partitions the node does not hold get
// UNKNOWN_TOPIC_OR_PARTITION, metadata over offset.metadata.max.bytes
// OFFSET_METADATA_TOO_LARGE. v1's per-partition commit timestamp and
// v2-v4's retention time are kept (the latter expires the commit by its
// own clock, Kafka's pre-KIP-211 behaviour).
//
// Not served: topic ids (v10), and the ZooKeeper storage of v0 commits
// (stored in __consumer_offsets like the others).

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/group"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.OffsetCommit.Int16(), min: 0, max: 9, serve: serveOffsetCommit})
}

func serveOffsetCommit(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req, refused := b.authorizeCommit(r, kreq.(*kmsg.OffsetCommitRequest))
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	if len(req.Topics) > 0 || len(refused) == 0 {
		b.groups.do(req.Group, func(c *group.Coordinator) { resp = c.CommitOffsets(time.Now(), req) })
	}
	resp.Topics = append(resp.Topics, refused...)
	return resp
}
