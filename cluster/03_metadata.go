package cluster

// Metadata, versions 0-12.
//
// Brokers (this node, at its advertised listener), the controller (this
// node), the cluster id (v2+), and for each topic its id (v10+) and
// partitions: leader, leader epoch 0, replicas and ISR (this node). A null
// topic list (v1+) or an empty one at v0 lists every topic. Unknown topics
// are created when the request allows it (v4+ AllowAutoTopicCreation,
// always before v4) and auto.create.topics.enable is true, with
// num.partitions partitions, as Kafka does.
//
// Not served: offline replicas (none exist with one node), topic
// authorized operations (no ACLs yet; -2147483648 = not requested).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/group"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.Metadata.Int16(), min: 0, max: 12, serve: serveMetadata})
}

func serveMetadata(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.MetadataRequest)
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	broker := kmsg.NewMetadataResponseBroker()
	broker.NodeID, broker.Host, broker.Port = b.nodeID, b.host, b.port
	resp.Brokers = []kmsg.MetadataResponseBroker{broker}
	cid := b.meta.clusterID()
	resp.ClusterID = &cid
	resp.ControllerID = b.nodeID

	all := req.Topics == nil || (r.Version == 0 && len(req.Topics) == 0)
	if all {
		for _, t := range b.meta.topics() {
			resp.Topics = append(resp.Topics, b.metadataTopic(t, 0))
		}
		return resp
	}
	autoCreate := b.cfg.AutoCreateTopicsEnable && (r.Version < 4 || req.AllowAutoTopicCreation)
	for _, rt := range req.Topics {
		resp.Topics = append(resp.Topics, b.metadataFor(rt, autoCreate))
	}
	return resp
}

func (b *Broker) metadataFor(rt kmsg.MetadataRequestTopic, autoCreate bool) kmsg.MetadataResponseTopic {
	if rt.Topic == nil { // by id (v10+)
		t, ok := b.meta.topicByID(rt.TopicID)
		if !ok {
			mt := kmsg.NewMetadataResponseTopic()
			mt.TopicID, mt.ErrorCode = rt.TopicID, kerr.UnknownTopicID.Code
			return mt
		}
		return b.metadataTopic(t, 0)
	}
	name := *rt.Topic
	t, ok := b.meta.topic(name)
	if !ok && autoCreate && name == group.OffsetsTopic {
		// Kafka's AutoTopicCreationManager creates the internal topic
		// with its own partitions and configuration, never num.partitions.
		if err := b.groups.ensureTopic(); err == nil {
			t, ok = b.meta.topic(name)
		}
	}
	if !ok && autoCreate {
		var err error
		t, err = b.createTopic(name, -1, -1, nil, false)
		if err != nil && err != kerr.TopicAlreadyExists {
			mt := kmsg.NewMetadataResponseTopic()
			mt.Topic, mt.ErrorCode = &name, errorCode(err)
			return mt
		}
		if err == kerr.TopicAlreadyExists {
			t, _ = b.meta.topic(name)
		}
		// Kafka answers LEADER_NOT_AVAILABLE for a topic it just created;
		// a single node's partitions are ready at once.
		ok = true
	}
	if !ok {
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic, mt.ErrorCode = &name, kerr.UnknownTopicOrPartition.Code
		return mt
	}
	return b.metadataTopic(t, 0)
}

func (b *Broker) metadataTopic(t topicMeta, code int16) kmsg.MetadataResponseTopic {
	mt := kmsg.NewMetadataResponseTopic()
	name := t.Name
	mt.Topic, mt.TopicID, mt.ErrorCode = &name, t.ID, code
	mt.IsInternal = name == group.OffsetsTopic
	mt.AuthorizedOperations = -2147483648
	for p := int32(0); p < t.Partitions; p++ {
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition, mp.Leader, mp.LeaderEpoch = p, b.nodeID, 0
		mp.Replicas, mp.ISR = []int32{b.nodeID}, []int32{b.nodeID}
		mt.Partitions = append(mt.Partitions, mp)
	}
	return mt
}
