package txn

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// AddPartitions is Kafka's handleAddPartitionsToTransaction (the
// client's AddPartitionsToTxn, v0-v3, and a v4+ transaction that is
// not verify-only): the partitions join id's transaction, which starts
// (Ongoing, start time now) if none was open. Partitions already in an
// ongoing transaction need no write. tv is the transaction version the
// request implies (Kafka's transactionVersionForAddPartitionsToTxn: 2
// for v4 and up, which a partition leader sends for a produce v12 or a
// TxnOffsetCommit v5 of a version 2 client; 0 before), recorded with
// the transaction.
func (c *Coordinator) AddPartitions(now time.Time, id string, producerID int64, epoch int16, tps []TopicPartition, tv int16) int16 {
	c.now = now
	m, code := c.owner(id, producerID, epoch)
	if code != 0 {
		return code
	}
	switch {
	case m.state.preparing() || m.state == PrepareEpochFence:
		return kerr.ConcurrentTransactions.Code
	case m.state == Ongoing && m.hasAll(tps):
		return 0
	}
	next := m.clone()
	if m.state != Ongoing {
		next.start = now.UnixMilli()
		next.partitions = map[TopicPartition]struct{}{}
	}
	for _, tp := range tps {
		next.partitions[tp] = struct{}{}
	}
	next.state, next.tv = Ongoing, tv
	return c.write(next)
}

// AddOffsets is Kafka's handleAddOffsetsToTxn: the __consumer_offsets
// partition of the transaction's group joins it, so that its offset
// commits get the transaction's marker. The caller maps the group to
// its partition.
func (c *Coordinator) AddOffsets(now time.Time, id string, producerID int64, epoch int16, offsets TopicPartition) int16 {
	return c.AddPartitions(now, id, producerID, epoch, []TopicPartition{offsets}, 0) // Kafka: always TV_0
}

// VerifyPartitions is AddPartitionsToTxn v4+ with verify_only (KIP-890
// part 1, a partition leader asking before it appends a transactional
// batch): it writes nothing and answers, per partition, whether it is in
// id's ongoing transaction. One that is not is TRANSACTION_ABORTABLE
// for a v5+ request (Kafka 3.8+, KIP-890: the producer can abort and go
// on with its transactional id), INVALID_TXN_STATE for v4, whose sender
// predates the code (NotInTransaction). A code other than 0 applies to
// the whole transaction, and the map is nil.
func (c *Coordinator) VerifyPartitions(version int16, id string, producerID int64, epoch int16, tps []TopicPartition) (map[TopicPartition]int16, int16) {
	m, code := c.owner(id, producerID, epoch)
	if code != 0 {
		return nil, code
	}
	if m.state.preparing() || m.state == PrepareEpochFence {
		return nil, kerr.ConcurrentTransactions.Code
	}
	out := make(map[TopicPartition]int16, len(tps))
	for _, tp := range tps {
		if _, ok := m.partitions[tp]; ok && m.state == Ongoing {
			out[tp] = 0
		} else {
			out[tp] = NotInTransaction(version)
		}
	}
	return out, 0
}

// AbortableVersion is the first AddPartitionsToTxn version whose sender
// knows TRANSACTION_ABORTABLE (the request's schema: "Version 5 adds
// support for new error code TRANSACTION_ABORTABLE (KIP-890)").
const AbortableVersion = 5

// NotInTransaction is the code a verification of AddPartitionsToTxn
// version gets for a partition outside the ongoing transaction. Kafka's
// coordinator answers TRANSACTION_ABORTABLE to v4 as well (only Kafka
// 3.6 and 3.7 brokers send v4, and they pass the code on to producers
// that may not know it); Varve answers what the version's schema
// promises.
func NotInTransaction(version int16) int16 {
	if version >= AbortableVersion {
		return kerr.TransactionAbortable.Code
	}
	return kerr.InvalidTxnState.Code
}

func sortStrings(s []string) []string {
	slices.Sort(s)
	return s
}
