package cluster

// Metadata, versions 0-12.
//
// Everything comes from one metadata image: the brokers (at their first
// advertised endpoint; fenced ones are left out), the controller (Kafka
// in KRaft mode names a live broker, as clients cannot reach the
// quorum: here the lowest-numbered one), the cluster id (v2+), and for
// each topic its id (v10+) and partitions: leader, leader epoch,
// replicas and ISR. A null topic list (v1+) or an empty one at v0 lists
// every topic.
//
// Unknown topics are created when the request allows it (v4+
// AllowAutoTopicCreation, always before v4) and auto.create.topics.enable
// is true, with num.partitions partitions, as Kafka does: all those of
// one request in one metadata write, and only as many partitions as the
// controller mutation quota admits (KIP-599; see quota.go). A topic
// beyond the quota is left uncreated and answered LEADER_NOT_AVAILABLE,
// retriable: the client asks again and the topic is created once the
// quota refills.
//
// Not served: offline replicas (none exist with one node), topic
// authorized operations (no ACLs yet; -2147483648 = not requested).

import (
	"errors"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/group"
	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/txn"
)

func init() {
	register(&api{key: kmsg.Metadata.Int16(), min: 0, max: 12, serve: serveMetadata})
}

func serveMetadata(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.MetadataRequest)
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	all := req.Topics == nil || (r.Version == 0 && len(req.Topics) == 0)
	img, failed := b.meta.image(), map[string]int16(nil)
	if !all && b.cfg.AutoCreateTopicsEnable && (r.Version < 4 || req.AllowAutoTopicCreation) {
		img, failed = b.autoCreate(r, req.Topics)
	}
	defer b.authorizeMetadata(r, req, resp, all)
	resp.Brokers, resp.ControllerID = metadataBrokers(img, b.clientListener(r))
	cid := img.ClusterID()
	resp.ClusterID = &cid
	if all {
		for t := range img.Topics() {
			resp.Topics = append(resp.Topics, metadataTopic(t))
		}
		return resp
	}
	for _, rt := range req.Topics {
		resp.Topics = append(resp.Topics, metadataFor(img, rt, failed))
	}
	return resp
}

func metadataBrokers(img *metadata.Image, listener string) ([]kmsg.MetadataResponseBroker, int32) {
	var out []kmsg.MetadataResponseBroker
	controller := int32(-1)
	for _, br := range img.Brokers() {
		e, ok := endpointOf(br, listener)
		if br.Fenced || !ok {
			continue
		}
		mb := kmsg.NewMetadataResponseBroker()
		mb.NodeID, mb.Host, mb.Port = br.ID, e.Host, e.Port
		if br.Rack != "" {
			rack := br.Rack
			mb.Rack = &rack
		}
		out = append(out, mb)
		if controller < 0 {
			controller = br.ID
		}
	}
	return out, controller
}

// autoCreate creates the unknown topics a request names, all in one
// metadata change, and returns the image to answer from and the error
// codes of the topics it did not create.
func (b *Broker) autoCreate(r *vnet.Request, topics []kmsg.MetadataRequestTopic) (*metadata.Image, map[string]int16) {
	img := b.meta.image()
	var specs []topicSpec
	seen, failed := map[string]bool{}, map[string]int16{}
	for _, rt := range topics {
		if rt.Topic == nil || rt.TopicID != ([16]byte{}) || seen[*rt.Topic] {
			continue
		}
		seen[*rt.Topic] = true
		if _, ok := img.Topic(*rt.Topic); ok {
			continue
		}
		if *rt.Topic == group.OffsetsTopic {
			// Kafka's AutoTopicCreationManager creates the internal topic
			// with its own partitions and configuration, never num.partitions.
			b.groups.ensureTopic()
			continue
		}
		if *rt.Topic == txn.Topic { // likewise
			b.txns.ensureTopic()
			continue
		}
		if err := b.createTopicError(r, *rt.Topic); err != nil {
			failed[*rt.Topic] = errorCode(err)
			continue
		}
		specs = append(specs, topicSpec{name: *rt.Topic, partitions: -1, rf: -1})
	}
	if len(specs) == 0 {
		return b.meta.image(), failed
	}
	_, errs := b.createTopics(specs, false, quotaCheck{q: b.quota, strict: true})
	for i, err := range errs {
		switch {
		case err == nil, errors.Is(err, kerr.TopicAlreadyExists):
		case errors.Is(err, kerr.ThrottlingQuotaExceeded):
			failed[specs[i].name] = kerr.LeaderNotAvailable.Code
		default:
			failed[specs[i].name] = errorCode(err)
		}
	}
	return b.meta.image(), failed
}

func metadataFor(img *metadata.Image, rt kmsg.MetadataRequestTopic, failed map[string]int16) kmsg.MetadataResponseTopic {
	mt := kmsg.NewMetadataResponseTopic()
	if rt.Topic == nil || rt.TopicID != ([16]byte{}) { // by id (v12; Java's client sends the name "" with an id)
		t, ok := img.TopicByID(rt.TopicID)
		if !ok {
			mt.TopicID, mt.ErrorCode = rt.TopicID, kerr.UnknownTopicID.Code
			return mt
		}
		return metadataTopic(t)
	}
	name := *rt.Topic
	t, ok := img.Topic(name)
	if !ok {
		mt.Topic, mt.ErrorCode = &name, kerr.UnknownTopicOrPartition.Code
		if code, ok := failed[name]; ok {
			mt.ErrorCode = code
		}
		return mt
	}
	return metadataTopic(t)
}

func metadataTopic(t *metadata.Topic) kmsg.MetadataResponseTopic {
	mt := kmsg.NewMetadataResponseTopic()
	name := t.Name
	mt.Topic, mt.TopicID = &name, t.ID
	mt.IsInternal = name == group.OffsetsTopic || name == txn.Topic // Kafka's Topic.isInternal
	mt.AuthorizedOperations = -2147483648
	for i, p := range t.Partitions {
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition, mp.Leader, mp.LeaderEpoch = int32(i), p.Leader, p.LeaderEpoch
		mp.Replicas, mp.ISR = p.Replicas, p.ISR
		if p.Leader == metadata.NoLeader {
			mp.ErrorCode = kerr.LeaderNotAvailable.Code
		}
		mt.Partitions = append(mt.Partitions, mp)
	}
	return mt
}

// endpointOf is the endpoint of br that clients of listener use: Kafka
// answers with each broker's endpoint on the listener the request came
// in on, so that brokers with several listeners (internal and external
// addresses) point every client at addresses it can reach. A broker
// without that listener is reached at its first endpoint.
func endpointOf(br *metadata.Broker, listener string) (metadata.Endpoint, bool) {
	for _, e := range br.Endpoints {
		if e.Listener == listener {
			return e, true
		}
	}
	if len(br.Endpoints) == 0 {
		return metadata.Endpoint{}, false
	}
	return br.Endpoints[0], true
}

// listenerName is the listener this broker serves clients on: its
// first advertised listener that is not a controller listener.
func (b *Broker) listenerName() string {
	ls := b.cfg.AdvertisedListeners
	if len(ls) == 0 {
		ls = b.cfg.Listeners
	}
	for _, l := range ls {
		if !slices.Contains(b.cfg.ControllerListenerNames, l.Name) {
			return l.Name
		}
	}
	return ""
}
