package retention

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kafka's defaults (LogConfig, ServerLogConfigs).
const (
	// DefaultRetentionMs is retention.ms's default: 7 days.
	DefaultRetentionMs = 7 * 24 * time.Hour
	// Unlimited, as RetentionMs or RetentionBytes, turns the rule off
	// (Kafka's -1).
	Unlimited = -1
	// DefaultCheckInterval is log.retention.check.interval.ms's default.
	DefaultCheckInterval = 300 * time.Second
	// DefaultInitialDelay is how long the retention task waits after start
	// before its first run (Kafka's LogManager schedules kafka-log-retention
	// with an initial delay of 30 s).
	DefaultInitialDelay = 30 * time.Second
)

// ErrInvalidPolicy: a policy value is out of range or does not parse.
var ErrInvalidPolicy = errors.New("invalid retention policy")

// CleanupPolicy is cleanup.policy: which cleaners apply to a log. The
// zero value is Kafka's default, delete.
type CleanupPolicy uint8

// The two cleanup policies; a log may have both ("compact,delete").
const (
	CleanupDelete CleanupPolicy = 1 << iota
	CleanupCompact
)

// ParseCleanupPolicy parses Kafka's list syntax: "delete", "compact",
// "compact,delete" or "delete,compact" (spaces allowed).
func ParseCleanupPolicy(s string) (CleanupPolicy, error) {
	var p CleanupPolicy
	for _, f := range strings.Split(s, ",") {
		switch strings.TrimSpace(f) {
		case "delete":
			p |= CleanupDelete
		case "compact":
			p |= CleanupCompact
		default:
			return 0, fmt.Errorf("%w: cleanup.policy=%q: %q is neither delete nor compact", ErrInvalidPolicy, s, f)
		}
	}
	return p, nil
}

// Delete reports whether the policy includes delete (true for the zero
// value, Kafka's default).
func (p CleanupPolicy) Delete() bool { return p == 0 || p&CleanupDelete != 0 }

// Compact reports whether the policy includes compact.
func (p CleanupPolicy) Compact() bool { return p&CleanupCompact != 0 }

// String renders the policy as Kafka writes it.
func (p CleanupPolicy) String() string {
	switch {
	case p.Compact() && p.Delete():
		return "compact,delete"
	case p.Compact():
		return "compact"
	}
	return "delete"
}

// Policy is a log's retention settings, with Kafka's topic-level names. A
// zero field means Kafka's default.
type Policy struct {
	// CleanupPolicy is cleanup.policy. Without delete, only the log start
	// offset rule runs (segments wholly below the log start offset go).
	CleanupPolicy CleanupPolicy
	// RetentionMs is retention.ms: a segment whose largest timestamp is
	// older than this goes. Default 7 days; negative (Unlimited) turns the
	// rule off.
	RetentionMs time.Duration
	// RetentionBytes is retention.bytes: the oldest segments go while the
	// log would still be at least this large without them. Default and
	// negative: Unlimited. (Kafka's 0 would delete every sealed segment;
	// here 0 means the default, so say 1 for that.)
	RetentionBytes int64
}

// WithDefaults returns p with zero fields set to Kafka's defaults.
func (p Policy) WithDefaults() Policy {
	if p.CleanupPolicy == 0 {
		p.CleanupPolicy = CleanupDelete
	}
	if p.RetentionMs == 0 {
		p.RetentionMs = DefaultRetentionMs
	}
	if p.RetentionBytes == 0 {
		p.RetentionBytes = Unlimited
	}
	return p
}

// timeRuleOn reports whether retention.ms applies.
func (p Policy) timeRuleOn() bool { return p.RetentionMs >= 0 }

// sizeRuleOn reports whether retention.bytes applies.
func (p Policy) sizeRuleOn() bool { return p.RetentionBytes >= 0 }

func (p Policy) validate() error {
	if p.CleanupPolicy&^(CleanupDelete|CleanupCompact) != 0 {
		return fmt.Errorf("%w: cleanup.policy bits %#x", ErrInvalidPolicy, uint8(p.CleanupPolicy))
	}
	return nil
}
