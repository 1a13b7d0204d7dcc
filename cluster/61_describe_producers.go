package cluster

// DescribeProducers, version 0 (KIP-664).
//
// The active producers of each partition this node has a replica of,
// leader or follower, from its log's producer state (Kafka's
// ReplicaManager.activeProducerState over ProducerStateManager): producer
// id and epoch, last sequence and timestamp, the coordinator epoch of
// its last marker, and the first offset of its open transaction (-1 if
// none), which is what kafka-transactions find-hanging --broker-id looks
// for on every replica of that broker. A partition of the metadata this
// node has no replica of gets NOT_LEADER_OR_FOLLOWER, one that does not
// exist UNKNOWN_TOPIC_OR_PARTITION. Authorization: Read on the topic,
// else TOPIC_AUTHORIZATION_FAILED for its partitions (Kafka's KafkaApis).

import (
	"cmp"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/segment"
)

func init() {
	register(&api{key: kmsg.DescribeProducers.Int16(), min: 0, max: 0, serve: serveDescribeProducers})
}

func serveDescribeProducers(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.DescribeProducersRequest)
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	var logs map[segment.TopicPartition]*segment.Log // built on first use
	for _, t := range req.Topics {
		rt := kmsg.NewDescribeProducersResponseTopic()
		rt.Topic = t.Topic
		topicErr := b.topicAuthError(r, acl.OpRead, t.Topic)
		for _, p := range t.Partitions {
			rp := kmsg.NewDescribeProducersResponseTopicPartition()
			rp.Partition = p
			tp := segment.TopicPartition{Topic: t.Topic, Partition: p}
			_, hosted := b.parts.Partition(tp)
			switch {
			case topicErr != nil:
				rp.ErrorCode = errorCode(topicErr)
			case !hosted && b.inImage(tp):
				rp.ErrorCode = kerr.NotLeaderForPartition.Code
			case !hosted:
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			default:
				if logs == nil {
					logs = logsByPartition(b.parts.Logs())
				}
				rp.ActiveProducers, rp.ErrorCode = activeProducers(logs[tp])
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// inImage reports whether the metadata has partition tp.
func (b *Broker) inImage(tp segment.TopicPartition) bool {
	_, ok := b.meta.image().Partition(tp.Topic, tp.Partition)
	return ok
}

func logsByPartition(ls []*segment.Log) map[segment.TopicPartition]*segment.Log {
	out := make(map[segment.TopicPartition]*segment.Log, len(ls))
	for _, l := range ls {
		out[l.TopicPartition()] = l
	}
	return out
}

// activeProducers lists a log's producers in producer id order;
// KAFKA_STORAGE_ERROR when the partition's log is offline.
func activeProducers(l *segment.Log) ([]kmsg.DescribeProducersResponseTopicPartitionActiveProducer, int16) {
	if l == nil {
		return nil, kerr.KafkaStorageError.Code
	}
	ps := l.Producers()
	slices.SortFunc(ps, func(a, b segment.ProducerState) int { return cmp.Compare(a.ProducerID, b.ProducerID) })
	out := make([]kmsg.DescribeProducersResponseTopicPartitionActiveProducer, 0, len(ps))
	for _, s := range ps {
		ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
		ap.ProducerID, ap.ProducerEpoch, ap.LastSequence = s.ProducerID, int32(s.Epoch), s.LastSequence
		ap.LastTimestamp, ap.CoordinatorEpoch, ap.CurrentTxnStartOffset = s.LastTimestamp, s.CoordinatorEpoch, s.CurrentTxnFirstOffset
		out = append(out, ap)
	}
	return out, 0
}
