package compaction

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/varve/varve/segment"
)

// Target is one log the Cleaner looks after: a log whose cleanup.policy
// includes compact (the caller lists only those).
type Target struct {
	Log *segment.Log
	// Topic replaces the Config's topic-level settings for this log; nil
	// means the Config's TopicConfig.
	Topic *TopicConfig
	// Retain, if set, is called by a worker after each round, while no
	// pass is cleaning the log, with the log's upper bound and the
	// Cleaner's clock: Kafka's cleaner threads apply retention to the
	// compacted logs after cleaning (LogCleanerManager.deletableLogs),
	// the log-start-offset rule for compact and every rule for
	// compact,delete. This package knows nothing of retention; a broker
	// composes "clean, then delete" by passing retention.Enforce with the
	// log's policy. An error is logged.
	Retain func(l *segment.Log, upperBound int64, now time.Time) error
}

// Cleaner is Kafka's LogCleaner: log.cleaner.threads workers that each,
// in a loop, pick the filthiest compacted log, clean it, and apply
// retention to the compacted logs; when no log needs cleaning a worker
// sleeps log.cleaner.backoff.ms. Reads and writes of all workers share
// one log.cleaner.io.max.bytes.per.second throttle. A log whose cleaning
// failed is left alone for UncleanableRetry, doubled at each further
// failure in a row up to maxRetryDoublings; a log whose retention
// failed is left alone (for retention) for log.cleaner.backoff.ms,
// doubled the same way up to UncleanableRetry. Each failure logs one
// line saying when the next attempt is, so a failing disk or exhausted
// descriptors cost one warning per backoff, not one per round.
type Cleaner struct {
	cfg     Config
	targets func() []Target
	th      *throttler

	mu          sync.Mutex                  // serialises the choice of logs among workers
	uncleanable map[*segment.Log]retryState // REQUIRES mu
	noRetention map[*segment.Log]retryState // REQUIRES mu
	once        struct {
		sync.Mutex
		w *worker // the worker of RunOnce
	}

	run struct {
		sync.Mutex
		cancel context.CancelFunc
		wg     *sync.WaitGroup
	}
}

// NewCleaner checks cfg and returns a Cleaner over the logs targets lists
// (called at every round, so logs may come and go).
func NewCleaner(cfg Config, targets func() []Target) (*Cleaner, error) {
	cfg, err := cfg.checked()
	if err != nil {
		return nil, err
	}
	if targets == nil {
		return nil, fmt.Errorf("%w: cleaner needs a targets function", ErrInvalidConfig)
	}
	return &Cleaner{cfg: cfg, targets: targets, th: newThrottler(cfg.MaxIOBytesPerSecond, nil),
		uncleanable: map[*segment.Log]retryState{}, noRetention: map[*segment.Log]retryState{}}, nil
}

// Start starts the workers; they run until ctx ends or Stop is called.
func (c *Cleaner) Start(ctx context.Context) error {
	c.run.Lock()
	defer c.run.Unlock()
	if c.run.cancel != nil {
		return errors.New("compaction: cleaner already started")
	}
	ctx, cancel := context.WithCancel(ctx)
	wg := &sync.WaitGroup{}
	for range c.cfg.Threads {
		wg.Add(1)
		go func(w *worker) {
			defer wg.Done()
			c.loop(ctx, w)
		}(newWorker(c.cfg, c.th))
	}
	c.run.cancel, c.run.wg = cancel, wg
	return nil
}

// Stop stops the workers and waits for them; a pass in progress stops at
// its next batch and leaves the log as it was. Stop is idempotent.
func (c *Cleaner) Stop() {
	c.run.Lock()
	cancel, wg := c.run.cancel, c.run.wg
	c.run.cancel, c.run.wg = nil, nil
	c.run.Unlock()
	if cancel != nil {
		cancel()
		wg.Wait()
	}
}

// loop is Kafka's CleanerThread.doWork.
func (c *Cleaner) loop(ctx context.Context, w *worker) {
	for ctx.Err() == nil {
		cleaned := c.cleanFilthiest(ctx, w)
		c.retainCompacted(ctx)
		if !cleaned {
			sleepCtx(ctx, c.cfg.Backoff)
		}
	}
}

// RunOnce does one worker round in the caller's goroutine: clean the
// filthiest eligible log, if any, then apply retention to the compacted
// logs. It reports whether a log was cleaned. It is meant for callers
// that drive the cleaner themselves instead of calling Start: its worker
// has an offset map of its own, beside those of the started workers.
func (c *Cleaner) RunOnce(ctx context.Context) bool {
	c.once.Lock()
	defer c.once.Unlock()
	if c.once.w == nil {
		c.once.w = newWorker(c.cfg, c.th)
	}
	cleaned := c.cleanFilthiest(ctx, c.once.w)
	c.retainCompacted(ctx)
	return cleaned
}

// cleanFilthiest cleans the dirtiest eligible log and reports whether
// there was one.
func (c *Cleaner) cleanFilthiest(ctx context.Context, w *worker) bool {
	now := c.cfg.Now()
	ltc, topic, ok := c.grabFilthiest(now)
	if !ok {
		return false
	}
	defer release(ltc.log)
	stats, err := w.cleanExamined(ctx, ltc, topic, now)
	c.afterClean(ctx, ltc.log, stats, err, now)
	return true
}

