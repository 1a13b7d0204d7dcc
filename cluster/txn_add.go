package cluster

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/txn"
)

// KIP-890 part 2, the partition's side: a transactional produce v12 (a
// client at transaction version 2) sends no AddPartitionsToTxn; the
// partition's leader adds the partition to the producer's transaction
// itself before it appends, as Kafka's AddPartitionsToTxnManager does
// (AddPartitionsToTxn v4+, verify_only false): this node's coordinator
// when it coordinates the transactional id, else the node that does.
// The addition waits while the producer's previous transaction ends
// (txn_hold.go); a producer of an older epoch is refused, so a late
// produce of an ended transaction cannot join the next one
// (INVALID_PRODUCER_EPOCH, as Produce has always said). TxnOffsetCommit
// v5 adds the group's __consumer_offsets partition the same way.

// produceAddsPartition reports whether a produce of this version adds
// its partitions to the transaction (Kafka: v12 and up, on a cluster at
// transaction.version 2).
func (b *Broker) produceAddsPartition(version int16) bool {
	return version >= 12 && b.transactionVersion() >= 2
}

// txnCheckFor is the check a produce of version passes: one older
// than v11 says INVALID_TXN_STATE where a newer one says
// TRANSACTION_ABORTABLE (txn_verify.go).
func (b *Broker) txnCheckFor(version int16) TxnProduceCheck {
	if b.txns != nil && b.produceAddsPartition(version) {
		return b.addTxnProduce
	}
	if version < produceAbortableVersion {
		return olderProduceCheck(b.txnCheck())
	}
	return b.txnCheck()
}

// addTxnProduce is the TxnProduceCheck of a produce v12.
func (b *Broker) addTxnProduce(transactionalID *string, topic string, partition int32, records []byte) error {
	if err := RefuseTransactionalWithoutID(transactionalID, topic, partition, records); err != nil || transactionalID == nil {
		return err
	}
	h, ok := firstTransactional(records)
	if !ok {
		return nil
	}
	tp := txn.TopicPartition{Topic: topic, Partition: partition}
	return produceVerifyError(b.addToTxn(*transactionalID, h.ProducerID, h.ProducerEpoch, tp), *transactionalID, tp)
}

// addToTxn adds tp to the transaction of id at transaction version 2,
// here or on the coordinator's node, and returns the coordinator's code.
func (b *Broker) addToTxn(id string, producerID int64, epoch int16, tp txn.TopicPartition) int16 {
	var code int16
	b.txns.hold(id, func(c *txn.Coordinator) bool {
		code = c.AddPartitions(time.Now(), id, producerID, epoch, []txn.TopicPartition{tp}, 2)
		return concurrent(code)
	})
	if code != kerr.NotCoordinator.Code || b.ctrl == nil {
		return code
	}
	node, ok := b.txnCoordinatorNode(id)
	if !ok || node == b.nodeID {
		return kerr.CoordinatorNotAvailable.Code
	}
	return b.txns.adder.verify(node, id, producerID, epoch, tp)
}
