package segment

import (
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/varve/varve/index"
	"github.com/varve/varve/record"
)

// Kafka's topic-level defaults (LogConfig / ServerLogConfigs).
const (
	DefaultSegmentBytes       = 1 << 30            // segment.bytes
	DefaultSegmentMs          = 7 * 24 * time.Hour // segment.ms
	DefaultIndexIntervalBytes = 4096               // index.interval.bytes
	DefaultSegmentIndexBytes  = index.DefaultMaxIndexSize
	DefaultMaxMessageBytes    = 1048588          // max.message.bytes
	DefaultFileDeleteDelay    = 60 * time.Second // file.delete.delay.ms
	// DefaultProducerIDExpiration is producer.id.expiration.ms.
	DefaultProducerIDExpiration = 24 * time.Hour
	// FlushNever, as FlushMs, turns time-based flushing off: Kafka's
	// default flush.ms, Long.MAX_VALUE milliseconds, past what a
	// time.Duration holds.
	FlushNever = time.Duration(math.MaxInt64)
	// DefaultFlushMessages is flush.messages's default, Long.MAX_VALUE:
	// never flush by count.
	DefaultFlushMessages = math.MaxInt64
	// minSegmentBytes is Kafka's lower bound for segment.bytes (LegacyRecord.RECORD_OVERHEAD_V0 = 14).
	minSegmentBytes = 14
)

// Config is a partition log's configuration. Each field carries the name
// of the Kafka topic-level setting it mirrors and means what it says,
// zero included (index.interval.bytes=0 indexes every batch,
// file.delete.delay.ms=0 deletes at once): start from DefaultConfig and
// set what differs. A zero where Kafka allows none (segment.bytes,
// segment.ms, ...) fails Open with ErrInvalidConfig. Only the fields that
// are not Kafka settings take a default when nil.
type Config struct {
	// SegmentBytes is segment.bytes: a segment rolls before an append
	// that would take it past this size. Default 1 GiB.
	SegmentBytes int64
	// SegmentMs is segment.ms: a segment rolls once the new batch's
	// timestamp is this far past the segment's first batch. Default 7 days.
	SegmentMs time.Duration
	// SegmentJitterMs is segment.jitter.ms: a random amount, chosen once
	// per segment in [0, min(SegmentJitterMs, SegmentMs)), subtracted from
	// SegmentMs. Default 0.
	SegmentJitterMs time.Duration
	// IndexIntervalBytes is index.interval.bytes: an offset and a time
	// index entry are added once this many bytes were appended since the
	// last entry; 0 indexes every batch but a segment's first. Default
	// 4096.
	IndexIntervalBytes int
	// SegmentIndexBytes is segment.index.bytes: the preallocated size of
	// each index file; a full index rolls the segment. Default 10 MiB.
	SegmentIndexBytes int
	// FlushMessages is flush.messages: the log is fsynced once this many
	// messages (offsets) were appended since the recovery point. 1 means
	// every append is durable before Append returns. At least 1; Kafka's
	// default, DefaultFlushMessages, means never.
	FlushMessages int64
	// FlushMs is flush.ms: the log is fsynced when this long has passed
	// since the last flush. 0 means no message waits for a flush: every
	// append is durable before Append returns, as with FlushMessages 1.
	// Kafka's default, FlushNever, means never.
	FlushMs time.Duration
	// MaxMessageBytes is max.message.bytes: the largest batch the log
	// accepts. Default 1048588.
	MaxMessageBytes int
	// FileDeleteDelay is file.delete.delay.ms: how long a removed
	// segment's files stay (renamed *.deleted) so reads in progress finish;
	// 0 deletes them at once. Default 60 s.
	FileDeleteDelay time.Duration
	// ProducerIDExpiration is producer.id.expiration.ms: an idempotent
	// producer whose last batch's timestamp is this far in the past, and
	// that has no open transaction, is forgotten (checked every
	// producer.id.expiration.check.interval.ms, 10 minutes, at the next
	// append). Default 1 day.
	ProducerIDExpiration time.Duration

	// The fields below are not Kafka settings.

	// FS is the file system the log writes through; nil means the
	// operating system's. Tests wrap it to inject faults.
	FS FS
	// Logger receives recovery reports and background errors; nil means
	// slog.Default().
	Logger *slog.Logger
	// Now is the clock used for roll and flush decisions; nil means time.Now.
	Now func() time.Time
	// OnFlush, if set, is told how long each flush took (fsyncs of the
	// log's files up to its end, or of a rolled segment), for a metric like
	// Kafka's LogFlushRateAndTimeMs. It runs on the flushing goroutine and
	// must not block.
	OnFlush func(time.Duration)
	// Managed, when non-nil, says that the caller (a log manager) owns the
	// recovery-point checkpoint, the log-start-offset checkpoint and the
	// clean-shutdown marker for this log, and hands their values in. When
	// nil, the log keeps these files in its own directory, so that a
	// library user gets crash safety without a manager.
	Managed *ManagedState
	// Files bounds the sealed segments whose files are open at once, for
	// every log that shares it (files.go); nil means the process-wide
	// DefaultFileCache.
	Files *FileCache
}

