package cluster

// Each API's authorization, as Kafka's KafkaApis checks it: the
// handlers call one of these and answer with what they return. The
// operations and error codes are Kafka's:
//
//	Produce                   Write on each topic (TOPIC_AUTHORIZATION_FAILED);
//	                          Write on the TransactionalId of a transactional
//	                          producer (TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
//	Fetch                     Read on each topic; a follower: ClusterAction on
//	                          the cluster, else every partition is refused
//	ListOffsets, OffsetForLeaderEpoch, Metadata
//	                          Describe on each topic; Metadata lists only the
//	                          topics the principal may describe, and creates a
//	                          topic only with Create on the cluster or the topic
//	JoinGroup, SyncGroup, Heartbeat, LeaveGroup
//	                          Read on the group (GROUP_AUTHORIZATION_FAILED)
//	OffsetCommit              Read on the group, Read on each topic
//	OffsetFetch               Describe on the group, Describe on each topic
//	OffsetDelete              Delete on the group, Read on each topic
//	DescribeGroups            Describe on each group
//	DeleteGroups              Delete on each group
//	ListGroups                Describe on the cluster, else the groups the
//	                          principal may describe
//	FindCoordinator           Describe on the group or TransactionalId
//	CreateTopics              Create on the cluster or the topic
//	DeleteTopics              Delete on each topic
//	DeleteRecords             Delete on each topic
//	CreatePartitions          Alter on each topic
//	DescribeConfigs           DescribeConfigs on the topic or the cluster (broker)
//	IncrementalAlterConfigs, AlterConfigs
//	                          AlterConfigs on the topic or the cluster (broker,
//	                          broker logger)
//	InitProducerId            Write on the TransactionalId; without one,
//	                          IdempotentWrite on the cluster or Write on any
//	                          topic (KIP-679, Kafka 3.0+)
//	AddPartitionsToTxn        v0-3 (clients): Write on the TransactionalId
//	                          (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), Write on
//	                          each topic, never an internal topic; v4 (brokers,
//	                          KIP-890): ClusterAction on the cluster
//	AddOffsetsToTxn           Write on the TransactionalId, Read on the group
//	EndTxn                    Write on the TransactionalId
//	TxnOffsetCommit           Write on the TransactionalId, Read on the group,
//	                          Read on each topic
//	WriteTxnMarkers           ClusterAction on the cluster
//	DescribeTransactions      Describe on each TransactionalId; only the topics
//	                          the principal may describe are listed
//	ListTransactions          only the TransactionalIds the principal may describe
//	DescribeProducers         Read on each topic
//	DescribeLogDirs           Describe on the cluster (no directory otherwise)
//	AlterReplicaLogDirs       Alter on the cluster (every partition refused)
//	ElectLeaders, AlterPartitionReassignments
//	                          Alter on the cluster
//	ListPartitionReassignments, DescribeQuorum
//	                          Describe on the cluster
//	DescribeCluster           nothing (KIP-430 operations when asked)
//	DescribeAcls / CreateAcls, DeleteAcls
//	                          Describe / Alter on the cluster
//	DescribeUserScramCredentials / AlterUserScramCredentials
//	                          Describe / Alter on the cluster
//	DescribeClientQuotas / AlterClientQuotas
//	                          DescribeConfigs / AlterConfigs on the cluster
//
// ApiVersions, SaslHandshake and SaslAuthenticate need nothing.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	vnet "github.com/varve/varve/net"
)

// topicAllowed caches one request's decisions per topic: a request names
// a topic once per partition.
type topicAllowed struct {
	b    *Broker
	r    *vnet.Request
	op   acl.Operation
	seen map[string]bool
}

func (b *Broker) topicCheck(r *vnet.Request, op acl.Operation) *topicAllowed {
	return &topicAllowed{b: b, r: r, op: op}
}

// err is TOPIC_AUTHORIZATION_FAILED unless the operation on topic is
// allowed.
func (t *topicAllowed) err(topic string) error {
	if t.b.authz == nil {
		return nil
	}
	ok, known := t.seen[topic]
	if !known {
		if t.seen == nil {
			t.seen = map[string]bool{}
		}
		ok = t.b.authorized(t.r, t.op, acl.ResourceTopic, topic)
		t.seen[topic] = ok
	}
	if !ok {
		return kerr.TopicAuthorizationFailed
	}
	return nil
}

// codeAfter is first when it is an error code, else err's code for
// topic: the topic is checked only once the checks before it passed.
func (t *topicAllowed) codeAfter(first int16, topic string) int16 {
	if first != 0 {
		return first
	}
	return errorCode(t.err(topic))
}

