package compaction

import (
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/varve/varve/segment"
)

// Kafka's defaults (LogConfig for the topic-level settings, CleanerConfig
// for the cleaner's).
const (
	DefaultMinCleanableDirtyRatio = 0.5                          // min.cleanable.dirty.ratio
	DefaultMinCompactionLag       = time.Duration(0)             // min.compaction.lag.ms
	DefaultMaxCompactionLag       = time.Duration(math.MaxInt64) // max.compaction.lag.ms (Long.MAX_VALUE)
	DefaultDeleteRetention        = 24 * time.Hour               // delete.retention.ms
	DefaultDedupeBufferSize       = 128 << 20                    // log.cleaner.dedupe.buffer.size
	DefaultIOBufferLoadFactor     = 0.9                          // log.cleaner.io.buffer.load.factor
	DefaultIOBufferSize           = 512 << 10                    // log.cleaner.io.buffer.size
	DefaultThreads                = 1                            // log.cleaner.threads
	DefaultBackoff                = 15 * time.Second             // log.cleaner.backoff.ms
	// DefaultUncleanableRetry is not a Kafka setting: Kafka keeps a
	// partition whose cleaning failed uncleanable until the broker
	// restarts (KAFKA-19895); the Cleaner retries it after this long.
	DefaultUncleanableRetry = 10 * time.Minute

	// maxDedupePerThread caps each thread's share of the dedupe buffer,
	// as Kafka caps it at Int.MaxValue bytes.
	maxDedupePerThread = math.MaxInt32
	// minReadBuffer is the smallest read buffer a thread gets.
	minReadBuffer = 64 << 10
)

// TopicConfig holds the topic-level settings of compaction, which may
// differ per log (a Target can replace them). Every field means what it
// says, zero included: start from DefaultTopicConfig.
type TopicConfig struct {
	// MinCleanableDirtyRatio is min.cleanable.dirty.ratio: the Cleaner
	// picks a log only when dirty bytes / (clean + dirty bytes) exceed it
	// (or max.compaction.lag.ms forces it); 0 picks a log with any dirty
	// byte. Kafka's default is 0.5.
	MinCleanableDirtyRatio float64
	// MinCompactionLag is min.compaction.lag.ms: a segment whose largest
	// timestamp is newer than now minus this is not cleaned. Kafka's
	// default is 0.
	MinCompactionLag time.Duration
	// MaxCompactionLag is max.compaction.lag.ms: a log whose oldest dirty
	// segment's first batch is older than now minus this is cleaned
	// whatever its dirty ratio. Kafka's default, Long.MAX_VALUE, is
	// DefaultMaxCompactionLag; it must be positive.
	MaxCompactionLag time.Duration
	// DeleteRetention is delete.retention.ms: a tombstone stays at least
	// this long after the first cleaning that saw it (the batch's delete
	// horizon); 0 lets the next cleaning remove it. Kafka's default is
	// 24 h; the horizon has millisecond precision.
	DeleteRetention time.Duration
}

// DefaultTopicConfig is Kafka's topic-level compaction defaults.
func DefaultTopicConfig() TopicConfig {
	return TopicConfig{
		MinCleanableDirtyRatio: DefaultMinCleanableDirtyRatio,
		MinCompactionLag:       DefaultMinCompactionLag,
		MaxCompactionLag:       DefaultMaxCompactionLag,
		DeleteRetention:        DefaultDeleteRetention,
	}
}

// Config is the cleaner's configuration: the topic-level defaults plus
// the broker-level log.cleaner.* settings. Every Kafka setting means what
// it says, zero included: start from DefaultConfig and set what differs.
// Only the fields below that are not Kafka settings take a default when
// nil.
type Config struct {
	TopicConfig

	// DedupeBufferSize is log.cleaner.dedupe.buffer.size: the memory of
	// the offset maps of all threads together; each thread's map holds
	// DedupeBufferSize / Threads bytes (at most 2 GiB), at least two
	// slots. Kafka's default is 128 MiB.
	DedupeBufferSize int64
	// IOBufferLoadFactor is log.cleaner.io.buffer.load.factor: the share
	// of the map's slots a pass fills before it stops, in (0, 1]. Kafka's
	// default is 0.9.
	IOBufferLoadFactor float64
	// IOBufferSize is log.cleaner.io.buffer.size: the I/O buffers of all
	// threads together; each thread reads in chunks of IOBufferSize /
	// Threads / 2 bytes (at least 64 KiB, also when IOBufferSize is 0),
	// grown to fit a larger batch. Kafka's default is 512 KiB.
	IOBufferSize int
	// Threads is log.cleaner.threads: the Cleaner's workers, at least 1
	// (Kafka's 0, no cleaner, is a broker not making one). Kafka's
	// default is 1.
	Threads int
	// MaxIOBytesPerSecond is log.cleaner.io.max.bytes.per.second: reads
	// and writes of all threads together are throttled to this rate,
	// which must be positive. Kafka's default, Double.MAX_VALUE
	// (Unthrottled), turns the throttle off.
	MaxIOBytesPerSecond float64
	// Backoff is log.cleaner.backoff.ms: how long a worker sleeps when no
	// log needs cleaning. Kafka's default is 15 s.
	Backoff time.Duration
	// UncleanableRetry is how long the Cleaner leaves a log alone after a
	// cleaning failed; 0 retries it at the next round. Not a Kafka
	// setting; DefaultConfig has DefaultUncleanableRetry.
	UncleanableRetry time.Duration

	// UpperBound gives the offset cleaning must stay below (a broker
	// passes the high watermark, or the last stable offset). nil means the
	// log end offset. The bound is rounded down to a segment boundary: a
	// segment holding offsets at or past it is never rewritten.
	UpperBound func(*segment.Log) int64
	// Now is the Cleaner's clock (Clean takes the time as an argument).
	// nil means time.Now.
	Now func() time.Time
	// Logger receives what the Cleaner does; nil means slog.Default().
	Logger *slog.Logger
	// OnClean, if set, is called by the Cleaner after each pass, from the
	// worker's goroutine.
	OnClean func(l *segment.Log, s Stats, err error)
}

