package replica

import "github.com/varve/varve/segment"

// The follower's side of the replication quota (quota.go), Kafka's
// RemoteLeaderEndPoint.shouldFollowerThrottle and
// ReplicaFetcherThread.processPartitionData: a throttled partition that
// is not in sync is left out of the fetch while the follower quota is
// exceeded, and every throttled partition's records count towards it.
// In sync here is the fetcher's own view, Kafka's
// PartitionFetchState.isReplicaInSync: the last answer with records
// brought the replica up to the leader's high watermark.

// fetchLag is how far a partition was behind its leader's high
// watermark, in the leader epoch it was measured under.
type fetchLag struct {
	epoch int32
	lag   int64
}

// followerHoldsBack reports whether f leaves tp, followed under leader
// epoch epoch, out of its next fetch.
func (b *background) followerHoldsBack(f *fetcher, tp segment.TopicPartition, epoch int32) bool {
	l, known := f.lag[tp]
	inSync := known && l.epoch == epoch && l.lag <= 0
	return b.m.followerQuota.holdBack(tp, inSync)
}

// accountFetched records a throttled partition's fetched bytes and
// notes how far p is behind the leader's high watermark once the
// answer to asked is applied (err nil).
func (b *background) accountFetched(f *fetcher, p *Partition, asked FetchRequest, resp FetchResponse, err error) {
	q := b.m.followerQuota
	if q.IsThrottled(p.TP) {
		q.Record(int64(len(resp.Records)))
	}
	if err != nil || resp.Err != nil || resp.Diverging != nil {
		return
	}
	if f.lag == nil {
		f.lag = map[segment.TopicPartition]fetchLag{}
	}
	if l, known := f.lag[p.TP]; known && l.epoch == asked.CurrentLeaderEpoch && len(resp.Records) == 0 {
		return // Kafka updates the lag only when records came, or it was unknown
	}
	f.lag[p.TP] = fetchLag{epoch: asked.CurrentLeaderEpoch, lag: max(resp.HighWatermark-p.EndOffset(), 0)}
}

// pruneLag forgets the lag of partitions f no longer follows.
func (f *fetcher) pruneLag(followed []*Partition) {
	if len(f.lag) <= len(followed) {
		return
	}
	keep := make(map[segment.TopicPartition]fetchLag, len(followed))
	for _, p := range followed {
		if l, ok := f.lag[p.TP]; ok {
			keep[p.TP] = l
		}
	}
	f.lag = keep
}
