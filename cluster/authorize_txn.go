package cluster

// The transaction APIs' authorization, as Kafka's KafkaApis checks it
// (the rules are listed with the others in authorize_apis.go).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/txn"
)

// txnIDRefusal is TRANSACTIONAL_ID_AUTHORIZATION_FAILED's code unless op
// on the TransactionalId id is allowed, else 0.
func (b *Broker) txnIDRefusal(r *vnet.Request, op acl.Operation, id string) int16 {
	if b.authorized(r, op, acl.ResourceTransactionalID, id) {
		return 0
	}
	return kerr.TransactionalIDAuthorizationFailed.Code
}

// addPartitionsRefusals are the codes of a transaction's
// AddPartitionsToTxn that cannot be attempted, nil when every partition
// may be added (Kafka's handleAddPartitionsToTxnRequest). A client's
// request (v0-3) needs Write on the TransactionalId (else every
// partition is TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and Write on each
// topic; an internal topic is never a client's to add
// (TOPIC_AUTHORIZATION_FAILED, with or without an authorizer). A
// partition that does not exist is UNKNOWN_TOPIC_OR_PARTITION. When any
// partition fails, the others are OPERATION_NOT_ATTEMPTED: a transaction
// is added whole or not at all. A broker's request (v4) was authorized
// by ClusterAction before.
func (b *Broker) addPartitionsRefusals(r *vnet.Request, id string, tps []txn.TopicPartition, fromClient bool) map[txn.TopicPartition]int16 {
	if fromClient {
		if code := b.txnIDRefusal(r, acl.OpWrite, id); code != 0 {
			return allCodes(tps, code)
		}
	}
	write := b.topicCheck(r, acl.OpWrite)
	img := b.meta.image()
	codes := map[txn.TopicPartition]int16{}
	for _, tp := range tps {
		switch {
		case fromClient && (isInternalTopic(tp.Topic) || write.err(tp.Topic) != nil):
			codes[tp] = kerr.TopicAuthorizationFailed.Code
		case !partitionExists(img, tp):
			codes[tp] = kerr.UnknownTopicOrPartition.Code
		}
	}
	if len(codes) == 0 {
		return nil
	}
	for _, tp := range tps {
		if _, bad := codes[tp]; !bad {
			codes[tp] = kerr.OperationNotAttempted.Code
		}
	}
	return codes
}

func allCodes(tps []txn.TopicPartition, code int16) map[txn.TopicPartition]int16 {
	codes := make(map[txn.TopicPartition]int16, len(tps))
	for _, tp := range tps {
		codes[tp] = code
	}
	return codes
}

// addOffsetsRefusal is AddOffsetsToTxn's check: Write on the
// TransactionalId, then Read on the group.
func (b *Broker) addOffsetsRefusal(r *vnet.Request, req *kmsg.AddOffsetsToTxnRequest) int16 {
	if code := b.txnIDRefusal(r, acl.OpWrite, req.TransactionalID); code != 0 {
		return code
	}
	return b.groupRefusal(r, acl.OpRead, req.Group)
}

// authorizeTxnOffsetCommit splits a TxnOffsetCommit as authorizeCommit
// does an OffsetCommit: Write on the TransactionalId
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition), Read on
// the group (GROUP_AUTHORIZATION_FAILED for every partition), Read on
// each topic (TOPIC_AUTHORIZATION_FAILED for its partitions).
func (b *Broker) authorizeTxnOffsetCommit(r *vnet.Request, req *kmsg.TxnOffsetCommitRequest) (*kmsg.TxnOffsetCommitRequest, []kmsg.TxnOffsetCommitResponseTopic) {
	if b.authz == nil {
		return req, nil
	}
	code := b.txnIDRefusal(r, acl.OpWrite, req.TransactionalID)
	if code == 0 {
		code = b.groupRefusal(r, acl.OpRead, req.Group)
	}
	read := b.topicCheck(r, acl.OpRead)
	sub := *req
	var refused []kmsg.TxnOffsetCommitResponseTopic
	sub.Topics, refused = splitTopics(req.Topics,
		func(t kmsg.TxnOffsetCommitRequestTopic) int16 { return read.codeAfter(code, t.Topic) },
		func(t kmsg.TxnOffsetCommitRequestTopic, code int16) kmsg.TxnOffsetCommitResponseTopic {
			rt := kmsg.NewTxnOffsetCommitResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			return rt
		})
	return &sub, refused
}

// refuseTxnMarkers answers every partition of a WriteTxnMarkers
// CLUSTER_AUTHORIZATION_FAILED unless the sender has ClusterAction on
// the cluster (Kafka's authorizeClusterOperation); nil when allowed.
func (b *Broker) refuseTxnMarkers(r *vnet.Request, req *kmsg.WriteTxnMarkersRequest) *kmsg.WriteTxnMarkersResponse {
	if inProcess(r) || b.authorizedCluster(r, acl.OpClusterAction) {
		return nil
	}
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		for _, mt := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = mt.Topic
			for _, p := range mt.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition, rp.ErrorCode = p, kerr.ClusterAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	return resp
}

// describableTopics keeps, of a described transaction's topics, those
// the principal may describe (Kafka's handleDescribeTransactionsRequest).
func (b *Broker) describableTopics(r *vnet.Request, topics []kmsg.DescribeTransactionsResponseTransactionStateTopic) []kmsg.DescribeTransactionsResponseTransactionStateTopic {
	if b.authz == nil {
		return topics
	}
	check := b.topicCheck(r, acl.OpDescribe)
	kept := topics[:0]
	for _, t := range topics {
		if check.err(t.Topic) == nil {
			kept = append(kept, t)
		}
	}
	return kept
}

// inProcess reports whether r is this node's own call into a handler
// (its transaction coordinator writing markers to partitions it leads):
// no connection carries it, and the node acts as itself.
func inProcess(r *vnet.Request) bool { return r.Conn.State == nil }
