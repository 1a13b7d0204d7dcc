package txn

import "github.com/twmb/franz-go/pkg/kerr"

// endTxnV2 is Kafka's endTransaction at transaction version 2 (KIP-890
// part 2): every EndTxn bumps the producer epoch, so the client's epoch
// tells a retry (one below the current epoch, or the last epoch of a
// producer id just rotated) from the next transaction's request (the
// current epoch). Kafka's table, Retry and Current being the client's
// epoch:
//
//	state           abort: retry / current   commit: retry / current
//	Empty           PRODUCER_FENCED / bump    PRODUCER_FENCED / INVALID_TXN_STATE
//	CompleteAbort   ok / bump                 INVALID_TXN_STATE / INVALID_TXN_STATE
//	CompleteCommit  INVALID_TXN_STATE / bump  ok / INVALID_TXN_STATE
//
// where bump is an abort with no partitions (written, and completed at
// once) and ok answers the current producer id and epoch again.
func (c *Coordinator) endTxnV2(id string, producerID int64, epoch int16, commit bool) EndResult {
	fail := func(code int16) EndResult { return EndResult{ProducerID: -1, Epoch: -1, Code: code} }
	if code := c.check(id); code != 0 {
		return fail(code)
	}
	m := c.txns[id]
	if m == nil {
		return fail(kerr.InvalidProducerIDMapping.Code)
	}
	retryOverflow := m.lastProducerID == producerID && epoch == maxEpoch && m.epoch == 0
	retryBump := m.epoch == epoch+1
	retry := retryBump || retryOverflow
	switch {
	case m.producerID != producerID && !retryOverflow:
		return fail(kerr.InvalidProducerIDMapping.Code)
	case m.state.preparing() && epoch == m.epoch:
		// The next transaction's EndTxn while this one's markers are
		// written (an abort with nothing produced): Kafka's epoch check
		// would call it fenced, which a client cannot recover from; it is
		// told to retry, as for every other request meanwhile.
		return fail(kerr.ConcurrentTransactions.Code)
	case !validEndEpoch(m, epoch, retryBump, retry):
		return fail(kerr.ProducerFenced.Code)
	}
	current := EndResult{ProducerID: m.producerID, Epoch: m.epoch}
	switch {
	case m.state == Ongoing:
		return c.prepareEndV2(m, commit, false)
	case m.state.preparing() && commit == (m.state == PrepareCommit):
		return fail(kerr.ConcurrentTransactions.Code)
	case m.state == CompleteCommit && commit, m.state == CompleteAbort && !commit:
		if retry {
			return current
		}
		if !commit {
			return c.prepareEndV2(m, false, true)
		}
	case !commit && !retry && (m.state == Empty || m.state == CompleteCommit):
		return c.prepareEndV2(m, false, true)
	}
	return fail(kerr.InvalidTxnState.Code)
}

// validEndEpoch is Kafka's isValidEpoch at version 2: an open or empty
// transaction takes only the current epoch, a preparing one only a
// retry, a complete one either.
func validEndEpoch(m *meta, epoch int16, retryBump, retry bool) bool {
	switch m.state {
	case PrepareCommit, PrepareAbort:
		return retryBump
	case CompleteCommit, CompleteAbort:
		return retry || epoch == m.epoch
	}
	return epoch == m.epoch
}

// prepareEndV2 writes the prepared end of m's transaction with the
// epoch bumped and answers the producer id and epoch the client goes on
// with: the bumped epoch, or the next producer id at epoch 0 when the
// bump exhausted the epoch.
func (c *Coordinator) prepareEndV2(m *meta, commit, emptyAbort bool) EndResult {
	next, code := c.prepareEnd(m, commit, 2, emptyAbort)
	if code != 0 {
		return EndResult{ProducerID: -1, Epoch: -1, Code: code}
	}
	if next.nextProducerID >= 0 {
		return EndResult{ProducerID: next.nextProducerID, Epoch: 0}
	}
	return EndResult{ProducerID: next.producerID, Epoch: next.epoch}
}
