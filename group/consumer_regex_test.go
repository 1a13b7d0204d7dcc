package group

import (
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Kafka: KIP-848; GroupMetadataManager.throwIfRegularExpressionIsInvalid
// answers INVALID_REGULAR_EXPRESSION with a message that names the
// regular expression, and TopicRegexResolver matches whole names
// (Pattern.matcher(topic).matches()).
func TestRegexCheckAndFullMatch(t *testing.T) {
	code, msg := checkRegex("a)(b")
	if code != kerr.InvalidRegularExpression.Code || !strings.HasPrefix(msg, "SubscribedTopicRegex `a)(b` is not a valid regular expression: ") {
		t.Fatalf("a)(b: %d %q", code, msg) // wrapping it for a full match must not make it valid
	}
	if code, _ := checkRegex(strings.Repeat("a", 1<<15)); code != kerr.InvalidRegularExpression.Code {
		t.Fatalf("a pattern longer than a record key holds: code %d", code)
	}
	if code, msg := checkRegex("orders-.*|audit"); code != 0 {
		t.Fatalf("valid pattern refused: %q", msg)
	}
	names := []string{"audit", "audit-old", "orders", "orders-eu", "xorders-eu"}
	for _, c := range []struct {
		expr string
		want []string
	}{
		{"orders-.*|audit", []string{"audit", "orders-eu"}},
		{"orders", []string{"orders"}},
		{"(?m)^orders$", []string{"orders"}},
		{".*", names},
	} {
		if got := resolveRegex(c.expr, names, nil); !slices.Equal(got, c.want) {
			t.Errorf("%q resolves to %v, want %v", c.expr, got, c.want)
		}
	}
	deny := func(topic string) bool { return topic != "orders-eu" }
	if got := resolveRegex("orders.*", names, deny); !slices.Equal(got, []string{"orders"}) {
		t.Errorf("filtered resolution: %v", got)
	}
}