// produceTransactionError is TRANSACTIONAL_ID_AUTHORIZATION_FAILED for
// a transactional producer without Write on its TransactionalId.
func (b *Broker) produceTransactionError(r *vnet.Request, req *kmsg.ProduceRequest) error {
	if req.TransactionID == nil || b.authorized(r, acl.OpWrite, acl.ResourceTransactionalID, *req.TransactionID) {
		return nil
	}
	return kerr.TransactionalIDAuthorizationFailed
}

// authorizeFetch refuses the partitions of topics the fetcher may not
// read (TOPIC_AUTHORIZATION_FAILED): a follower needs ClusterAction on
// the cluster, a consumer Read on the topic. A refused partition is not
// read. A topic id this node does not know stays UNKNOWN_TOPIC_ID, as
// Kafka resolves ids before it authorizes.
func (b *Broker) authorizeFetch(r *vnet.Request, topics []fetchTopic, follower bool) {
	if b.authz == nil {
		return
	}
	clusterOK := follower && b.authorizedCluster(r, acl.OpClusterAction)
	check := b.topicCheck(r, acl.OpRead)
	for ti := range topics {
		t := &topics[ti]
		if clusterOK || t.name == "" || (!follower && check.err(t.name) == nil) {
			continue
		}
		for pi := range t.parts {
			t.parts[pi].part, t.parts[pi].errorCode = nil, kerr.TopicAuthorizationFailed.Code
		}
	}
}

// initProducerIDError is InitProducerId's check: Write on the
// TransactionalId, or for an idempotent producer IdempotentWrite on the
// cluster or Write on any topic (KIP-679).
func (b *Broker) initProducerIDError(r *vnet.Request, req *kmsg.InitProducerIDRequest) error {
	if b.authz == nil {
		return nil
	}
	if req.TransactionalID != nil {
		if b.authorized(r, acl.OpWrite, acl.ResourceTransactionalID, *req.TransactionalID) {
			return nil
		}
		return kerr.TransactionalIDAuthorizationFailed
	}
	if b.authorizedCluster(r, acl.OpIdempotentWrite) {
		return nil
	}
	b.authz.follow()
	if b.authz.AuthorizeAny(b.sec.principal(r), aclHost(r), acl.OpWrite, acl.ResourceTopic) {
		return nil
	}
	return kerr.ClusterAuthorizationFailed
}

// createTopicError is CreateTopics' and auto-creation's check: Create
// on the cluster or on the topic.
func (b *Broker) createTopicError(r *vnet.Request, topic string) error {
	if b.authorizedCluster(r, acl.OpCreate) || b.authorized(r, acl.OpCreate, acl.ResourceTopic, topic) {
		return nil
	}
	return kerr.TopicAuthorizationFailed
}

// configResourceError is DescribeConfigs' and IncrementalAlterConfigs'
// check: op on the topic (TOPIC_AUTHORIZATION_FAILED) or, for a broker
// resource, on the cluster (CLUSTER_AUTHORIZATION_FAILED).
func (b *Broker) configResourceError(r *vnet.Request, op acl.Operation, rt kmsg.ConfigResourceType, name string) error {
	switch rt {
	case kmsg.ConfigResourceTypeTopic:
		return b.topicAuthError(r, op, name)
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger:
		return b.clusterAuthError(r, op)
	}
	return nil
}

// authorizeMetadata applies Metadata's rules to a response: with every
// topic asked for, the topics the principal may not describe are left
// out; a named one is answered TOPIC_AUTHORIZATION_FAILED without its
// partitions. KIP-430's authorized operations are filled in when asked.
func (b *Broker) authorizeMetadata(r *vnet.Request, req *kmsg.MetadataRequest, resp *kmsg.MetadataResponse, all bool) {
	if b.authz == nil {
		return
	}
	check := b.topicCheck(r, acl.OpDescribe)
	kept := resp.Topics[:0]
	for _, t := range resp.Topics {
		if t.Topic != nil && check.err(*t.Topic) != nil {
			if all {
				continue
			}
			t.ErrorCode, t.Partitions, t.TopicID, t.IsInternal = kerr.TopicAuthorizationFailed.Code, nil, [16]byte{}, false
		} else if req.IncludeTopicAuthorizedOperations && t.Topic != nil && t.ErrorCode == 0 {
			t.AuthorizedOperations = b.authorizedOperations(r, acl.ResourceTopic, *t.Topic, topicOperations)
		}
		kept = append(kept, t)
	}
	resp.Topics = kept
	if req.IncludeClusterAuthorizedOperations {
		resp.AuthorizedOperations = b.authorizedOperations(r, acl.ResourceCluster, acl.ClusterName, clusterOperations)
	}
}

// groupRefusal is the error of a request on a group needing op there.
func (b *Broker) groupRefusal(r *vnet.Request, op acl.Operation, groupID string) int16 {
	return errorCode(b.groupAuthError(r, op, groupID))
}

