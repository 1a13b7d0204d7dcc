package quorum

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/metadata"
)

// LifecycleConfig describes the broker a Lifecycle registers.
type LifecycleConfig struct {
	BrokerID  int32
	ClusterID string
	// Endpoints are the broker's listeners, as other brokers and
	// clients reach them (advertised.listeners).
	Endpoints []metadata.Endpoint
	Rack      string // broker.rack; "" when unset
	// HeartbeatIntervalMs is broker.heartbeat.interval.ms (2000).
	HeartbeatIntervalMs int64
	// MetadataOffset is the offset of the last metadata record the
	// broker has replayed (Node.MetadataOffset).
	MetadataOffset func() int64
	Logger         *slog.Logger
	// PreviousBrokerEpoch is the broker epoch the broker's clean-shutdown
	// markers held at start (KIP-966); nil sends -1, none.
	PreviousBrokerEpoch func() int64
	// ProducerIDFloor is one more than the highest producer id in the
	// broker's logs, sent in every registration (see
	// 62_broker_registration.go); nil sends none.
	ProducerIDFloor func() int64
}

// Lifecycle is a broker's side of its registration, as Kafka's
// BrokerLifecycleManager: it registers with a fresh incarnation id,
// heartbeats every broker.heartbeat.interval.ms with the metadata
// offset it has replayed, registers again when the controller no
// longer knows its epoch, and runs a controlled shutdown on request.
// The broker must lead no partition while Fenced.
//
// One goroutine (started by Start, ended by Stop or by the end of a
// controlled shutdown) sends every request; the accessors are safe for
// concurrent use.
type Lifecycle struct {
	client      *Client
	cfg         LifecycleConfig
	incarnation [16]byte
	log         *slog.Logger

	epoch    atomic.Int64 // -1 until registered
	fenced   atomic.Bool
	shutdown atomic.Bool // a controlled shutdown was asked for

	mu       sync.Mutex
	unfenced chan struct{} // closed when first seen unfenced, after each registration
	done     chan struct{} // closed when the controller lets the broker shut down
	stopc    chan struct{}
	kick     chan struct{} // wakes the loop at once: a controlled shutdown was asked for
	exited   chan struct{}
	stopOnce sync.Once
}

