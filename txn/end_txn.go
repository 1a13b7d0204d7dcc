package txn

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// EndResult is EndTxn's answer. With transaction version 2 it carries
// the producer id and epoch the client goes on with (EndTxn v5's
// ProducerId and ProducerEpoch: the bumped epoch, or a new producer id
// at epoch 0 once the epoch is exhausted); otherwise -1 and -1.
type EndResult struct {
	ProducerID int64
	Epoch      int16
	Code       int16
}

// EndTxn is Kafka's handleEndTransaction. tv is the transaction version
// the request asks for (Kafka's transactionVersionForEndTxn: 2 for
// EndTxn v5 and up on a cluster at transaction.version 2, else 0):
// version 2 is endTxnV2 (end_txn_v2.go); before it the epoch stays the
// same across transactions. An ongoing transaction moves to
// PrepareCommit or PrepareAbort, which is written before the client is
// answered, and its markers are sent; MarkersWritten completes it. A
// retry of an EndTxn that already completed succeeds; one whose markers
// are still being written gets CONCURRENT_TRANSACTIONS.
func (c *Coordinator) EndTxn(now time.Time, id string, producerID int64, epoch int16, commit bool, tv int16) EndResult {
	c.now = now
	if tv >= 2 {
		return c.endTxnV2(id, producerID, epoch, commit)
	}
	return EndResult{ProducerID: -1, Epoch: -1, Code: c.endTxnV1(id, producerID, epoch, commit)}
}

func (c *Coordinator) endTxnV1(id string, producerID int64, epoch int16, commit bool) int16 {
	m, code := c.owner(id, producerID, epoch)
	if code != 0 {
		return code
	}
	switch m.state {
	case Ongoing:
		_, code := c.prepareEnd(m, commit, 0, false)
		return code
	case PrepareCommit, PrepareAbort:
		return kerr.ConcurrentTransactions.Code
	case CompleteCommit:
		if commit {
			return 0
		}
	case CompleteAbort:
		if !commit {
			return 0
		}
	}
	return kerr.InvalidTxnState.Code
}

// owner finds id's state for a request from producerID at epoch:
// INVALID_PRODUCER_ID_MAPPING if the id is unknown or has another
// producer id, PRODUCER_FENCED if the epoch is not the current one
// (the request comes from a fenced producer, or from the future).
func (c *Coordinator) owner(id string, producerID int64, epoch int16) (*meta, int16) {
	if code := c.check(id); code != 0 {
		return nil, code
	}
	m := c.txns[id]
	switch {
	case m == nil || m.producerID != producerID:
		return nil, kerr.InvalidProducerIDMapping.Code
	case m.epoch != epoch:
		return nil, kerr.ProducerFenced.Code
	}
	return m, 0
}

// prepareEnd writes m's PrepareCommit or PrepareAbort and sends its
// markers (Kafka's prepareAbortOrCommit). At transaction version 2 the
// epoch is bumped (Short.MaxValue is the last epoch it reaches), the
// markers carry the bumped epoch, and a transaction that exhausts the
// epoch gets the producer id it moves to once complete; emptyAbort
// (version 2's abort with no transaction open) starts the transaction
// now.
func (c *Coordinator) prepareEnd(m *meta, commit bool, tv int16, emptyAbort bool) (*meta, int16) {
	next := m.clone()
	next.state = PrepareAbort
	if commit {
		next.state = PrepareCommit
	}
	if tv >= 2 {
		next.tv = tv
		if m.state != PrepareEpochFence && m.epochExhausted() {
			pid, err := c.ids()
			if err != nil {
				c.cfg.Logger.Warn("no producer id for an exhausted epoch", "transactional_id", m.id, "err", err)
				return nil, kerr.CoordinatorNotAvailable.Code
			}
			next.nextProducerID = pid
		}
		if m.epoch < 32767 {
			next.epoch, next.lastEpoch = m.epoch+1, m.epoch
		}
		if emptyAbort {
			next.start = c.now.UnixMilli()
		}
	}
	if code := c.write(next); code != 0 {
		return nil, code
	}
	c.sendMarkers(next)
	return next, 0
}

// fenceAndAbort bumps m's epoch, so that its producer is fenced, and
// aborts its ongoing transaction under the new epoch (Kafka's
// prepareFenceProducerEpoch followed by an abort not from the client,
// at the cluster's transaction version: at version 2 the abort bumps
// the epoch once more). The bumped epoch is never handed to a client.
// An exhausted epoch is not bumped by the fence.
func (c *Coordinator) fenceAndAbort(m *meta) int16 {
	fenced := m.clone()
	fenced.state = PrepareEpochFence
	if !m.epochExhausted() {
		fenced.epoch, fenced.lastEpoch = m.epoch+1, m.epoch
	}
	c.txns[m.id] = fenced // in memory only: PrepareEpochFence is never stored
	_, code := c.prepareEnd(fenced, false, c.level, false)
	if code != 0 {
		c.txns[m.id] = m // nothing was written: back to what the log holds
	}
	return code
}

// sendMarkers asks for m's markers, or completes m at once if it has no
// partitions.
func (c *Coordinator) sendMarkers(m *meta) {
	if len(m.partitions) == 0 {
		c.complete(m)
		return
	}
	c.markers.Send(MarkerRequest{TransactionalID: m.id, ProducerID: m.producerID, ProducerEpoch: m.epoch,
		Commit: m.state == PrepareCommit, CoordinatorEpoch: c.epoch, Partitions: m.sortedPartitions()})
}

// MarkersWritten reports that every marker of a MarkerRequest is
// written: the transaction completes (CompleteCommit or CompleteAbort
// is written). A report for a request this coordinator no longer waits
// for (another epoch, another coordinator epoch, a reloaded partition)
// is ignored.
func (c *Coordinator) MarkersWritten(now time.Time, r MarkerRequest) {
	c.now = now
	m := c.txns[r.TransactionalID]
	if c.status != active || r.CoordinatorEpoch != c.epoch || m == nil || !m.state.preparing() ||
		m.producerID != r.ProducerID || m.epoch != r.ProducerEpoch || (m.state == PrepareCommit) != r.Commit {
		return
	}
	c.complete(m)
}

// complete writes m's CompleteCommit or CompleteAbort, with no
// partitions (Kafka's prepareComplete): a version 2 transaction that
// exhausted its epoch moves to its next producer id, at epoch 0, its
// last epoch the one the client last held. A failed write is retried
// after Config.RetryBackoff.
func (c *Coordinator) complete(m *meta) {
	next := m.clone()
	next.state = CompleteAbort
	if m.state == PrepareCommit {
		next.state = CompleteCommit
	}
	next.partitions = map[TopicPartition]struct{}{}
	if m.nextProducerID >= 0 { // version 2, the epoch exhausted: the new producer id at epoch 0
		next.lastProducerID, next.producerID, next.epoch, next.lastEpoch = m.producerID, m.nextProducerID, 0, maxEpoch
		next.nextProducerID = -1
	}
	if code := c.write(next); code != 0 {
		if len(c.retry) == 0 {
			c.retryAt = c.now.Add(c.cfg.RetryBackoff)
		}
		c.retry[m.id] = true
	}
}

// retryComplete tries the failed Complete records again.
func (c *Coordinator) retryComplete() {
	ids := make([]string, 0, len(c.retry))
	for id := range c.retry {
		ids = append(ids, id)
	}
	c.retry = map[string]bool{}
	for _, id := range sortStrings(ids) {
		if m := c.txns[id]; m != nil && m.state.preparing() {
			c.complete(m)
		}
	}
}
