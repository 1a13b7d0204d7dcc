package cluster

import (
	"sync"
	"time"

	"github.com/varve/varve/internal/rate"
	"github.com/varve/varve/metadata"
)

// Client quotas (KIP-13, KIP-55, KIP-124): each client's produce bytes,
// fetch bytes and request handler time are measured as a rate, per
// (user, client id), and a client over its quota is throttled (KIP-219:
// answered at once with throttle_time_ms, then its connection is not
// read until that time has passed).
//
// Which quota applies is Kafka's DefaultQuotaCallback: for user u and
// client id c, the first of these entities with a value for the quota's
// key, and the sensor the request is measured in (one per distinct
// pair; a default entity gives every user or client id its own):
//
//	user=u, client-id=c                      sensor (u, c)
//	user=u, client-id=<default>              sensor (u, c)
//	user=u                                   sensor (u, "")
//	user=<default>, client-id=c              sensor (u, c)
//	user=<default>, client-id=<default>      sensor (u, c)
//	user=<default>                           sensor (u, "")
//	client-id=c                              sensor ("", c)
//	client-id=<default>                      sensor ("", c)
//
// Without any, the client is not limited and nothing is measured.
//
// A sensor (internal/rate) is Kafka's Rate over a SampledStat: quota.window.num samples
// of quota.window.size.seconds each; the rate is the samples' total over
// the time they cover, at least (samples-1) whole windows so that a new
// sensor does not see a burst as a huge rate. A value is recorded first
// and the rate checked after (Kafka's Sensor.record with quota checks):
// over the bound B at rate R, the throttle time is (R-B)/B times the
// measured window (QuotaUtils.throttleTime), which is how long the client
// must stay silent for its rate to come back to B. Varve bounds it by the
// whole quota window, so that one huge request cannot mute a client for
// longer than the rate remembers it.
//
// Sensors unused for an hour are dropped (Kafka's inactive sensor
// expiration), so that clients inventing client ids cannot grow the map
// without bound. Safe for concurrent use.
type clientQuotaManager struct {
	key     string // producer_byte_rate, consumer_byte_rate or request_percentage
	samples int
	window  time.Duration
	now     func() time.Time

	mu         sync.Mutex
	sensors    map[quotaSensorKey]*rate.Sensor // REQUIRES mu
	lastPurged time.Time                       // REQUIRES mu
}

// quotaSensorKey is the (user, client id) pair a sensor measures.
type quotaSensorKey struct{ user, clientID string }

// sensorExpiry is how long an unused sensor is kept (Kafka's
// ClientQuotaManager.InactiveSensorExpirationTimeSeconds).
const sensorExpiry = time.Hour

func newClientQuotaManager(key string, samples int, window time.Duration, now func() time.Time) *clientQuotaManager {
	return &clientQuotaManager{key: key, samples: max(samples, 1), window: max(window, time.Millisecond), now: now,
		sensors: map[quotaSensorKey]*rate.Sensor{}, lastPurged: now()}
}

// resolveQuota finds the quota for (user, clientID) in img by Kafka's
// order above: the bound, the sensor, and whether any applies.
func resolveQuota(img *metadata.Image, key, user, clientID string) (float64, quotaSensorKey, bool) {
	u, c, du, dc := metadata.Named(user), metadata.Named(clientID), metadata.DefaultEntity(), metadata.DefaultEntity()
	none := metadata.EntityName{}
	both, onlyUser, onlyClient := quotaSensorKey{user, clientID}, quotaSensorKey{user: user}, quotaSensorKey{clientID: clientID}
	for _, cand := range []struct {
		e      metadata.QuotaEntity
		sensor quotaSensorKey
	}{
		{metadata.QuotaEntity{User: u, ClientID: c}, both},
		{metadata.QuotaEntity{User: u, ClientID: dc}, both},
		{metadata.QuotaEntity{User: u, ClientID: none}, onlyUser},
		{metadata.QuotaEntity{User: du, ClientID: c}, both},
		{metadata.QuotaEntity{User: du, ClientID: dc}, both},
		{metadata.QuotaEntity{User: du, ClientID: none}, onlyUser},
		{metadata.QuotaEntity{ClientID: c}, onlyClient},
		{metadata.QuotaEntity{ClientID: dc}, onlyClient},
	} {
		if v, ok := img.ClientQuotas(cand.e)[key]; ok {
			return v, cand.sensor, true
		}
	}
	return 0, quotaSensorKey{}, false
}

// record adds value to the client's rate and returns how long the
// client is to be throttled: 0 when it is within its quota or has none.
// user is asked for only when some quota exists.
func (m *clientQuotaManager) record(img *metadata.Image, user func() string, clientID string, value float64) time.Duration {
	if m == nil || img == nil || !img.HasClientQuotas() {
		return 0
	}
	bound, key, ok := resolveQuota(img, m.key, user(), clientID)
	if !ok || !(bound > 0) {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.purgeLocked(now)
	s := m.sensors[key]
	if s == nil {
		s = rate.New(m.samples, m.window, now)
		m.sensors[key] = s
	}
	s.Record(value, now)
	r, span := s.Rate(now)
	if r <= bound {
		return 0
	}
	d := time.Duration((r - bound) / bound * float64(span))
	return min(d, time.Duration(m.samples)*m.window)
}

// purgeLocked drops sensors unused for sensorExpiry, at most once a
// minute. REQUIRES m.mu.
func (m *clientQuotaManager) purgeLocked(now time.Time) {
	if now.Sub(m.lastPurged) < time.Minute {
		return
	}
	m.lastPurged = now
	for k, s := range m.sensors {
		if now.Sub(s.LastRecord()) > sensorExpiry {
			delete(m.sensors, k)
		}
	}
}
