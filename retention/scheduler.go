package retention

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/varve/varve/segment"
)

// SchedulerConfig configures a Scheduler. Zero fields take the defaults
// named on each.
type SchedulerConfig struct {
	// CheckInterval is log.retention.check.interval.ms: how often every
	// log is checked. Default 300 s.
	CheckInterval time.Duration
	// InitialDelay is the wait before the first check. Default 30 s, as
	// Kafka's LogManager; negative means check at once.
	InitialDelay time.Duration
	// Logs lists the logs to check; it is called at every check, so logs
	// may come and go. Required.
	Logs func() []*segment.Log
	// Policy gives a log's retention policy. nil means DefaultPolicy
	// (delete, 7 days, no size limit) for every log.
	Policy func(*segment.Log) Policy
	// UpperBound gives the offset no deletion may reach (a broker passes
	// the high watermark). nil means the log end offset.
	UpperBound func(*segment.Log) int64
	// IncludeCompacted makes the scheduler also handle logs whose policy
	// includes compact. Kafka leaves those to the log cleaner's threads
	// (compaction.Cleaner does the same); set this when no Cleaner runs.
	IncludeCompacted bool
	// Now is the clock that judges retention.ms. nil means time.Now.
	Now func() time.Time
	// Logger receives errors; nil means slog.Default().
	Logger *slog.Logger
	// OnResult, if set, is called after each log's check, from the
	// scheduler's goroutine.
	OnResult func(l *segment.Log, r Result, err error)
}

// Scheduler runs Enforce over many logs every CheckInterval, as Kafka's
// kafka-log-retention task does. It runs one goroutine between Start
// and Stop.
type Scheduler struct {
	cfg SchedulerConfig

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// NewScheduler checks cfg and fills in its defaults.
func NewScheduler(cfg SchedulerConfig) (*Scheduler, error) {
	if cfg.Logs == nil {
		return nil, fmt.Errorf("%w: scheduler needs a Logs function", ErrInvalidPolicy)
	}
	if cfg.CheckInterval < 0 {
		return nil, fmt.Errorf("%w: log.retention.check.interval.ms=%v must not be negative", ErrInvalidPolicy, cfg.CheckInterval)
	}
	if cfg.CheckInterval == 0 {
		cfg.CheckInterval = DefaultCheckInterval
	}
	if cfg.InitialDelay == 0 {
		cfg.InitialDelay = DefaultInitialDelay
	}
	if cfg.Policy == nil {
		cfg.Policy = func(*segment.Log) Policy { return DefaultPolicy() }
	}
	if cfg.UpperBound == nil {
		cfg.UpperBound = (*segment.Log).EndOffset
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Scheduler{cfg: cfg}, nil
}

// Start starts the scheduler's goroutine; it runs until ctx ends or Stop
// is called. Starting a running scheduler is an error.
func (s *Scheduler) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done != nil {
		return errors.New("retention: scheduler already started")
	}
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan struct{})
	go s.loop(ctx, s.done)
	return nil
}

// Stop stops the goroutine and waits for it, including a check in
// progress (which finishes the log it is on). Stop is idempotent.
func (s *Scheduler) Stop() {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.cancel, s.done = nil, nil
	s.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

func (s *Scheduler) loop(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTimer(max(s.cfg.InitialDelay, 0))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.RunOnce(ctx)
			t.Reset(s.cfg.CheckInterval)
		}
	}
}

// RunOnce checks every log now, in the caller's goroutine (Kafka's
// LogManager.cleanupLogs), and returns the total number of segments
// removed. It stops early when ctx ends.
func (s *Scheduler) RunOnce(ctx context.Context) int {
	total := 0
	for _, l := range s.cfg.Logs() {
		if ctx.Err() != nil {
			break
		}
		p := s.cfg.Policy(l)
		if p.CleanupPolicy.Compact() && !s.cfg.IncludeCompacted {
			continue
		}
		r, err := Enforce(l, p, s.cfg.UpperBound(l), s.cfg.Now())
		total += len(r.Deleted)
		s.report(l, r, err)
	}
	return total
}

func (s *Scheduler) report(l *segment.Log, r Result, err error) {
	switch {
	case errors.Is(err, segment.ErrClosed):
		// A log closed while the check ran: nothing to do.
	case err != nil:
		s.cfg.Logger.Error("retention check failed", "dir", l.Dir(), "err", err)
	case len(r.Deleted) > 0:
		s.cfg.Logger.Info("deleted segments by retention", "dir", l.Dir(),
			"segments", len(r.Deleted), "bytes", r.Bytes, "log_start_offset", r.StartOffset)
	}
	if s.cfg.OnResult != nil {
		s.cfg.OnResult(l, r, err)
	}
}