// grabFilthiest is LogCleanerManager.grabFilthiestCompactedLog: among
// the compacted logs not being cleaned and not uncleanable, the one with
// the highest dirty ratio that is eligible. It acquires the log.
func (c *Cleaner) grabFilthiest(now time.Time) (logToClean, TopicConfig, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var best logToClean
	var bestTopic TopicConfig
	found := false
	for _, t := range c.targets() {
		if c.skip(t.Log, now) {
			continue
		}
		topic, err := c.topicOf(t)
		if err != nil {
			c.cfg.Logger.Error("log left uncleaned: its topic config is invalid", "dir", t.Log.Dir(), "err", err)
			continue
		}
		ltc := examine(t.Log, topic, c.cfg.UpperBound(t.Log), now)
		if ltc.eligible(topic.MinCleanableDirtyRatio) && (!found || ltc.ratio() > best.ratio()) {
			best, bestTopic, found = ltc, topic, true
		}
	}
	if !found || !acquire(best.log) {
		return logToClean{}, TopicConfig{}, false
	}
	return best, bestTopic, true
}

// skip says whether l is being cleaned or is uncleanable for now.
// REQUIRES c.mu.
func (c *Cleaner) skip(l *segment.Log, now time.Time) bool {
	if st, ok := c.uncleanable[l]; ok && now.Before(st.until) {
		return true
	}
	inProgress.Lock()
	defer inProgress.Unlock()
	return inProgress.logs[l]
}

// topicOf is the topic-level configuration t is cleaned with.
func (c *Cleaner) topicOf(t Target) (TopicConfig, error) {
	if t.Topic == nil {
		return c.cfg.TopicConfig, nil
	}
	return *t.Topic, t.Topic.validate()
}

// afterClean logs the pass and marks the log uncleanable on an error
// that another pass would meet again.
func (c *Cleaner) afterClean(ctx context.Context, l *segment.Log, s Stats, err error, now time.Time) {
	switch {
	case err == nil:
		c.mu.Lock()
		delete(c.uncleanable, l)
		c.mu.Unlock()
		if s.Cleaned() {
			c.cfg.Logger.Info("cleaned log", "dir", l.Dir(), "bytes_before", s.BytesRead, "bytes_after", s.BytesWritten,
				"end_offset", s.EndOffset, "duration", s.Duration)
		}
	case errors.Is(err, ErrSegmentsChanged), errors.Is(err, ErrCleaningInProgress), errors.Is(err, segment.ErrClosed), ctx.Err() != nil:
		c.cfg.Logger.Info("cleaning abandoned; the next round starts over", "dir", l.Dir(), "err", err)
	default:
		c.mu.Lock()
		st := c.uncleanable[l].failed(now, c.cfg.UncleanableRetry, c.cfg.UncleanableRetry<<maxRetryDoublings)
		c.uncleanable[l] = st
		c.mu.Unlock()
		c.cfg.Logger.Error("cleaning failed; leaving the log alone for a while", "dir", l.Dir(),
			"retry_after", st.delay, "failures", st.failures, "err", err)
	}
	if c.cfg.OnClean != nil {
		c.cfg.OnClean(l, s, err)
	}
}

// retainCompacted runs each target's Retain on the logs no worker is
// cleaning (LogCleanerManager.deletableLogs, then deleteOldSegments).
func (c *Cleaner) retainCompacted(ctx context.Context) {
	now := c.cfg.Now()
	for _, t := range c.targets() {
		if ctx.Err() != nil {
			return
		}
		if t.Retain == nil || c.retentionBackingOff(t.Log, now) || !acquire(t.Log) {
			continue
		}
		err := t.Retain(t.Log, c.cfg.UpperBound(t.Log), now)
		release(t.Log)
		if err != nil && !errors.Is(err, segment.ErrClosed) {
			c.cfg.Logger.Error("retention of a compacted log failed", "dir", t.Log.Dir(), "err", err)
		}
	}
}

// maxRetryDoublings caps a backoff at 2^maxRetryDoublings times its
// first delay.
const maxRetryDoublings = 4

// retryState is a log's run of failures: the next attempt waits until
// until, and the delay doubles with each failure in a row, up to a cap.
type retryState struct {
	failures int
	delay    time.Duration
	until    time.Time
}

// failed returns the state after one more failure at now.
func (st retryState) failed(now time.Time, first, limit time.Duration) retryState {
	st.failures++
	st.delay = min(max(first, st.delay*2), max(limit, first))
	st.until = now.Add(st.delay)
	return st
}

// retentionBackingOff says whether l's retention waits after failures.
func (c *Cleaner) retentionBackingOff(l *segment.Log, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.noRetention[l]
	return ok && now.Before(st.until)
}

// retentionRecovered forgets l's retention failures and says whether
// there were any.
func (c *Cleaner) retentionRecovered(l *segment.Log) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.noRetention[l]
	delete(c.noRetention, l)
	return ok
}
