package txn

import (
	"cmp"
	"slices"
	"time"
)

// noEpoch is RecordBatch.NO_PRODUCER_EPOCH: an id whose first epoch is
// not handed out yet.
const noEpoch int16 = -1

// maxEpoch is the last epoch before a producer id is exhausted (Kafka's
// isEpochExhausted: Short.MaxValue - 1, keeping one bump for fencing).
const maxEpoch int16 = 32767 - 1

// meta is one transactional id's state (Kafka's TransactionMetadata).
type meta struct {
	id         string
	producerID int64
	// lastProducerID is the id before an exhausted epoch rotated it; a
	// retried InitProducerId naming it is not fenced.
	lastProducerID int64
	epoch          int16
	// lastEpoch is the epoch before the last bump: a retried
	// InitProducerId naming it gets the current epoch back (KIP-360).
	lastEpoch  int16
	timeoutMs  int32
	state      State
	partitions map[TopicPartition]struct{}
	start      int64 // ms the transaction began; -1: none open
	updated    int64 // ms of the last change
	// tv is the transaction version the client runs the transaction at
	// (Kafka's clientTransactionVersion): 2 bumps the epoch at every
	// EndTxn (KIP-890 part 2).
	tv int16
	// nextProducerID is the producer id a version 2 transaction whose
	// EndTxn exhausted the epoch moves to once its markers are written;
	// -1: none.
	nextProducerID int64
}

func newMeta(id string, producerID int64, timeoutMs int32, now time.Time) *meta {
	return &meta{id: id, producerID: producerID, lastProducerID: -1, epoch: noEpoch, lastEpoch: noEpoch,
		timeoutMs: timeoutMs, state: Empty, partitions: map[TopicPartition]struct{}{}, start: -1, updated: now.UnixMilli(),
		nextProducerID: -1}
}

// clone is a copy to change and write before it replaces m.
func (m *meta) clone() *meta {
	n := *m
	n.partitions = make(map[TopicPartition]struct{}, len(m.partitions))
	for tp := range m.partitions {
		n.partitions[tp] = struct{}{}
	}
	return &n
}

// sortedPartitions lists the partitions in topic, partition order.
func (m *meta) sortedPartitions() []TopicPartition {
	out := make([]TopicPartition, 0, len(m.partitions))
	for tp := range m.partitions {
		out = append(out, tp)
	}
	slices.SortFunc(out, func(a, b TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}

// hasAll reports whether every partition of tps is in the transaction.
func (m *meta) hasAll(tps []TopicPartition) bool {
	for _, tp := range tps {
		if _, ok := m.partitions[tp]; !ok {
			return false
		}
	}
	return true
}

// epochExhausted reports whether m's epoch can no longer be bumped.
func (m *meta) epochExhausted() bool { return m.epoch >= maxEpoch }