// Unthrottled, as MaxIOBytesPerSecond, turns the throttle off: Kafka's
// Double.MAX_VALUE, the default of log.cleaner.io.max.bytes.per.second.
const Unthrottled = math.MaxFloat64

// DefaultConfig is Kafka's defaults for the topic-level settings and
// log.cleaner.*, with the UncleanableRetry of DefaultUncleanableRetry.
func DefaultConfig() Config {
	return Config{
		TopicConfig:         DefaultTopicConfig(),
		DedupeBufferSize:    DefaultDedupeBufferSize,
		IOBufferLoadFactor:  DefaultIOBufferLoadFactor,
		IOBufferSize:        DefaultIOBufferSize,
		Threads:             DefaultThreads,
		MaxIOBytesPerSecond: Unthrottled,
		Backoff:             DefaultBackoff,
		UncleanableRetry:    DefaultUncleanableRetry,
	}
}

// checked returns c with its nil hooks set, or an error naming the first
// invalid setting.
func (c Config) checked() (Config, error) {
	if c.UpperBound == nil {
		c.UpperBound = (*segment.Log).EndOffset
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, c.validate()
}

func (c Config) validate() error {
	if err := c.TopicConfig.validate(); err != nil {
		return err
	}
	switch {
	case c.DedupeBufferSize < 0:
		return fmt.Errorf("%w: log.cleaner.dedupe.buffer.size=%d must not be negative", ErrInvalidConfig, c.DedupeBufferSize)
	case c.Threads < 1:
		return fmt.Errorf("%w: log.cleaner.threads=%d must be at least 1", ErrInvalidConfig, c.Threads)
	case c.DedupeBufferSize/int64(c.Threads) < 2*slotBytes:
		return fmt.Errorf("%w: log.cleaner.dedupe.buffer.size=%d gives each of %d threads less than two %d-byte slots",
			ErrInvalidConfig, c.DedupeBufferSize, c.Threads, slotBytes)
	case !(c.IOBufferLoadFactor > 0 && c.IOBufferLoadFactor <= 1):
		return fmt.Errorf("%w: log.cleaner.io.buffer.load.factor=%v must be in (0, 1]", ErrInvalidConfig, c.IOBufferLoadFactor)
	case c.IOBufferSize < 0:
		return fmt.Errorf("%w: log.cleaner.io.buffer.size=%d must not be negative", ErrInvalidConfig, c.IOBufferSize)
	case !(c.MaxIOBytesPerSecond > 0):
		return fmt.Errorf("%w: log.cleaner.io.max.bytes.per.second=%v must be positive (Unthrottled for no limit)", ErrInvalidConfig, c.MaxIOBytesPerSecond)
	case c.UncleanableRetry < 0:
		return fmt.Errorf("%w: uncleanable retry %v must not be negative", ErrInvalidConfig, c.UncleanableRetry)
	case c.Backoff < 0:
		return fmt.Errorf("%w: log.cleaner.backoff.ms=%v must not be negative", ErrInvalidConfig, c.Backoff)
	}
	return nil
}

func (t TopicConfig) validate() error {
	switch {
	case t.MinCleanableDirtyRatio < 0 || t.MinCleanableDirtyRatio > 1:
		return fmt.Errorf("%w: min.cleanable.dirty.ratio=%v must be in [0, 1]", ErrInvalidConfig, t.MinCleanableDirtyRatio)
	case t.MinCompactionLag < 0:
		return fmt.Errorf("%w: min.compaction.lag.ms=%v must not be negative", ErrInvalidConfig, t.MinCompactionLag)
	case t.MaxCompactionLag <= 0:
		return fmt.Errorf("%w: max.compaction.lag.ms=%v must be positive", ErrInvalidConfig, t.MaxCompactionLag)
	case t.DeleteRetention < 0:
		return fmt.Errorf("%w: delete.retention.ms=%v must not be negative", ErrInvalidConfig, t.DeleteRetention)
	}
	return nil
}

// mapBytesPerThread is each thread's share of the dedupe buffer.
func (c Config) mapBytesPerThread() int64 {
	return min(c.DedupeBufferSize/int64(c.Threads), maxDedupePerThread)
}

// readBufferPerThread is each thread's read chunk.
func (c Config) readBufferPerThread() int {
	return max(c.IOBufferSize/c.Threads/2, minReadBuffer)
}