// NewLifecycle returns the lifecycle of a broker; nothing is sent until
// Start.
func NewLifecycle(client *Client, cfg LifecycleConfig) *Lifecycle {
	if cfg.HeartbeatIntervalMs <= 0 {
		cfg.HeartbeatIntervalMs = 2000
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	l := &Lifecycle{client: client, cfg: cfg, log: cfg.Logger.With("broker", cfg.BrokerID),
		unfenced: make(chan struct{}), done: make(chan struct{}), stopc: make(chan struct{}), exited: make(chan struct{}), kick: make(chan struct{}, 1)}
	rand.Read(l.incarnation[:]) // never fails (crypto/rand)
	l.epoch.Store(-1)
	l.fenced.Store(true)
	return l
}

// Start runs the registration and heartbeat loop.
func (l *Lifecycle) Start() { go l.run() }

// Stop stops heartbeating (the controller fences the broker after its
// session times out) and waits for the loop to end.
func (l *Lifecycle) Stop() {
	l.stopOnce.Do(func() { close(l.stopc) })
	<-l.exited
}

// BrokerEpoch is the broker's epoch, -1 before it is registered.
func (l *Lifecycle) BrokerEpoch() int64 { return l.epoch.Load() }

// Fenced reports whether the controller has the broker fenced (or it
// is not registered yet): it must lead nothing.
func (l *Lifecycle) Fenced() bool { return l.fenced.Load() }

// WaitUnfenced returns once the broker is registered and unfenced.
func (l *Lifecycle) WaitUnfenced(ctx context.Context) error {
	l.mu.Lock()
	ch := l.unfenced
	l.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ControlledShutdown asks the controller to move the broker's
// leaderships away, by heartbeating WantShutDown, and returns once the
// controller answers ShouldShutDown, or with ctx's error when ctx ends
// first (Kafka bounds the wait the same way, then shuts down anyway).
// The loop stops heartbeating when it returns nil.
func (l *Lifecycle) ControlledShutdown(ctx context.Context) error {
	l.shutdown.Store(true)
	select { // the next heartbeat asks now, not an interval from now
	case l.kick <- struct{}{}:
	default:
	}
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *Lifecycle) run() {
	defer close(l.exited)
	interval := time.Duration(l.cfg.HeartbeatIntervalMs) * time.Millisecond
	for {
		if l.epoch.Load() < 0 {
			l.register(interval)
		} else if l.heartbeat(interval) {
			close(l.done)
			return
		}
		wait := interval
		if l.epoch.Load() < 0 || l.shutdown.Load() {
			wait = interval / 4 // Kafka heartbeats at once while it waits to shut down
		}
		select {
		case <-l.stopc:
			return
		case <-l.kick:
		case <-time.After(wait):
		}
	}
}

// register sends a BrokerRegistration; on success the broker has an
// epoch and is fenced until its heartbeats show it caught up.
func (l *Lifecycle) register(timeout time.Duration) {
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.BrokerID, req.ClusterID, req.IncarnationID = l.cfg.BrokerID, l.cfg.ClusterID, l.incarnation
	req.PreviousBrokerEpoch = -1
	if l.cfg.PreviousBrokerEpoch != nil {
		req.PreviousBrokerEpoch = l.cfg.PreviousBrokerEpoch()
	}
	if l.cfg.ProducerIDFloor != nil {
		if floor := l.cfg.ProducerIDFloor(); floor > 0 {
			setProducerIDFloor(req, floor)
		}
	}
	if l.cfg.Rack != "" {
		req.Rack = &l.cfg.Rack
	}
	for _, e := range l.cfg.Endpoints {
		le := kmsg.NewBrokerRegistrationRequestListener()
		le.Name, le.Host, le.Port, le.SecurityProtocol = e.Listener, e.Host, uint16(e.Port), securityProtocolID(e.SecurityProtocol)
		req.Listeners = append(req.Listeners, le)
	}
	ctx, cancel := l.requestContext(timeout)
	defer cancel()
	kresp, err := l.client.Do(ctx, req)
	if err != nil {
		l.log.Debug("registration failed", "err", err)
		return
	}
	resp := kresp.(*kmsg.BrokerRegistrationResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		l.log.Warn("registration refused", "err", err)
		return
	}
	l.epoch.Store(resp.BrokerEpoch)
	l.log.Info("broker registered", "epoch", resp.BrokerEpoch)
}

// heartbeat sends one heartbeat and reports whether the controller lets
// the broker shut down.
func (l *Lifecycle) heartbeat(timeout time.Duration) bool {
	req := kmsg.NewPtrBrokerHeartbeatRequest()
	req.BrokerID, req.BrokerEpoch = l.cfg.BrokerID, l.epoch.Load()
	req.CurrentMetadataOffset = l.cfg.MetadataOffset()
	req.WantShutdown = l.shutdown.Load()
	ctx, cancel := l.requestContext(timeout)
	defer cancel()
	kresp, err := l.client.Do(ctx, req)
	if err != nil {
		l.log.Debug("heartbeat failed", "err", err)
		return false
	}
	resp := kresp.(*kmsg.BrokerHeartbeatResponse)
	switch err := kerr.ErrorForCode(resp.ErrorCode); {
	case errors.Is(err, kerr.StaleBrokerEpoch), errors.Is(err, kerr.BrokerIDNotRegistered):
		l.log.Warn("registration lost, registering again", "err", err)
		l.reset()
		return false
	case err != nil:
		l.log.Debug("heartbeat refused", "err", err)
		return false
	}
	l.setFenced(resp.IsFenced)
	return resp.ShouldShutdown
}

// requestContext bounds one request by the heartbeat interval, and
// ends when the lifecycle stops.
func (l *Lifecycle) requestContext(d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	go func() {
		select {
		case <-l.stopc:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

func (l *Lifecycle) setFenced(fenced bool) {
	was := l.fenced.Swap(fenced)
	if was && !fenced {
		l.mu.Lock()
		select {
		case <-l.unfenced:
		default:
			close(l.unfenced)
		}
		l.mu.Unlock()
		l.log.Info("broker unfenced", "epoch", l.epoch.Load())
	}
	if !was && fenced {
		l.log.Warn("broker fenced", "epoch", l.epoch.Load())
	}
}

// reset forgets the registration: the next round registers again.
func (l *Lifecycle) reset() {
	l.epoch.Store(-1)
	l.fenced.Store(true)
	l.mu.Lock()
	select {
	case <-l.unfenced:
		l.unfenced = make(chan struct{})
	default:
	}
	l.mu.Unlock()
}
