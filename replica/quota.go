package replica

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/varve/varve/internal/rate"
	"github.com/varve/varve/segment"
)

// Replication quotas (KIP-73, Kafka's ReplicationQuotaManager). A node
// has two: the leader's bounds the bytes it serves to followers of the
// replicas listed in their topic's leader.replication.throttled.replicas,
// at leader.replication.throttled.rate; the follower's bounds the bytes
// it fetches for the replicas of follower.replication.throttled.replicas,
// at follower.replication.throttled.rate. The bytes of every throttled
// replica are measured (in sync or not, so that the total stays under
// the bound), as one SimpleRate over replication.quota.window.num
// samples of replication.quota.window.size.seconds. Only replicas that
// are not in sync are held back, to avoid ISR thrashing: once the rate
// is over the bound, a leader answers such a follower's fetch with no
// records (its fetch state still advances), and a follower leaves such
// a partition out of its fetch. Neither answers with a throttle time.

// Unbounded is a quota's bound when none is set: Kafka's default rate,
// Long.MAX_VALUE bytes a second.
const Unbounded = math.MaxInt64

// QuotaConfig sizes a replication quota's samples: Kafka's
// replication.quota.window.num and replication.quota.window.size.seconds.
// Zero values take Kafka's 11 and 1 s.
type QuotaConfig struct {
	Samples int
	Window  time.Duration
	// Now is the quota's clock; nil is the wall clock.
	Now func() time.Time
}

// ReplicationQuota is one of a node's two replication quotas. Safe for
// concurrent use: fetches on any goroutine record and check it.
type ReplicationQuota struct {
	now   func() time.Time
	cfg   QuotaConfig
	bound atomic.Int64
	// throttled maps a topic to its throttled partitions on this node
	// (nil: all of them); replaced whole on each change.
	throttled atomic.Pointer[map[string][]int32]
	tmu       sync.Mutex // serialises changes of throttled

	mu sync.Mutex
	// sensor is made at the first record, as Kafka's SampledStat makes
	// its first sample then: a rate measured from the quota's creation
	// would spread a first burst over the idle time before it. REQUIRES mu.
	sensor *rate.Sensor
}

// NewReplicationQuota returns an unbounded quota with no throttled
// replica.
func NewReplicationQuota(c QuotaConfig) *ReplicationQuota {
	if c.Samples <= 0 {
		c.Samples = 11
	}
	if c.Window <= 0 {
		c.Window = time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	q := &ReplicationQuota{now: c.Now, cfg: c}
	q.bound.Store(Unbounded)
	q.throttled.Store(&map[string][]int32{})
	return q
}

// SetBound sets the bound in bytes a second (Kafka's updateQuota);
// Unbounded lifts it.
func (q *ReplicationQuota) SetBound(bytesPerSecond int64) { q.bound.Store(max(bytesPerSecond, 0)) }

// Bound is the bound in bytes a second (Kafka's upperBound).
func (q *ReplicationQuota) Bound() int64 { return q.bound.Load() }

// Record adds n bytes to the rate, whether or not it is exceeded.
func (q *ReplicationQuota) Record(n int64) {
	if q == nil || n <= 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	if q.sensor == nil {
		q.sensor = rate.New(q.cfg.Samples, q.cfg.Window, now)
	}
	q.sensor.Record(float64(n), now)
}

// Rate is the measured rate in bytes a second.
func (q *ReplicationQuota) Rate() float64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.sensor == nil {
		return 0
	}
	r, _ := q.sensor.SimpleRate(q.now())
	return r
}

// Exceeded reports whether the measured rate is above the bound
// (Kafka's isQuotaExceeded: a rate equal to the bound is within it).
func (q *ReplicationQuota) Exceeded() bool {
	if q == nil {
		return false
	}
	b := q.Bound()
	if b == Unbounded {
		return false
	}
	return q.Rate() > float64(b)
}

// MarkThrottled throttles this node's replicas of topic: every one when
// all, else those of the partitions listed (Kafka's markThrottled); an
// empty list removes the topic's throttle (removeThrottle).
func (q *ReplicationQuota) MarkThrottled(topic string, all bool, partitions []int32) {
	if !all && len(partitions) == 0 {
		q.RemoveThrottle(topic)
		return
	}
	var parts []int32
	if !all {
		parts = append(make([]int32, 0, len(partitions)), partitions...)
	}
	q.change(func(m map[string][]int32) { m[topic] = parts })
}

// RemoveThrottle lifts the throttle of every replica of topic.
func (q *ReplicationQuota) RemoveThrottle(topic string) {
	if _, ok := (*q.throttled.Load())[topic]; !ok {
		return
	}
	q.change(func(m map[string][]int32) { delete(m, topic) })
}

func (q *ReplicationQuota) change(f func(map[string][]int32)) {
	q.tmu.Lock()
	defer q.tmu.Unlock()
	cur := *q.throttled.Load()
	next := make(map[string][]int32, len(cur)+1)
	for k, v := range cur {
		next[k] = v
	}
	f(next)
	q.throttled.Store(&next)
}

// IsThrottled reports whether this node's replica of tp is throttled
// (Kafka's isThrottled).
func (q *ReplicationQuota) IsThrottled(tp segment.TopicPartition) bool {
	if q == nil {
		return false
	}
	parts, ok := (*q.throttled.Load())[tp.Topic]
	if !ok {
		return false
	}
	if parts == nil {
		return true
	}
	for _, p := range parts {
		if p == tp.Partition {
			return true
		}
	}
	return false
}

// holdBack is Kafka's shouldLeaderThrottle and shouldFollowerThrottle:
// a replica that is not in sync, throttled, while the quota is
// exceeded.
func (q *ReplicationQuota) holdBack(tp segment.TopicPartition, inSync bool) bool {
	return !inSync && q.IsThrottled(tp) && q.Exceeded()
}

// LeaderThrottles reports whether the leader q belongs to holds back
// the records of p for follower replicaID (Kafka's
// ReplicaManager.shouldLeaderThrottle): the follower is not in the ISR,
// its replica is throttled and the quota is exceeded.
func (q *ReplicationQuota) LeaderThrottles(p *Partition, replicaID int32) bool {
	if q == nil || !q.IsThrottled(p.TP) {
		return false
	}
	return q.holdBack(p.TP, p.InISR(replicaID))
}
