package logdir

import (
	"math"
	"sync"
	"time"

	"github.com/varve/varve/internal/rate"
)

// Kafka's defaults for the throttle of moves between log dirs
// (QuotaConfig).
const (
	// DefaultMoveRate is replica.alter.log.dirs.io.max.bytes.per.second:
	// Long.MAX_VALUE, unlimited.
	DefaultMoveRate = math.MaxInt64
	// DefaultMoveQuotaWindows is alter.log.dirs.replication.quota.window.num.
	DefaultMoveQuotaWindows = 11
	// DefaultMoveQuotaWindowSize is
	// alter.log.dirs.replication.quota.window.size.seconds.
	DefaultMoveQuotaWindowSize = time.Second
)

// Clock is the time a move's throttle measures and waits by. Tests
// give a fake one; nil in Config is the wall clock.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type wallClock struct{}

func (wallClock) Now() time.Time                         { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// moveQuota is Kafka's ReplicationQuotaManager of type ALTER_LOG_DIRS:
// one byte rate shared by every move of the node, measured as Kafka's
// SimpleRate does (ReplicationQuotaManager, for every replication
// quota type) over windows samples of size window each. The copy
// asks before each read whether the rate is above the bound, and
// records what it copied (ReplicaAlterLogDirsThread: isQuotaExceeded,
// then quota.record). It is a pure function of the times it is given.
type moveQuota struct {
	mu      sync.Mutex
	bound   int64 // bytes per second; math.MaxInt64: unlimited
	windows int
	window  time.Duration
	// sensor is made at the first record, as Kafka's SampledStat makes
	// its first sample then: nothing copied yet is a rate of 0.
	sensor  *rate.Sensor
	changed chan struct{} // closed and replaced when the bound changes
}

func newMoveQuota(bound int64, windows int, window time.Duration) *moveQuota {
	return &moveQuota{bound: bound, windows: max(windows, 1), window: window, changed: make(chan struct{})}
}

// setBound changes the rate, at once for copies waiting on the old one.
func (q *moveQuota) setBound(bound int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if bound == q.bound {
		return
	}
	q.bound = bound
	close(q.changed)
	q.changed = make(chan struct{})
}

// limit is the bound and the channel closed at its next change.
func (q *moveQuota) limit() (int64, <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.bound, q.changed
}

func unlimited(bound int64) bool { return bound == math.MaxInt64 }

// kafkaRate is Config.MoveRate as Kafka's value: negative is 0.
func kafkaRate(r int64) int64 { return max(r, 0) }

// SetMoveRate changes replica.alter.log.dirs.io.max.bytes.per.second,
// Kafka's value as given (0: a read only once the measured rate fell
// back to 0; math.MaxInt64: unlimited). Copies under way take it at once, waiting
// ones included.
func (m *Manager) SetMoveRate(bytesPerSecond int64) {
	m.moveQuota.setBound(kafkaRate(bytesPerSecond))
}

// awaitMoveQuota waits while the moves' copy rate is above its bound
// (Kafka's alter-log-dirs thread builds no fetch while its quota is
// exceeded), asking again after each delay and at once when the bound
// changes.
func (m *Manager) awaitMoveQuota(mv *move) error {
	for {
		_, changed := m.moveQuota.limit()
		d := m.moveQuota.delay(m.cfg.Clock.Now())
		if d <= 0 {
			return nil
		}
		select {
		case <-m.cfg.Clock.After(d):
		case <-changed:
		case <-mv.cancel:
			return errMoveStopped
		case <-m.stop:
			return errMoveStopped
		}
	}
}

// record adds n bytes at now (Kafka's SampledStat.record).
func (q *moveQuota) record(n int64, now time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.sensor == nil {
		q.sensor = rate.New(q.windows, q.window, now)
	}
	q.sensor.Record(float64(n), now)
}

// rate is the measured bytes per second at now (Kafka's
// SimpleRate.measure).
func (q *moveQuota) rate(now time.Time) float64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	r, _ := q.rateLocked(now)
	return r
}

// rateLocked is the rate at now and the time it is measured over
// (Kafka's Rate.windowSize). REQUIRES q.mu.
func (q *moveQuota) rateLocked(now time.Time) (float64, time.Duration) {
	if q.sensor == nil {
		return 0, 0
	}
	return q.sensor.SimpleRate(now)
}

// delay is how long a copy waits at now before it reads again: zero
// while the rate is within the bound, else the time the measured rate
// takes to fall back to it (Kafka's QuotaUtils.throttleTime), at most one
// window, after which the copy asks again.
func (q *moveQuota) delay(now time.Time) time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	if unlimited(q.bound) {
		return 0
	}
	r, span := q.rateLocked(now)
	b := float64(q.bound)
	if r <= b {
		return 0
	}
	if b <= 0 || math.IsInf(r, 1) {
		return q.window
	}
	d := time.Duration((r - b) / b * float64(span))
	return min(max(d, time.Millisecond), q.window)
}

// chunk is how many bytes one read of a copy takes: moveChunk, or less
// under a low bound, so that a throttled copy goes in steps smaller than
// a second of its rate (and never less than minThrottledChunk).
func (q *moveQuota) chunk() int {
	b, _ := q.limit()
	if unlimited(b) {
		return moveChunk
	}
	return int(min(max(b, minThrottledChunk), moveChunk))
}

const minThrottledChunk = 16 << 10