// ManagedState is what a log manager knows about a log before opening it.
type ManagedState struct {
	CleanShutdown  bool  // the log dir's clean-shutdown marker was present
	RecoveryPoint  int64 // from recovery-point-offset-checkpoint, -1 if absent
	LogStartOffset int64 // from log-start-offset-checkpoint, -1 if absent
}

// DefaultConfig is Kafka's topic-level defaults (LogConfig), the same
// numbers as the config package's tables, with the operating system's
// file system, slog.Default() and time.Now.
func DefaultConfig() Config {
	return Config{
		SegmentBytes:         DefaultSegmentBytes,
		SegmentMs:            DefaultSegmentMs,
		IndexIntervalBytes:   DefaultIndexIntervalBytes,
		SegmentIndexBytes:    DefaultSegmentIndexBytes,
		FlushMessages:        DefaultFlushMessages,
		FlushMs:              FlushNever,
		MaxMessageBytes:      DefaultMaxMessageBytes,
		FileDeleteDelay:      DefaultFileDeleteDelay,
		ProducerIDExpiration: DefaultProducerIDExpiration,
	}
}

// checked returns c with its nil hooks set, or an error naming the first
// invalid setting.
func (c Config) checked() (Config, error) {
	if c.FS == nil {
		c.FS = OSFS{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c, c.validate()
}

// flushEvery is the number of appended offsets after which an append
// flushes: flush.messages, or 1 when flush.ms=0 lets no message wait.
func (c Config) flushEvery() int64 {
	if c.FlushMs == 0 {
		return 1
	}
	return c.FlushMessages
}

// flushTicks reports whether flush.ms needs the flusher's ticker.
func flushTicks(flushMs time.Duration) bool { return flushMs > 0 && flushMs < FlushNever }

func (c Config) validate() error {
	switch {
	case c.SegmentBytes < minSegmentBytes || c.SegmentBytes > math.MaxInt32:
		return fmt.Errorf("%w: segment.bytes=%d must be in [%d, %d] (start from DefaultConfig)", ErrInvalidConfig, c.SegmentBytes, minSegmentBytes, math.MaxInt32)
	case c.SegmentMs < time.Millisecond:
		return fmt.Errorf("%w: segment.ms=%v must be at least 1 ms", ErrInvalidConfig, c.SegmentMs)
	case c.SegmentJitterMs < 0:
		return fmt.Errorf("%w: segment.jitter.ms=%v must not be negative", ErrInvalidConfig, c.SegmentJitterMs)
	case c.IndexIntervalBytes < 0:
		return fmt.Errorf("%w: index.interval.bytes=%d must not be negative", ErrInvalidConfig, c.IndexIntervalBytes)
	case c.SegmentIndexBytes < 4*index.TimeEntrySize:
		return fmt.Errorf("%w: segment.index.bytes=%d must be at least %d", ErrInvalidConfig, c.SegmentIndexBytes, 4*index.TimeEntrySize)
	case c.FlushMessages < 1:
		return fmt.Errorf("%w: flush.messages=%d must be at least 1", ErrInvalidConfig, c.FlushMessages)
	case c.FlushMs < 0:
		return fmt.Errorf("%w: flush.ms=%v must not be negative", ErrInvalidConfig, c.FlushMs)
	case c.MaxMessageBytes < record.BatchHeaderSize:
		return fmt.Errorf("%w: max.message.bytes=%d must be at least %d", ErrInvalidConfig, c.MaxMessageBytes, record.BatchHeaderSize)
	case c.FileDeleteDelay < 0:
		return fmt.Errorf("%w: file.delete.delay.ms=%v must not be negative", ErrInvalidConfig, c.FileDeleteDelay)
	case c.ProducerIDExpiration < time.Millisecond:
		return fmt.Errorf("%w: producer.id.expiration.ms=%v must be at least 1 ms", ErrInvalidConfig, c.ProducerIDExpiration)
	}
	return nil
}

// UpdateConfig applies new values of the Kafka settings to an open log,
// as Kafka does when a topic's configuration changes: the next append,
// roll and flush decisions use them. FS, Logger, Now and Managed keep the
// values the log was opened with. SegmentIndexBytes applies to segments
// created from now on.
func (l *Log) UpdateConfig(c Config) error {
	c.FS, c.Logger, c.Now, c.Managed, c.OnFlush = l.cfg.FS, l.cfg.Logger, l.cfg.Now, l.cfg.Managed, l.cfg.OnFlush
	c, err := c.checked()
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	old := l.cfg.FlushMs
	// Field by field: FS, Logger, Now and Managed are read without the
	// lock by the flush path and must not be written.
	l.cfg.SegmentBytes, l.cfg.SegmentMs, l.cfg.SegmentJitterMs = c.SegmentBytes, c.SegmentMs, c.SegmentJitterMs
	l.cfg.IndexIntervalBytes, l.cfg.SegmentIndexBytes = c.IndexIntervalBytes, c.SegmentIndexBytes
	l.cfg.FlushMessages, l.cfg.FlushMs = c.FlushMessages, c.FlushMs
	l.cfg.MaxMessageBytes, l.cfg.FileDeleteDelay = c.MaxMessageBytes, c.FileDeleteDelay
	l.cfg.ProducerIDExpiration = c.ProducerIDExpiration
	l.setLimits()
	if c.FlushMs != old {
		select {
		case l.flushMsChanged <- c.FlushMs:
		default:
		}
	}
	return nil
}
