package cluster

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/group"
)

// Internal topics are the broker's own (Kafka's Topic.isInternal plus the
// KRaft metadata log): clients neither create nor produce to them.
const (
	transactionStateTopic = "__transaction_state"
	clusterMetadataTopic  = "__cluster_metadata"

	// adminClientID is the client id Kafka lets append to internal topics
	// (AdminUtils.ADMIN_CLIENT_ID, ReplicaManager's internalTopicsAllowed).
	adminClientID = "__admin_client"
)

func isInternalTopic(name string) bool {
	return name == group.OffsetsTopic || name == transactionStateTopic || name == clusterMetadataTopic
}

// refuseInternalTopicCreation answers a client's CreateTopics for an
// internal name. Kafka's ControllerApis refuses __cluster_metadata with
// INVALID_REQUEST ("Creation of internal topic __cluster_metadata is
// prohibited."), and an internal topic that exists is
// TOPIC_ALREADY_EXISTS. Kafka would let a client create
// __consumer_offsets or __transaction_state before the broker does; Varve
// refuses that too (INVALID_REQUEST), because the broker creates them
// itself with offsets.topic.num.partitions and its own configs, and a
// client's partition count would decide where every group lives.
func (b *Broker) refuseInternalTopicCreation(name string) error {
	if !isInternalTopic(name) {
		return nil
	}
	if _, exists := b.meta.image().Topic(name); exists {
		return kerr.TopicAlreadyExists
	}
	return fmt.Errorf("%w: creation of internal topic %s is prohibited", kerr.InvalidRequest, name)
}
