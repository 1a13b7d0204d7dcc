package retention

import (
	"errors"
	"fmt"
	"time"

	"github.com/varve/varve/segment"
)

// Kafka's defaults (LogConfig, ServerLogConfigs).
const (
	// DefaultRetentionMs is retention.ms's default: 7 days.
	DefaultRetentionMs = 7 * 24 * time.Hour
	// Unlimited, as RetentionMs or RetentionBytes, turns the rule off
	// (Kafka's -1). It is retention.bytes's default.
	Unlimited = -1
	// DefaultCheckInterval is log.retention.check.interval.ms's default.
	DefaultCheckInterval = 300 * time.Second
	// DefaultInitialDelay is how long the retention task waits after start
	// before its first run (Kafka's LogManager schedules kafka-log-retention
	// with an initial delay of 30 s).
	DefaultInitialDelay = 30 * time.Second
)

// ErrInvalidPolicy: a policy value is out of range.
var ErrInvalidPolicy = errors.New("invalid retention policy")

// Policy is a log's retention settings, with Kafka's topic-level names.
// Every field means what it says, zero included: start from
// DefaultPolicy and set what differs.
type Policy struct {
	// CleanupPolicy is cleanup.policy. Without delete, only the log start
	// offset rule runs (segments wholly below the log start offset go).
	// It must hold delete, compact or both.
	CleanupPolicy segment.CleanupPolicy
	// RetentionMs is retention.ms: a segment whose largest timestamp is
	// more than this older than now goes (0: every segment whose
	// timestamps are all in the past). Negative (Unlimited) turns the
	// rule off.
	RetentionMs time.Duration
	// RetentionBytes is retention.bytes: the oldest segments go while the
	// log would still be at least this large without them (0: every
	// segment, the active one rolled first when it is not empty).
	// Negative (Unlimited) turns the rule off.
	RetentionBytes int64
}

// DefaultPolicy is Kafka's default retention: cleanup.policy=delete,
// retention.ms 7 days, retention.bytes unlimited.
func DefaultPolicy() Policy {
	return Policy{CleanupPolicy: segment.CleanupDelete, RetentionMs: DefaultRetentionMs, RetentionBytes: Unlimited}
}

// timeRuleOn reports whether retention.ms applies.
func (p Policy) timeRuleOn() bool { return p.RetentionMs >= 0 }

// sizeRuleOn reports whether retention.bytes applies.
func (p Policy) sizeRuleOn() bool { return p.RetentionBytes >= 0 }

func (p Policy) validate() error {
	if !p.CleanupPolicy.Valid() {
		return fmt.Errorf("%w: cleanup.policy %#x must hold delete, compact or both (start from DefaultPolicy)",
			ErrInvalidPolicy, uint8(p.CleanupPolicy))
	}
	return nil
}
