package cluster

import (
	"sync"
	"time"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
)

// clientMutationQuotas are the controller_mutation_rate quotas of
// KIP-599 per (user, client id): a token bucket of partitions created or
// deleted per second for each sensor the client quota entities resolve
// to, in the order and with the sensors of the other client quotas
// (resolveQuota), with controller.quota.window.num ×
// controller.quota.window.size.seconds of burst. A request is checked
// against its client's bucket and against the node's own bound
// (varve.controller.mutation.rate), and must pass both.
//
// A bucket whose rate changes is replaced by a full one; buckets unused
// for an hour are dropped (Kafka's inactive sensor expiration), so that
// clients inventing client ids cannot grow the map without bound. Safe
// for concurrent use.
type clientMutationQuotas struct {
	windows    int
	windowSize time.Duration
	now        func() time.Time

	mu         sync.Mutex
	buckets    map[quotaSensorKey]*mutationQuota // REQUIRES mu
	lastPurged time.Time                         // REQUIRES mu
}

func newClientMutationQuotas(windows int, windowSize time.Duration, now func() time.Time) *clientMutationQuotas {
	return &clientMutationQuotas{windows: max(windows, 1), windowSize: max(windowSize, time.Millisecond), now: now,
		buckets: map[quotaSensorKey]*mutationQuota{}, lastPurged: now()}
}

// bucket is the client's bucket, nil when no controller_mutation_rate
// applies to it. user is asked for only when some quota exists.
func (m *clientMutationQuotas) bucket(img *metadata.Image, user func() string, clientID string) *mutationQuota {
	if m == nil || img == nil || !img.HasClientQuotas() {
		return nil
	}
	rate, key, ok := resolveQuota(img, controller.QuotaControllerMutationRate, user(), clientID)
	if !ok || !(rate > 0) {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.purgeLocked(now)
	q := m.buckets[key]
	if q == nil || q.rate != rate {
		q = newMutationQuota(rate, m.windows, m.windowSize, m.now)
		m.buckets[key] = q
	}
	return q
}

// purgeLocked drops buckets unused for sensorExpiry, at most once a
// minute. REQUIRES m.mu.
func (m *clientMutationQuotas) purgeLocked(now time.Time) {
	if now.Sub(m.lastPurged) < time.Minute {
		return
	}
	m.lastPurged = now
	for k, q := range m.buckets {
		if now.Sub(q.lastUsed()) > sensorExpiry {
			delete(m.buckets, k)
		}
	}
}

// mutationCheck is the quota check of a request's creations and
// deletions: its client's bucket and the node's. strict: the request's
// version can carry THROTTLING_QUOTA_EXCEEDED.
func (b *Broker) mutationCheck(r *vnet.Request, strict bool) quotaCheck {
	return quotaCheck{q: b.quota, client: b.mutationQuotas.bucket(b.meta.image(), b.quotaUserOf(r), r.ClientID), strict: strict}
}
