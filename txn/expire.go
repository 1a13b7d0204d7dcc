package txn

// abortTimedOut aborts every ongoing transaction open longer than its
// transaction.timeout.ms (Kafka's abortTimedOutTransactions): the
// producer's epoch is bumped, fencing it, and the transaction aborted
// under the new epoch.
func (c *Coordinator) abortTimedOut() {
	now := c.now.UnixMilli()
	for _, id := range c.sortedIDs() {
		m := c.txns[id]
		if m.state != Ongoing || m.start+int64(m.timeoutMs) >= now {
			continue
		}
		if code := c.fenceAndAbort(m); code != 0 {
			c.cfg.Logger.Warn("aborting a timed-out transaction failed; tried again at the next check",
				"transactional_id", id, "code", code)
		}
	}
}

// removeExpired removes the transactional ids with no transaction open
// whose last update is transactional.id.expiration.ms old (Kafka's
// removeExpiredTransactionalIds): each gets a tombstone.
func (c *Coordinator) removeExpired() {
	cutoff := c.now.Add(-c.cfg.IDExpiration).UnixMilli()
	for _, id := range c.sortedIDs() {
		m := c.txns[id]
		if (m.state != Empty && !m.state.complete()) || m.updated > cutoff {
			continue
		}
		next := m.clone()
		next.state = Dead
		c.write(next)
	}
}
