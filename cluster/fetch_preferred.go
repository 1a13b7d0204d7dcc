package cluster

// Fetching from the closest replica (KIP-392).
//
// The leader, asked by a consumer that names its rack (Fetch v11+,
// client.rack), runs the replica selector of replica.selector.class;
// the one Varve has is Kafka's RackAwareReplicaSelector: among the
// leader and its in-sync followers that have the fetch offset, a replica
// in the consumer's rack, the leader itself if it is one, else the most
// caught-up (highest log end, then most recently caught up, then highest
// id). A follower chosen is answered as PreferredReadReplica with no
// records; the consumer then fetches from it. A follower serves such
// consumers up to its own high watermark, with KIP-320's fencing on the
// leader epoch it knows; a consumer of a version before 11 (no
// ClientMetadata in Kafka) gets NOT_LEADER_OR_FOLLOWER there, as
// before.

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/config"
	"github.com/varve/varve/replica"
	"github.com/varve/varve/segment"
)

// readOnFollower serves a consumer's fetch on a follower whose
// replication state is s.
func readOnFollower(fp *fetchPart, s replica.LeaderAndISR, from fetcher, limit int, minOneBatch bool) error {
	if !from.rackAware {
		return kerr.NotLeaderForPartition
	}
	switch current := fp.leaderEpoch; {
	case current >= 0 && current < s.LeaderEpoch:
		return kerr.FencedLeaderEpoch
	case current > s.LeaderEpoch:
		return kerr.UnknownLeaderEpoch
	}
	err := readPartition(fp, from, limit, minOneBatch)
	if errors.Is(err, segment.ErrOffsetOutOfRange) && fp.leaderEpoch < 0 && fp.offset > fp.part.EndOffset() {
		// Kafka (KAFKA-14280): a consumer without a leader epoch may have
		// come here on stale metadata, for an offset the follower does not
		// have yet: an empty answer, not a reset of its position.
		return nil
	}
	return err
}

// preferredReplica is the follower a consumer should read fp from, -1
// when it reads from this leader (Kafka's findPreferredReadReplica with
// RackAwareReplicaSelector).
func (b *Broker) preferredReplica(fp *fetchPart, from fetcher) int32 {
	if b.cfg.ReplicaSelectorClass != config.RackAwareReplicaSelector || !from.rackAware || from.rack == "" {
		return -1
	}
	img := b.meta.image()
	if br, ok := img.Broker(b.nodeID); ok && br.Rack == from.rack {
		return -1 // the leader is in the consumer's rack
	}
	best, found := replica.ReplicaView{}, false
	now := fp.part.NowMs()
	for _, v := range fp.part.InSyncFollowers() {
		br, ok := img.Broker(v.ID)
		if !ok || br.Fenced || br.Rack != from.rack || v.LogEnd < fp.offset || fp.offset < fp.part.StartOffset() {
			continue
		}
		if _, ok := endpointOf(br, b.listenerName()); !ok {
			continue
		}
		if !found || closer(v, best, now) {
			best, found = v, true
		}
	}
	if !found {
		return -1
	}
	return best.ID
}

// closer orders replicas as Kafka's ReplicaView.comparator: higher log
// end, then less time since caught up, then higher id.
func closer(a, b replica.ReplicaView, nowMs int64) bool {
	if a.LogEnd != b.LogEnd {
		return a.LogEnd > b.LogEnd
	}
	if la, lb := nowMs-a.LastCaughtUpMs, nowMs-b.LastCaughtUpMs; la != lb {
		return la < lb
	}
	return a.ID > b.ID
}
