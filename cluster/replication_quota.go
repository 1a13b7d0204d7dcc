package cluster

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/varve/varve/config"
	"github.com/varve/varve/metadata"
	"github.com/varve/varve/replica"
)

// Replication quotas (KIP-73) on a node: the replica manager holds the
// leader's and the follower's quota (replica/quota.go); the broker sets
// their bounds from leader.replication.throttled.rate and
// follower.replication.throttled.rate (this node's dynamic setting,
// else the cluster default, else unbounded) whenever its dynamic
// configuration changes, and their throttled replicas from each topic's
// leader.replication.throttled.replicas and
// follower.replication.throttled.replicas whenever an image changes the
// topic (Kafka's BrokerConfigHandler and TopicConfigHandler). A leader
// answers a follower of a throttled replica that is not in the ISR with
// no records while its quota is exceeded, and counts the throttled
// partitions' share of every answer to a follower.

const (
	leaderThrottledReplicas   = "leader.replication.throttled.replicas"
	followerThrottledReplicas = "follower.replication.throttled.replicas"
)

var replicationRateProps = []string{"leader.replication.throttled.rate", "follower.replication.throttled.rate"}

// setReplicationRates applies cfg's two rates to the quotas.
func (b *Broker) setReplicationRates(cfg *config.Broker) {
	b.parts.LeaderQuota().SetBound(cfg.LeaderReplicationThrottledRate)
	b.parts.FollowerQuota().SetBound(cfg.FollowerReplicationThrottledRate)
}

// applyThrottledReplicas marks this node's throttled replicas of t.
func (b *Broker) applyThrottledReplicas(t *metadata.Topic) {
	tc := b.topicConfig(t.Name)
	for name, q := range map[string]*replica.ReplicationQuota{
		leaderThrottledReplicas: b.parts.LeaderQuota(), followerThrottledReplicas: b.parts.FollowerQuota(),
	} {
		all, parts := tc.ThrottledReplicas(name, b.nodeID)
		q.MarkThrottled(t.Name, all, parts)
	}
}

// removeThrottledReplicas lifts the throttles of a deleted topic.
func (b *Broker) removeThrottledReplicas(topic string) {
	b.parts.LeaderQuota().RemoveThrottle(topic)
	b.parts.FollowerQuota().RemoveThrottle(topic)
}

// leaderHoldsBack reports whether the leader's quota holds back fp's
// records from follower (Kafka's shouldLeaderThrottle).
func (b *Broker) leaderHoldsBack(fp *fetchPart, follower int32) bool {
	return fp.part != nil && b.parts.LeaderQuota().LeaderThrottles(fp.part, follower)
}

// recordLeaderQuota counts the throttled partitions' share of an answer
// to a follower: the partition fields and records, as encoded, of each
// one that carries records (Kafka's sizeOfThrottledPartitions also
// counts the few dozen bytes of those answered without; an incremental
// answer leaves most of them out).
func (b *Broker) recordLeaderQuota(version int16, topics []fetchTopic) {
	q := b.parts.LeaderQuota()
	var n int64
	var head []byte // one buffer for every head measured
	for ti := range topics {
		for pi := range topics[ti].parts {
			fp := &topics[ti].parts[pi]
			if fp.part == nil || fp.records.Len == 0 || !q.IsThrottled(fp.part.TP) {
				continue
			}
			head = appendFetchPartitionHead(head[:0], version, fp)
			n += int64(len(head)) + fp.records.Len
		}
	}
	q.Record(n)
}

// replicationQuotaCollectors are Kafka's LeaderReplication and
// FollowerReplication byte-rate metrics.
func replicationQuotaCollectors(b *Broker) []prometheus.Collector {
	gauge := func(name, help string, q func() *replica.ReplicationQuota) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			if b.parts == nil {
				return 0
			}
			return q().Rate()
		})
	}
	return []prometheus.Collector{
		gauge("varve_replication_leader_byte_rate", "Bytes a second this node serves to followers of its throttled replicas (Kafka LeaderReplication byte-rate).",
			func() *replica.ReplicationQuota { return b.parts.LeaderQuota() }),
		gauge("varve_replication_follower_byte_rate", "Bytes a second this node fetches for its throttled replicas (Kafka FollowerReplication byte-rate).",
			func() *replica.ReplicationQuota { return b.parts.FollowerQuota() }),
	}
}
