package txn

import (
	"io"
	"log/slog"
	"time"
)

// Config is the transaction coordinator's share of Kafka's broker
// properties.
type Config struct {
	// MaxTimeout is transaction.max.timeout.ms (default 15 minutes): a
	// longer transaction.timeout.ms from a client is refused with
	// INVALID_TRANSACTION_TIMEOUT.
	MaxTimeout time.Duration
	// IDExpiration is transactional.id.expiration.ms (default 7 days):
	// an id with no transaction open and no update for this long is
	// removed.
	IDExpiration time.Duration
	// AbortCheckInterval is
	// transaction.abort.timed.out.transaction.cleanup.interval.ms
	// (default 10 s): how often transactions past their timeout are
	// looked for and aborted.
	AbortCheckInterval time.Duration
	// ExpireCheckInterval is
	// transaction.remove.expired.transaction.cleanup.interval.ms
	// (default 1 hour): how often expired ids are looked for.
	ExpireCheckInterval time.Duration
	// RetryBackoff is how long a failed write of a CompleteCommit or
	// CompleteAbort record waits before it is tried again.
	RetryBackoff time.Duration
	// Logger receives the coordinator's warnings; nil discards them.
	Logger *slog.Logger
}

// Kafka's defaults.
const (
	DefaultMaxTimeout          = 900_000 * time.Millisecond
	DefaultIDExpiration        = 7 * 24 * time.Hour
	DefaultAbortCheckInterval  = 10 * time.Second
	DefaultExpireCheckInterval = time.Hour
	defaultRetryBackoff        = 100 * time.Millisecond
)

func (c Config) withDefaults() Config {
	if c.MaxTimeout <= 0 {
		c.MaxTimeout = DefaultMaxTimeout
	}
	if c.IDExpiration <= 0 {
		c.IDExpiration = DefaultIDExpiration
	}
	if c.AbortCheckInterval <= 0 {
		c.AbortCheckInterval = DefaultAbortCheckInterval
	}
	if c.ExpireCheckInterval <= 0 {
		c.ExpireCheckInterval = DefaultExpireCheckInterval
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = defaultRetryBackoff
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return c
}
