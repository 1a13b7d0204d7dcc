package cluster

import (
	"math"
	"sync"
	"time"

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
// A sensor is Kafka's Rate over a SampledStat: quota.window.num samples
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
	sensors    map[quotaSensorKey]*rateSensor // REQUIRES mu
	lastPurged time.Time                      // REQUIRES mu
}

// quotaSensorKey is the (user, client id) pair a sensor measures.
type quotaSensorKey struct{ user, clientID string }

// sensorExpiry is how long an unused sensor is kept (Kafka's
// ClientQuotaManager.InactiveSensorExpirationTimeSeconds).
const sensorExpiry = time.Hour

func newClientQuotaManager(key string, samples int, window time.Duration, now func() time.Time) *clientQuotaManager {
	return &clientQuotaManager{key: key, samples: max(samples, 1), window: max(window, time.Millisecond), now: now,
		sensors: map[quotaSensorKey]*rateSensor{}, lastPurged: now()}
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
		s = newRateSensor(m.samples, m.window, now)
		m.sensors[key] = s
	}
	s.record(value, now)
	rate, span := s.rate(now)
	if rate <= bound {
		return 0
	}
	d := time.Duration((rate - bound) / bound * float64(span))
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
		if now.Sub(s.lastRecord) > sensorExpiry {
			delete(m.sensors, k)
		}
	}
}

// rateSensor is Kafka's Rate over a SampledStat: a ring of samples, each
// the total recorded in one window.
type rateSensor struct {
	window     time.Duration
	samples    []rateSample
	current    int
	lastRecord time.Time
}

type rateSample struct {
	start time.Time
	value float64
}

func newRateSensor(n int, window time.Duration, now time.Time) *rateSensor {
	s := &rateSensor{window: window, samples: make([]rateSample, n), lastRecord: now}
	for i := range s.samples {
		s.samples[i].start = now
	}
	return s
}

// record adds v to the current sample, first moving to the next sample
// when the current one's window is over (Kafka's SampledStat.record).
func (s *rateSensor) record(v float64, now time.Time) {
	s.purge(now)
	if now.Sub(s.samples[s.current].start) >= s.window {
		s.current = (s.current + 1) % len(s.samples)
		s.samples[s.current] = rateSample{start: now}
	}
	s.samples[s.current].value += v
	s.lastRecord = now
}

// purge resets samples older than the whole window (Kafka's
// purgeObsoleteSamples).
func (s *rateSensor) purge(now time.Time) {
	expire := time.Duration(len(s.samples)) * s.window
	for i := range s.samples {
		if now.Sub(s.samples[i].start) >= expire {
			s.samples[i] = rateSample{start: now}
		}
	}
}

// rate is the total per second over the time the samples cover, and
// that time (Kafka's Rate.measure and Rate.windowSize).
func (s *rateSensor) rate(now time.Time) (float64, time.Duration) {
	s.purge(now)
	total, oldest := 0.0, now
	for _, x := range s.samples {
		total += x.value
		if x.start.Before(oldest) {
			oldest = x.start
		}
	}
	span := now.Sub(oldest)
	full := int(span / s.window)
	if minFull := len(s.samples) - 1; full < minFull {
		span += time.Duration(minFull-full) * s.window
	}
	if span <= 0 {
		return math.Inf(1), s.window
	}
	return total / span.Seconds(), span
}
