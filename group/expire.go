package group

// expireOffsets is the offsets retention check (Kafka's
// cleanupGroupMetadata with removeExpiredOffsets), run every
// offsets.retention.check.interval.ms. Since KIP-211 an offset expires
// offsets.retention.minutes after its group became Empty, not after it
// was committed; commits that carried their own retention (OffsetCommit
// v2-v4) expire at their expire timestamp. A group left Empty with no
// offsets is removed with a tombstone.
func (c *Coordinator) expireOffsets() {
	for _, id := range c.sortedGroupIDs() {
		g := c.groups[id]
		expired := c.expiredOffsets(g)
		if len(expired) == 0 && !(g.is(Empty) && len(g.offsets) == 0) {
			continue
		}
		if code := c.removeOffsets(g, expired); code != 0 {
			c.cfg.Logger.Warn("expiring offsets failed", "group", id, "code", code)
			continue
		}
		if len(expired) > 0 {
			c.cfg.Logger.Info("expired offsets", "group", id, "partitions", len(expired))
		}
	}
}

// expiredOffsets lists g's offsets past retention (Kafka's
// removeExpiredOffsets):
//   - a group with a protocol type and no members: all offsets, once
//     retention passed since it became Empty (or since each commit when
//     that time is unknown);
//   - a Stable consumer group with known subscriptions: offsets of topics
//     no member subscribes to, retention after their commit;
//   - a group without a protocol type (simple consumers): each offset
//     retention after its commit;
//   - otherwise none.
func (c *Coordinator) expiredOffsets(g *group) []topicPartition {
	now := c.now.UnixMilli()
	retention := c.cfg.OffsetsRetention.Milliseconds()
	var base func(committed) int64
	keep := func(string) bool { return false }
	switch {
	case g.protocolType != "" && g.is(Empty):
		base = func(cm committed) int64 {
			if g.stateTime.IsZero() {
				return cm.commitTimestamp
			}
			return g.stateTime.UnixMilli()
		}
	case g.protocolType == consumerProtocolType && g.subscribed != nil && g.is(Stable):
		base = func(cm committed) int64 { return cm.commitTimestamp }
		keep = func(topic string) bool { return g.subscribed[topic] }
	case g.protocolType == "":
		base = func(cm committed) int64 { return cm.commitTimestamp }
	default:
		return nil
	}
	var out []topicPartition
	for tp, cm := range g.offsets {
		if keep(tp.topic) {
			continue
		}
		if (cm.expireTimestamp >= 0 && now >= cm.expireTimestamp) ||
			(cm.expireTimestamp < 0 && now-base(cm) >= retention) {
			out = append(out, tp)
		}
	}
	sortTPs(out)
	return out
}
