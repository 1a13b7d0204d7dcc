package segment

import (
	"errors"
	"fmt"
	"strings"
)

// CleanupPolicy is cleanup.policy: which cleaners apply to a log,
// retention (package retention) or compaction (package compaction), or
// both ("compact,delete"). It lives here, below both cleaners, because
// each reads it and neither may import the other. The zero value holds
// neither policy; Kafka has no such setting, and retention refuses it.
type CleanupPolicy uint8

// The two cleanup policies; a log may have both.
const (
	CleanupDelete CleanupPolicy = 1 << iota
	CleanupCompact
)

// ErrInvalidCleanupPolicy: a cleanup.policy does not parse.
var ErrInvalidCleanupPolicy = errors.New("invalid cleanup.policy")

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
			return 0, fmt.Errorf("%w: %q: %q is neither delete nor compact", ErrInvalidCleanupPolicy, s, f)
		}
	}
	return p, nil
}

// Delete reports whether the policy includes delete.
func (p CleanupPolicy) Delete() bool { return p&CleanupDelete != 0 }

// Compact reports whether the policy includes compact.
func (p CleanupPolicy) Compact() bool { return p&CleanupCompact != 0 }

// Valid reports whether the policy holds delete, compact or both, and
// nothing else.
func (p CleanupPolicy) Valid() bool {
	return p != 0 && p&^(CleanupDelete|CleanupCompact) == 0
}

// String renders the policy as Kafka writes it; "" for the zero value.
func (p CleanupPolicy) String() string {
	switch {
	case p.Compact() && p.Delete():
		return "compact,delete"
	case p.Compact():
		return "compact"
	case p.Delete():
		return "delete"
	}
	return ""
}
