package cluster

import (
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// mutationQuota is Kafka's controller mutation quota (KIP-599): a token
// bucket of partitions created or deleted per second, refilled at rate
// up to a burst of rate × controller.quota.window.num ×
// controller.quota.window.size.seconds. A mutation is refused while the
// bucket is below zero; an admitted one may take it below zero (one
// large topic is never refused outright), and the clients then wait for
// the debt to be repaid.
//
// Kafka sets the rate per user and client id (controller_mutation_rate)
// through AlterClientQuotas, with no bound by default: those buckets are
// clientMutationQuotas (quota_mutation.go). Besides them, one bucket
// with the rate of varve.controller.mutation.rate bounds every client
// together, so that no request can make the node create thousands of
// partitions at once. A rate of 0 turns that bound off. Safe for
// concurrent use.
type mutationQuota struct {
	rate  float64 // tokens (partitions) per second
	burst float64
	now   func() time.Time

	mu     sync.Mutex
	tokens float64   // REQUIRES mu
	last   time.Time // REQUIRES mu
}

func newMutationQuota(rate float64, windows int, windowSize time.Duration, now func() time.Time) *mutationQuota {
	if rate <= 0 {
		return nil
	}
	burst := rate * float64(windows) * windowSize.Seconds()
	return &mutationQuota{rate: rate, burst: burst, now: now, tokens: burst, last: now()}
}

// admit takes n tokens. A strict check refuses while the bucket is below
// zero (Kafka's StrictControllerMutationQuota, for requests that can
// carry THROTTLING_QUOTA_EXCEEDED); a permissive one only records
// (Kafka's PermissiveControllerMutationQuota, for older versions).
func (q *mutationQuota) admit(n int32, strict bool) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	q.tokens = min(q.burst, q.tokens+now.Sub(q.last).Seconds()*q.rate)
	q.last = now
	if strict && q.tokens < 0 {
		return false
	}
	q.tokens -= float64(n)
	return true
}

// throttle is how long a client should wait before its next mutation:
// until the bucket is back to zero (Kafka's throttle_time_ms).
func (q *mutationQuota) throttle() time.Duration {
	if q == nil {
		return 0
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.tokens >= 0 {
		return 0
	}
	return time.Duration(-q.tokens / q.rate * float64(time.Second))
}

// lastUsed is when the bucket last admitted or refused a mutation.
func (q *mutationQuota) lastUsed() time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.last
}

// refund gives back n tokens an admission took.
func (q *mutationQuota) refund(n int32) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.tokens = min(q.burst, q.tokens+float64(n))
}

// quotaCheck is the quotas one request's mutations are checked against:
// the node's bucket and its client's (either nil when none applies).
// The zero value admits everything (the broker's own topics).
type quotaCheck struct {
	q, client *mutationQuota
	strict    bool
}

// admit returns THROTTLING_QUOTA_EXCEEDED when n partitions may not be
// created or deleted now: the client's bucket is asked first, and given
// its tokens back when the node's refuses.
func (c quotaCheck) admit(n int32) error {
	if c.client != nil && !c.client.admit(n, c.strict) {
		return kerr.ThrottlingQuotaExceeded
	}
	if c.q != nil && !c.q.admit(n, c.strict) {
		if c.client != nil {
			c.client.refund(n)
		}
		return kerr.ThrottlingQuotaExceeded
	}
	return nil
}

// throttleMs is the throttle time to answer with: the longer wait of the
// two buckets.
func (c quotaCheck) throttleMs() int32 {
	d := max(c.q.throttle(), c.client.throttle())
	return int32(min(d.Milliseconds(), 1<<31-1))
}
