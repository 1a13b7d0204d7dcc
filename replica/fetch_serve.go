package replica

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ServeReplicaFetch answers a follower's fetch from this node's logs,
// with the records copied: what a LeaderEndpoint inside one process
// calls (the broker serves the same fetch from file regions through
// Partition.ReadForFollower). It waits up to req.MaxWait for
// req.MinBytes, as the leader's DelayedFetch does, and answers at once
// on an error or a diverging epoch. It keeps no fetch sessions: every
// answer is a full one, which a follower's session handler takes as
// "no session" (Kafka allows a broker to decline them).
func (m *Manager) ServeReplicaFetch(ctx context.Context, req ReplicaFetch) []ReplicaFetchResult {
	deadline := time.Now().Add(req.MaxWait)
	for {
		wait, cancel := m.anyEvent(req)
		out, n, urgent := m.readReplicaFetch(req)
		if urgent || n >= int64(req.MinBytes) || !time.Now().Before(deadline) {
			cancel()
			m.recordLeaderQuota(out)
			return out
		}
		select {
		case <-ctx.Done():
		case <-wait:
		case <-time.After(time.Until(deadline)):
		}
		cancel()
		if ctx.Err() != nil {
			m.recordLeaderQuota(out)
			return out
		}
	}
}

// anyEvent is closed at the next event on one of the fetch's
// partitions; cancel ends its watchers.
func (m *Manager) anyEvent(req ReplicaFetch) (<-chan struct{}, func()) {
	done := make(chan struct{})
	var waits []<-chan struct{}
	for _, rp := range req.Partitions {
		if p, ok := m.Partition(rp.TP); ok {
			waits = append(waits, p.Wait())
		}
	}
	if len(waits) == 0 {
		close(done)
		return done, func() {}
	}
	stop := make(chan struct{})
	var once sync.Once
	for _, w := range waits {
		go func() {
			select {
			case <-w:
				once.Do(func() { close(done) })
			case <-stop:
			}
		}()
	}
	return done, func() { close(stop) }
}

// readReplicaFetch reads every partition of a follower's fetch; urgent
// says one answered with an error or a diverging epoch.
func (m *Manager) readReplicaFetch(req ReplicaFetch) (out []ReplicaFetchResult, total int64, urgent bool) {
	budget := int64(req.MaxBytes)
	for _, rp := range req.Partitions {
		r := m.readReplicaPartition(req.ReplicaID, rp, int(min(int64(rp.MaxBytes), max(budget, 0))), total == 0)
		urgent = urgent || r.Err != nil || r.Diverging != nil
		total += int64(len(r.Records))
		budget -= int64(len(r.Records))
		out = append(out, r)
	}
	return out, total, urgent
}

func (m *Manager) readReplicaPartition(replicaID int32, rp ReplicaFetchPartition, maxBytes int, first bool) ReplicaFetchResult {
	res := ReplicaFetchResult{TP: rp.TP}
	p, ok := m.Partition(rp.TP)
	if !ok {
		res.Err = fmt.Errorf("%w: %s", kerr.UnknownTopicOrPartition, rp.TP)
		return res
	}
	d, region, err := p.ReadForFollower(FetchRequest{ReplicaID: replicaID, FetchOffset: rp.FetchOffset,
		LastFetchedEpoch: rp.LastFetchedEpoch, CurrentLeaderEpoch: rp.CurrentLeaderEpoch}, maxBytes, first)
	res.HighWatermark, res.LogStartOffset, res.Diverging, res.Err = d.HighWatermark, d.LogStartOffset, d.Diverging, err
	if err == nil && region.Len > 0 && !m.leaderQuota.LeaderThrottles(p, replicaID) {
		res.Records, res.Err = region.Bytes()
	}
	return res
}

// recordLeaderQuota counts the records answered for throttled replicas
// towards the leader's replication quota (Kafka's KafkaApis records the
// throttled partitions' share of every answer to a follower).
func (m *Manager) recordLeaderQuota(out []ReplicaFetchResult) {
	var n int64
	for _, r := range out {
		if m.leaderQuota.IsThrottled(r.TP) {
			n += int64(len(r.Records))
		}
	}
	m.leaderQuota.Record(n)
}
