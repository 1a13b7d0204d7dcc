package cluster

// DeleteTopics, versions 0-6: by name, or by topic id from v6. The
// internal __consumer_offsets cannot be deleted (INVALID_REQUEST): every
// group would lose its committed offsets.
// delete.topic.enable=false refuses with TOPIC_DELETION_DISABLED.
//
// The topics of one request leave the metadata in one write, which also
// queues their directories for deletion; the directories go next, then
// the queue entry. Killed midway, the node finishes the deletion at its
// next start: a half-deleted topic never comes back. Deleted partitions
// count against the controller mutation quota (KIP-599).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/group"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.DeleteTopics.Int16(), min: 0, max: 6, serve: serveDeleteTopics})
}

func serveDeleteTopics(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.DeleteTopicsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	type target struct {
		name *string
		id   [16]byte
	}
	var targets []target
	if r.Version >= 6 {
		for _, t := range req.Topics {
			targets = append(targets, target{t.Topic, t.TopicID})
		}
	} else {
		for _, n := range req.TopicNames {
			targets = append(targets, target{name: &n})
		}
	}
	img := b.meta.image()
	topics := make([]kmsg.DeleteTopicsResponseTopic, len(targets))
	var names []string
	var which []int // which[k]: the target of names[k]
	for i, t := range targets {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.Topic, st.TopicID = t.name, t.id
		name := ""
		if t.name != nil {
			name = *t.name
		} else if tm, ok := img.TopicByID(t.id); ok {
			name = tm.Name
			st.Topic = &tm.Name
		}
		switch {
		case name == group.OffsetsTopic:
			// Deleting it would drop every group's committed offsets; the
			// next FindCoordinator would recreate it empty.
			st.ErrorCode = kerr.InvalidRequest.Code
		case name != "" && b.topicAuthError(r, acl.OpDelete, name) != nil:
			st.ErrorCode = kerr.TopicAuthorizationFailed.Code
		case !b.cfg.DeleteTopicEnable:
			st.ErrorCode = kerr.TopicDeletionDisabled.Code
		case name == "" && t.name == nil:
			st.ErrorCode = kerr.UnknownTopicID.Code
		default:
			if tm, ok := img.Topic(name); ok {
				st.TopicID = tm.ID
			}
			names, which = append(names, name), append(which, i)
		}
		topics[i] = st
	}
	// Kafka: KIP-599, THROTTLING_QUOTA_EXCEEDED from v5.
	q := b.mutationCheck(r, r.Version >= 5)
	for k, err := range b.deleteTopics(names, q) {
		topics[which[k]].ErrorCode = errorCode(err)
	}
	resp.Topics = topics
	resp.ThrottleMillis = q.throttleMs()
	return resp
}
