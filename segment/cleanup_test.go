package segment_test

import (
	"errors"
	"testing"

	"github.com/varve/varve/segment"
)

// Kafka: cleanup.policy is a list of delete and compact, in any order.
func TestParseCleanupPolicy(t *testing.T) {
	for in, want := range map[string]string{
		"delete": "delete", "compact": "compact", "compact,delete": "compact,delete", "delete, compact": "compact,delete",
	} {
		p, err := segment.ParseCleanupPolicy(in)
		if err != nil || p.String() != want || !p.Valid() {
			t.Errorf("ParseCleanupPolicy(%q) = %v, %v; want %s", in, p, err, want)
		}
	}
	if _, err := segment.ParseCleanupPolicy("remove"); !errors.Is(err, segment.ErrInvalidCleanupPolicy) {
		t.Errorf("ParseCleanupPolicy(remove) err = %v, want ErrInvalidCleanupPolicy", err)
	}
	// The zero value is no policy at all, not Kafka's default: a caller
	// says delete (or starts from retention.DefaultPolicy).
	var zero segment.CleanupPolicy
	if zero.Delete() || zero.Compact() || zero.Valid() || zero.String() != "" {
		t.Errorf("zero CleanupPolicy = %q, delete %v, compact %v, valid %v; want none of them", zero, zero.Delete(), zero.Compact(), zero.Valid())
	}
}
