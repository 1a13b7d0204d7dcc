package cluster

// OffsetDelete, version 0 (KIP-496).
//
// Deletes committed offsets with tombstones: all of an Empty group's;
// for a consumer group with members only those of topics no member
// subscribes to (GROUP_SUBSCRIBED_TO_TOPIC for the others); any other
// group with members refuses (NON_EMPTY_GROUP). Unknown partitions get
// UNKNOWN_TOPIC_OR_PARTITION; a group-level error comes without
// partitions.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/group"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.OffsetDelete.Int16(), min: 0, max: 0, serve: serveOffsetDelete})
}

func serveOffsetDelete(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req, refused, code := b.authorizeOffsetDelete(r, kreq.(*kmsg.OffsetDeleteRequest))
	resp := kreq.ResponseKind().(*kmsg.OffsetDeleteResponse)
	if resp.ErrorCode = code; code == 0 && (len(req.Topics) > 0 || len(refused) == 0) {
		b.groups.do(req.Group, func(c *group.Coordinator) { resp = c.DeleteOffsets(time.Now(), req) })
	}
	resp.Topics = append(resp.Topics, refused...)
	return resp
}
