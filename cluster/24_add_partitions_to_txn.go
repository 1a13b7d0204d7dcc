package cluster

// AddPartitionsToTxn, versions 0-4.
//
// v0-v3, from a transactional producer: the partitions join its
// transaction (package txn). Partitions of topics that do not exist get
// UNKNOWN_TOPIC_OR_PARTITION, and then the others OPERATION_NOT_ATTEMPTED,
// as Kafka's KafkaApis does; a coordinator error applies to every
// partition. PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2
// (KIP-588).
//
// v4, from a broker (KIP-890 part 1): a batch of transactions, each
// verified (verify_only: is the partition in the ongoing transaction?
// INVALID_TXN_STATE if not) or added, answered per transaction.
//
// Authorization (Kafka's KafkaApis): a client's request needs Write on
// the TransactionalId and on each topic, a broker's ClusterAction on the
// cluster (authorize_txn.go).
//
// Not served: v5 (transaction version 2, which is not advertised).

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/txn"
)

func init() {
	register(&api{key: kmsg.AddPartitionsToTxn.Int16(), min: 0, max: 4, serve: serveAddPartitionsToTxn})
}

func serveAddPartitionsToTxn(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.AddPartitionsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	if r.Version >= 4 {
		if err := b.clusterAuthError(r, acl.OpClusterAction); err != nil {
			resp.ErrorCode = errorCode(err) // a broker's request: the whole batch is refused
			return resp
		}
		for _, t := range req.Transactions {
			resp.Transactions = append(resp.Transactions, b.addPartitionsBatched(t))
		}
		return resp
	}
	tps := requestedTxnPartitions(req.Topics)
	codes := b.addPartitionsRefusals(r, req.TransactionalID, tps, true)
	if codes == nil {
		var code int16
		b.txns.do(req.TransactionalID, func(c *txn.Coordinator) {
			code = c.AddPartitions(time.Now(), req.TransactionalID, req.ProducerID, req.ProducerEpoch, tps)
		})
		code = fencedForVersion(code, r.Version, 2)
		codes = map[txn.TopicPartition]int16{}
		for _, tp := range tps {
			codes[tp] = code
		}
	}
	for _, t := range req.Topics {
		rt := kmsg.NewAddPartitionsToTxnResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, codes[txn.TopicPartition{Topic: t.Topic, Partition: p}]
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// addPartitionsBatched answers one transaction of a v4 request.
func (b *Broker) addPartitionsBatched(t kmsg.AddPartitionsToTxnRequestTransaction) kmsg.AddPartitionsToTxnResponseTransaction {
	var tps []txn.TopicPartition
	for _, rt := range t.Topics {
		for _, p := range rt.Partitions {
			tps = append(tps, txn.TopicPartition{Topic: rt.Topic, Partition: p})
		}
	}
	codes := b.addPartitionsRefusals(nil, t.TransactionalID, tps, false)
	if codes == nil {
		b.txns.do(t.TransactionalID, func(c *txn.Coordinator) {
			var code int16
			if t.VerifyOnly {
				codes, code = c.VerifyPartitions(t.TransactionalID, t.ProducerID, t.ProducerEpoch, tps)
			} else {
				code = c.AddPartitions(time.Now(), t.TransactionalID, t.ProducerID, t.ProducerEpoch, tps)
			}
			if codes == nil {
				codes = map[txn.TopicPartition]int16{}
				for _, tp := range tps {
					codes[tp] = code
				}
			}
		})
	}
	out := kmsg.NewAddPartitionsToTxnResponseTransaction()
	out.TransactionalID = t.TransactionalID
	for _, rt := range t.Topics {
		ot := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
		ot.Topic = rt.Topic
		for _, p := range rt.Partitions {
			op := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
			op.Partition, op.ErrorCode = p, codes[txn.TopicPartition{Topic: rt.Topic, Partition: p}]
			ot.Partitions = append(ot.Partitions, op)
		}
		out.Topics = append(out.Topics, ot)
	}
	return out
}

func requestedTxnPartitions(topics []kmsg.AddPartitionsToTxnRequestTopic) []txn.TopicPartition {
	var tps []txn.TopicPartition
	for _, t := range topics {
		for _, p := range t.Partitions {
			tps = append(tps, txn.TopicPartition{Topic: t.Topic, Partition: p})
		}
	}
	return tps
}

// partitionExists reports whether the image has the partition.
func partitionExists(img *metadata.Image, tp txn.TopicPartition) bool {
	t, ok := img.Topic(tp.Topic)
	return ok && tp.Partition >= 0 && int(tp.Partition) < len(t.Partitions)
}