// authorizeOffsetFetch applies OffsetFetch's topic rule to a group's
// answer: a topic the principal may not describe is answered
// TOPIC_AUTHORIZATION_FAILED when named, left out when every topic was
// asked for.
func (b *Broker) authorizeOffsetFetch(r *vnet.Request, named bool, topics []kmsg.OffsetFetchResponseGroupTopic) []kmsg.OffsetFetchResponseGroupTopic {
	if b.authz == nil {
		return topics
	}
	check := b.topicCheck(r, acl.OpDescribe)
	kept := topics[:0]
	for _, t := range topics {
		if check.err(t.Topic) != nil {
			if !named {
				continue
			}
			for i := range t.Partitions {
				t.Partitions[i].Offset, t.Partitions[i].ErrorCode = -1, kerr.TopicAuthorizationFailed.Code
			}
		}
		kept = append(kept, t)
	}
	return kept
}

// controllerAPIError is the cluster check of the controller APIs a
// broker forwards.
func (b *Broker) controllerAPIError(r *vnet.Request, req kmsg.Request) error {
	switch req.(type) {
	case *kmsg.ElectLeadersRequest, *kmsg.AlterPartitionAssignmentsRequest:
		return b.clusterAuthError(r, acl.OpAlter)
	}
	return b.clusterAuthError(r, acl.OpDescribe)
}

// produceRefused is a partition's answer to a Produce refused before
// any append.
func produceRefused(partition int32, err error) kmsg.ProduceResponseTopicPartition {
	sp := kmsg.NewProduceResponseTopicPartition()
	sp.Partition, sp.ErrorCode = partition, errorCode(err)
	sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = -1, -1, -1
	return sp
}

// authorizeCommit splits an OffsetCommit: the topics it may commit (Read
// on the group and on the topic), and the answers of the others
// (GROUP_AUTHORIZATION_FAILED for all without the group,
// TOPIC_AUTHORIZATION_FAILED for a topic).
func (b *Broker) authorizeCommit(r *vnet.Request, req *kmsg.OffsetCommitRequest) (*kmsg.OffsetCommitRequest, []kmsg.OffsetCommitResponseTopic) {
	if b.authz == nil {
		return req, nil
	}
	groupCode := b.groupRefusal(r, acl.OpRead, req.Group)
	read := b.topicCheck(r, acl.OpRead)
	sub := *req
	var refused []kmsg.OffsetCommitResponseTopic
	sub.Topics, refused = splitTopics(req.Topics,
		func(t kmsg.OffsetCommitRequestTopic) int16 { return read.codeAfter(groupCode, t.Topic) },
		func(t kmsg.OffsetCommitRequestTopic, code int16) kmsg.OffsetCommitResponseTopic {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			return rt
		})
	return &sub, refused
}

// authorizeOffsetDelete is authorizeCommit for OffsetDelete: Delete on
// the group (GROUP_AUTHORIZATION_FAILED for the request), Read on each
// topic.
func (b *Broker) authorizeOffsetDelete(r *vnet.Request, req *kmsg.OffsetDeleteRequest) (*kmsg.OffsetDeleteRequest, []kmsg.OffsetDeleteResponseTopic, int16) {
	if b.authz == nil {
		return req, nil, 0
	}
	if code := b.groupRefusal(r, acl.OpDelete, req.Group); code != 0 {
		return nil, nil, code
	}
	read := b.topicCheck(r, acl.OpRead)
	sub := *req
	var refused []kmsg.OffsetDeleteResponseTopic
	sub.Topics, refused = splitTopics(req.Topics,
		func(t kmsg.OffsetDeleteRequestTopic) int16 { return errorCode(read.err(t.Topic)) },
		func(t kmsg.OffsetDeleteRequestTopic, code int16) kmsg.OffsetDeleteResponseTopic {
			rt := kmsg.NewOffsetDeleteResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetDeleteResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			return rt
		})
	return &sub, refused, 0
}

// splitTopics divides a request's topics into those whose check passes
// (code 0), kept in order, and the answers refuse gives the others.
func splitTopics[T, R any](topics []T, check func(T) int16, refuse func(T, int16) R) (kept []T, refused []R) {
	for _, t := range topics {
		if code := check(t); code != 0 {
			refused = append(refused, refuse(t, code))
			continue
		}
		kept = append(kept, t)
	}
	return kept, refused
}

// coordinatorKeyRefusal is FindCoordinator's check: Describe on the
// group (GROUP_AUTHORIZATION_FAILED) or the TransactionalId
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
func (b *Broker) coordinatorKeyRefusal(r *vnet.Request, keyType int8, key string) int16 {
	if keyType == 0 {
		return b.groupRefusal(r, acl.OpDescribe, key)
	}
	if keyType == 1 && !b.authorized(r, acl.OpDescribe, acl.ResourceTransactionalID, key) {
		return kerr.TransactionalIDAuthorizationFailed.Code
	}
	return 0
}
