package cluster

import (
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/record"
	"github.com/varve/varve/txn"
)

// KIP-890 part 1, the partition's side: a transactional produce is
// appended only if its partition is in the producer's ongoing
// transaction, as the transaction coordinator knows it (Kafka's
// AddPartitionsToTxnManager, transaction.partition.verification.enable
// true). A late produce of a transaction that already ended, or one to a
// partition the producer never added, is refused instead of opening a
// transaction no coordinator will end (a hanging transaction that would
// hold the last stable offset back): TRANSACTION_ABORTABLE to a client
// that knows it (Produce v11+, TxnOffsetCommit v4+; KIP-890), which
// aborts and goes on with its transactional id, INVALID_TXN_STATE to an
// older one (Kafka's transactionSupportedOperation).
//
// Verified by this node's coordinator when it coordinates the
// transactional id (always, on one node), else by the node that does,
// asked with AddPartitionsToTxn v5 (txn_verify_remote.go).
// With transaction version 1 the epoch is the same from one transaction
// to the next, so a produce delayed past the producer's next
// AddPartitionsToTxn of the same partition is taken into the next
// transaction: closing that gap is transaction version 2's epoch bump.

// The first versions whose clients know TRANSACTION_ABORTABLE (their
// schemas: "adds support for new error code TRANSACTION_ABORTABLE").
const (
	produceAbortableVersion         = 11
	txnOffsetCommitAbortableVersion = 4
)

// verifyTxnProduce is the broker's TxnProduceCheck. Its refusal is the
// coordinator's TRANSACTION_ABORTABLE; txnCheckFor turns it into
// INVALID_TXN_STATE for a produce older than v11.
func (b *Broker) verifyTxnProduce(transactionalID *string, topic string, partition int32, records []byte) error {
	if err := RefuseTransactionalWithoutID(transactionalID, topic, partition, records); err != nil || transactionalID == nil {
		return err
	}
	h, ok := firstTransactional(records)
	if !ok {
		return nil
	}
	id, tp := *transactionalID, txn.TopicPartition{Topic: topic, Partition: partition}
	return produceVerifyError(b.verifyInTxn(id, h.ProducerID, h.ProducerEpoch, tp), id, tp)
}

// verifyInTxn asks the coordinator of id, here or on its node, whether
// tp is in the ongoing transaction of the producer, as an
// AddPartitionsToTxn v5 would (TRANSACTION_ABORTABLE if not), and
// returns its code. 0 on one node whose coordinator does not own id: no
// __transaction_state, so no transaction to hold the write to.
func (b *Broker) verifyInTxn(id string, producerID int64, epoch int16, tp txn.TopicPartition) int16 {
	var codes map[txn.TopicPartition]int16
	var code int16
	b.txns.do(id, func(c *txn.Coordinator) {
		codes, code = c.VerifyPartitions(verifyVersion, id, producerID, epoch, []txn.TopicPartition{tp})
	})
	if code == 0 {
		code = codes[tp]
	}
	if code != kerr.NotCoordinator.Code {
		return code
	}
	if b.ctrl == nil {
		return 0
	}
	return b.verifyElsewhere(id, producerID, epoch, tp)
}

// verifyElsewhere asks the node that coordinates id
// (txn_verify_remote.go); COORDINATOR_NOT_AVAILABLE when no node leads
// its partition, or the image says this one does but its coordinator
// does not know it yet.
func (b *Broker) verifyElsewhere(id string, producerID int64, epoch int16, tp txn.TopicPartition) int16 {
	node, ok := b.txnCoordinatorNode(id)
	if !ok || node == b.nodeID {
		return kerr.CoordinatorNotAvailable.Code
	}
	return b.txns.verifier.verify(node, id, producerID, epoch, tp)
}

// verifiedFor is the coordinator's answer as Kafka's
// AddPartitionsToTxnManager hands it to the request that asked: a fenced
// epoch is INVALID_PRODUCER_EPOCH, which producers expect, and
// TRANSACTION_ABORTABLE is INVALID_TXN_STATE for a client too old to
// know it.
func verifiedFor(code int16, abortableKnown bool) int16 {
	switch {
	case code == kerr.ProducerFenced.Code:
		return kerr.InvalidProducerEpoch.Code
	case code == kerr.TransactionAbortable.Code && !abortableKnown:
		return kerr.InvalidTxnState.Code
	}
	return code
}

// produceVerifyError is what the producer is told (Kafka's
// ReplicaManager after verification): the coordinator's retriable
// errors become NOT_ENOUGH_REPLICAS, which every client retries; a
// fenced epoch is INVALID_PRODUCER_EPOCH, as Produce has always said.
func produceVerifyError(code int16, id string, tp txn.TopicPartition) error {
	e := kerr.ErrorForCode(verifiedFor(code, true))
	switch code {
	case 0:
		return nil
	case kerr.ConcurrentTransactions.Code, kerr.CoordinatorLoadInProgress.Code, kerr.CoordinatorNotAvailable.Code,
		kerr.NotCoordinator.Code, kerr.NetworkException.Code, kerr.RequestTimedOut.Code:
		e = kerr.NotEnoughReplicas // the coordinator is moving or unreachable: the producer retries
	}
	return fmt.Errorf("%w: %s-%d is not in the ongoing transaction of %q", e, tp.Topic, tp.Partition, id)
}

// olderProduceCheck is check for a produce older than v11, whose client
// does not know TRANSACTION_ABORTABLE: INVALID_TXN_STATE instead.
func olderProduceCheck(check TxnProduceCheck) TxnProduceCheck {
	return func(transactionalID *string, topic string, partition int32, records []byte) error {
		err := check(transactionalID, topic, partition, records)
		if !errors.Is(err, kerr.TransactionAbortable) {
			return err
		}
		return fmt.Errorf("%w: %s", kerr.InvalidTxnState, strings.TrimPrefix(err.Error(), kerr.TransactionAbortable.Error()+": "))
	}
}

// firstTransactional is the header of the first transactional data batch.
func firstTransactional(records []byte) (record.BatchHeader, bool) {
	for p := 0; p < len(records); {
		h, n, err := record.NextBatch(records[p:], 0)
		if err != nil {
			return record.BatchHeader{}, false
		}
		if h.IsTransactional() && !h.IsControl() {
			return h, true
		}
		p += n
	}
	return record.BatchHeader{}, false
}
