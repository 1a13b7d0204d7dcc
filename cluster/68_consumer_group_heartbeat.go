package cluster

// ConsumerGroupHeartbeat, versions 0-1 (KIP-848).
//
// The consumer group protocol (package group, consumer.go): a member
// joins with member epoch 0, heartbeats with its epoch every
// group.consumer.heartbeat.interval.ms, and leaves with -1 (-2: a
// static member leaving for a while). The coordinator assigns the
// partitions with the uniform or range assignor and answers each member
// its assignment as it reconciles. v1 members make their own member id;
// a v0 member joining without one is given one. Served only while
// group.version 1 is finalized (otherwise UNSUPPORTED_VERSION, and
// ApiVersions leaves the API out). A regular expression subscription
// (v1) resolves to the topics the member's principal may DESCRIBE.
// Classic consumers (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) may be
// members of a consumer group, and a classic group with members is
// upgraded when a member joins it here, and downgraded when the last
// member of this protocol leaves, as group.consumer.migration.policy
// allows (package group, consumer_classic.go and consumer_migrate.go).

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/group"
	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.ConsumerGroupHeartbeat.Int16(), min: 0, max: 1, serve: serveConsumerGroupHeartbeat})
}

func serveConsumerGroupHeartbeat(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.ConsumerGroupHeartbeatRequest)
	if !b.consumerGroupsEnabled() {
		resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		return resp
	}
	if code := b.groupRefusal(r, acl.OpRead, req.Group); code != 0 {
		resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = code
		return resp
	}
	client := group.Client{ID: r.ClientID, Host: clientHost(r)}
	if b.authz != nil { // Kafka: a regular expression resolves to the topics the member may describe
		client.MayDescribe = func(topic string) bool { return b.authorized(r, acl.OpDescribe, acl.ResourceTopic, topic) }
	}
	var resp *kmsg.ConsumerGroupHeartbeatResponse
	b.groups.do(req.Group, func(c *group.Coordinator) { resp = c.ConsumerHeartbeat(time.Now(), req, client) })
	return resp
}

// consumerGroupsEnabled: group.version 1 is finalized (Kafka's
// GroupVersion.isConsumerRebalanceProtocolSupported).
func (b *Broker) consumerGroupsEnabled() bool {
	return b.meta.image().FeatureLevel(metadata.GroupVersionFeature) >= metadata.GroupVersionConsumerProtocol
}

// groupTopics is the consumer group assignors' view of the topics: the
// current metadata image.
type groupTopics struct{ b *Broker }

func (t groupTopics) TopicByName(name string) (group.TopicInfo, bool) {
	tp, ok := t.b.meta.image().Topic(name)
	if !ok {
		return group.TopicInfo{}, false
	}
	return group.TopicInfo{Name: tp.Name, ID: group.TopicID(tp.ID), Partitions: int32(len(tp.Partitions))}, true
}

func (t groupTopics) TopicByID(id group.TopicID) (group.TopicInfo, bool) {
	tp, ok := t.b.meta.image().TopicByID(metadata.TopicID(id))
	if !ok {
		return group.TopicInfo{}, false
	}
	return group.TopicInfo{Name: tp.Name, ID: id, Partitions: int32(len(tp.Partitions))}, true
}

// TopicNames lists the topics of one metadata image, sorted, with the
// image's version.
func (t groupTopics) TopicNames() ([]string, int64) {
	img := t.b.meta.image()
	names := make([]string, 0, img.NumTopics())
	for tp := range img.Topics() {
		names = append(names, tp.Name)
	}
	return names, img.Version()
}

// TopicsVersion is the metadata image's version: it moves on with every
// metadata record, topic creations and deletions among them.
func (t groupTopics) TopicsVersion() int64 { return t.b.meta.image().Version() }

// consumerAssignors maps group.consumer.assignors to the assignors'
// names: Kafka's class names stand for uniform and range.
func consumerAssignors(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		switch n {
		case "org.apache.kafka.coordinator.group.assignor.UniformAssignor":
			n = "uniform"
		case "org.apache.kafka.coordinator.group.assignor.RangeAssignor":
			n = "range"
		}
		out = append(out, n)
	}
	return out
}
