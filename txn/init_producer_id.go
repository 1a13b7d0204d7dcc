package txn

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// InitResult is InitProducerId's answer for a transactional id.
type InitResult struct {
	ProducerID int64
	Epoch      int16
	Code       int16
}

// InitProducerID is Kafka's handleInitProducerId for a transactional
// id: a new id gets a fresh producer id at epoch 0; a known one the next
// epoch of its producer id, which fences any older producer using the
// id (its requests now get PRODUCER_FENCED). An ongoing transaction is
// first aborted under a bumped epoch and the client told
// CONCURRENT_TRANSACTIONS, so its retry bumps again once the abort is
// written. producerID and epoch are the client's current ones (KIP-360,
// InitProducerId v3+) or -1 and -1.
func (c *Coordinator) InitProducerID(now time.Time, id string, timeoutMs int32, producerID int64, epoch int16) InitResult {
	c.now = now
	fail := func(code int16) InitResult { return InitResult{ProducerID: -1, Epoch: -1, Code: code} }
	if code := c.check(id); code != 0 {
		return fail(code)
	}
	if timeoutMs <= 0 || int64(timeoutMs) > c.cfg.MaxTimeout.Milliseconds() {
		return fail(kerr.InvalidTransactionTimeout.Code)
	}
	m := c.txns[id]
	if m == nil {
		pid, err := c.ids()
		if err != nil {
			c.cfg.Logger.Warn("no producer id for a transactional id", "transactional_id", id, "err", err)
			return fail(kerr.CoordinatorNotAvailable.Code)
		}
		m = newMeta(id, pid, timeoutMs, now)
	}
	expected := producerID >= 0
	switch {
	case m.state.preparing() || m.state == PrepareEpochFence:
		return fail(kerr.ConcurrentTransactions.Code)
	case expected && !validProducerID(m, producerID, epoch):
		return fail(kerr.ProducerFenced.Code)
	case expected && producerID == m.lastProducerID:
		return InitResult{ProducerID: m.producerID, Epoch: m.epoch} // a retry after a rotation
	case m.state == Ongoing:
		if code := c.fenceAndAbort(m); code != 0 {
			return fail(code)
		}
		return fail(kerr.ConcurrentTransactions.Code)
	}
	return c.bumpEpoch(m, timeoutMs, expected, epoch)
}

// validProducerID is Kafka's isValidProducerId: a client naming its
// producer id is fenced unless the id is the current one, or the
// metadata was just created, or the id is the previous one, rotated
// because its epoch was exhausted.
func validProducerID(m *meta, producerID int64, epoch int16) bool {
	return m.epoch == noEpoch || producerID == m.producerID ||
		(producerID == m.lastProducerID && epoch >= maxEpoch)
}

// bumpEpoch moves an id with no open transaction to Empty under its
// next epoch (Kafka's prepareIncrementProducerEpoch), or under a new
// producer id at epoch 0 once the epoch is exhausted
// (prepareProducerIdRotation). A client naming the epoch before the
// last bump is retrying and gets the current one back.
func (c *Coordinator) bumpEpoch(m *meta, timeoutMs int32, expected bool, epoch int16) InitResult {
	fail := func(code int16) InitResult { return InitResult{ProducerID: -1, Epoch: -1, Code: code} }
	next := m.clone()
	next.state, next.timeoutMs, next.start, next.tv = Empty, timeoutMs, -1, 0 // Kafka writes TV_0 here
	next.partitions = map[TopicPartition]struct{}{}
	switch {
	case m.epochExhausted():
		pid, err := c.ids()
		if err != nil {
			return fail(kerr.CoordinatorNotAvailable.Code)
		}
		next.lastProducerID, next.producerID, next.epoch, next.lastEpoch = m.producerID, pid, 0, noEpoch
	case !expected:
		next.epoch, next.lastEpoch = m.epoch+1, noEpoch
	case m.epoch == noEpoch || epoch == m.epoch:
		next.epoch, next.lastEpoch = m.epoch+1, m.epoch
	case epoch == m.lastEpoch:
		return InitResult{ProducerID: m.producerID, Epoch: m.epoch}
	default:
		return fail(kerr.ProducerFenced.Code)
	}
	if code := c.write(next); code != 0 {
		return fail(code)
	}
	return InitResult{ProducerID: next.producerID, Epoch: next.epoch}
}
