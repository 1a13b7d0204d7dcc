package cluster

// AddPartitionsToTxn, versions 0-5.
//
// v0-v3, from a transactional producer: the partitions join its
// transaction (package txn). Partitions of topics that do not exist get
// UNKNOWN_TOPIC_OR_PARTITION, and then the others OPERATION_NOT_ATTEMPTED,
// as Kafka's KafkaApis does; a coordinator error applies to every
// partition. PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2
// (KIP-588).
//
// v4 and v5 (v5: TRANSACTION_ABORTABLE known), from a broker (KIP-890):
// a batch of transactions, each verified (verify_only, part 1: is the
// partition in the ongoing transaction? if not, TRANSACTION_ABORTABLE
// at v5 and INVALID_TXN_STATE at v4, txn.NotInTransaction) or
// added (part 2: a partition leader adding the partition of a produce
// v12 or a TxnOffsetCommit v5, at transaction version 2), answered per
// transaction.
//
// Additions wait while the producer's previous transaction ends rather
// than answer CONCURRENT_TRANSACTIONS (txn_hold.go): a client's request
// is held and answered later; a broker's batch with additions is
// answered from a goroutine once each is settled.
//
// Authorization (Kafka's KafkaApis): a client's request needs Write on
// the TransactionalId and on each topic, a broker's ClusterAction on the
// cluster (authorize_txn.go).

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/txn"
)

func init() {
	register(&api{key: kmsg.AddPartitionsToTxn.Int16(), min: 0, max: 5, serve: serveAddPartitionsToTxn})
}

func serveAddPartitionsToTxn(b *Broker, r *vnet.Request, kreq kmsg.Request, respond func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.AddPartitionsToTxnRequest)
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	if r.Version >= 4 {
		if err := b.clusterAuthError(r, acl.OpClusterAction); err != nil {
			resp.ErrorCode = errorCode(err) // a broker's request: the whole batch is refused
			return resp
		}
		return b.addPartitionsBatch(r.Version, req, resp, respond)
	}
	tps := requestedTxnPartitions(req.Topics)
	codes := b.addPartitionsRefusals(r, req.TransactionalID, tps, true)
	if codes != nil {
		return addPartitionsAnswer(req, resp, codes)
	}
	var code int16
	add := func(c *txn.Coordinator) bool {
		code = c.AddPartitions(time.Now(), req.TransactionalID, req.ProducerID, req.ProducerEpoch, tps, 0)
		return concurrent(code)
	}
	return b.answerHeld(req.TransactionalID, r.Version, respond, add, func() kmsg.Response {
		codes := map[txn.TopicPartition]int16{}
		for _, tp := range tps {
			codes[tp] = fencedForVersion(code, r.Version, 2)
		}
		return addPartitionsAnswer(req, resp, codes)
	})
}

// addPartitionsBatch answers a broker's batch: at once if it only
// verifies, else from a goroutine, as each addition may be held.
func (b *Broker) addPartitionsBatch(version int16, req *kmsg.AddPartitionsToTxnRequest, resp *kmsg.AddPartitionsToTxnResponse,
	respond func(vnet.Response)) kmsg.Response {
	adds := false
	for _, t := range req.Transactions {
		adds = adds || !t.VerifyOnly
	}
	answer := func() kmsg.Response {
		for _, t := range req.Transactions {
			resp.Transactions = append(resp.Transactions, b.addPartitionsBatched(version, t))
		}
		return resp
	}
	if !adds {
		return answer()
	}
	b.txns.done.Add(1)
	go func() {
		defer b.txns.done.Done()
		out := answer()
		out.SetVersion(version)
		respond(bytesResponse(out.AppendTo(nil)))
	}()
	return nil
}

// addPartitionsAnswer is a client's answer, one code per partition.
func addPartitionsAnswer(req *kmsg.AddPartitionsToTxnRequest, resp *kmsg.AddPartitionsToTxnResponse, codes map[txn.TopicPartition]int16) kmsg.Response {
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

// addPartitionsBatched answers one transaction of a v4+ request.
func (b *Broker) addPartitionsBatched(version int16, t kmsg.AddPartitionsToTxnRequestTransaction) kmsg.AddPartitionsToTxnResponseTransaction {
	var tps []txn.TopicPartition
	for _, rt := range t.Topics {
		for _, p := range rt.Partitions {
			tps = append(tps, txn.TopicPartition{Topic: rt.Topic, Partition: p})
		}
	}
	codes := b.addPartitionsRefusals(nil, t.TransactionalID, tps, false)
	if codes == nil {
		var code int16
		b.txns.hold(t.TransactionalID, func(c *txn.Coordinator) bool {
			if t.VerifyOnly {
				codes, code = c.VerifyPartitions(version, t.TransactionalID, t.ProducerID, t.ProducerEpoch, tps)
				return false // a verification is answered at once
			}
			code = c.AddPartitions(time.Now(), t.TransactionalID, t.ProducerID, t.ProducerEpoch, tps, 2) // Kafka: v4+ is TV_2
			return concurrent(code)
		})
		if codes == nil {
			codes = map[txn.TopicPartition]int16{}
			for _, tp := range tps {
				codes[tp] = code
			}
		}
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
