package config

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Millis is a duration in milliseconds, as Kafka's *.ms properties hold
// it. It keeps Kafka's whole range, Long.MAX_VALUE ("never") included,
// which time.Duration cannot hold.
type Millis int64

// MaxMillis is Kafka's Long.MAX_VALUE milliseconds: the default of
// flush.ms, max.compaction.lag.ms and message.timestamp.before.max.ms,
// meaning "never" or "no limit".
const MaxMillis Millis = math.MaxInt64

// Duration converts m, saturating at the largest and smallest
// time.Duration (about ±292 years).
func (m Millis) Duration() time.Duration {
	const unit = int64(time.Millisecond)
	switch {
	case int64(m) > math.MaxInt64/unit:
		return math.MaxInt64
	case int64(m) < math.MinInt64/unit:
		return math.MinInt64
	}
	return time.Duration(int64(m) * unit)
}

// valueType is one of Kafka's ConfigDef types (or a structured string
// type of this package): how a property's text becomes a Go value and
// back.
type valueType struct {
	name   string                       // for doc.go: int, long, double, ...
	parse  func(s string) (any, error)  // s is already trimmed
	format func(v reflect.Value) string // renders a field or parsed value
}

// The parsers return these Go types: int64 for int, short and long;
// float64; bool; string; []string; or the structured types named below.
var (
	tInt    = &valueType{"int", parseIntBits(32), formatInt}
	tShort  = &valueType{"short", parseIntBits(16), formatInt}
	tLong   = &valueType{"long", parseIntBits(64), formatInt}
	tDouble = &valueType{"double", parseDouble, func(v reflect.Value) string { return javaDouble(v.Float()) }}
	tBool   = &valueType{"boolean", parseBool, func(v reflect.Value) string { return strconv.FormatBool(v.Bool()) }}
	tString = &valueType{"string", func(s string) (any, error) { return s, nil }, func(v reflect.Value) string { return v.String() }}
	tList   = &valueType{"list", func(s string) (any, error) { return splitList(s), nil }, formatList}
)

func parseIntBits(bits int) func(string) (any, error) {
	return func(s string) (any, error) {
		n, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return nil, fmt.Errorf("expected a %d-bit integer", bits)
		}
		return n, nil
	}
}

func formatInt(v reflect.Value) string { return strconv.FormatInt(v.Int(), 10) }

func parseDouble(s string) (any, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) {
		return nil, errors.New("expected a number")
	}
	return f, nil
}

// parseBool accepts true and false in any case, as Kafka's ConfigDef does.
func parseBool(s string) (any, error) {
	switch strings.ToLower(s) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return nil, errors.New("expected true or false")
}

// splitList is Kafka's LIST parsing: empty text is the empty list,
// otherwise the items between commas, trimmed (empty items kept, so a
// validator can refuse them).
func splitList(s string) []string {
	if s == "" {
		return []string{}
	}
	items := strings.Split(s, ",")
	for i := range items {
		items[i] = strings.TrimSpace(items[i])
	}
	return items
}

func formatList(v reflect.Value) string {
	parts := make([]string, v.Len())
	for i := range parts {
		parts[i] = fmt.Sprint(v.Index(i).Interface())
	}
	return strings.Join(parts, ",")
}

// javaDouble renders f as Java's Double.toString does, so that Get shows
// what Kafka's DescribeConfigs shows: "0.5", "1.0", "1.7976931348623157E308".
func javaDouble(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if a := math.Abs(f); a == 0 || (a >= 1e-3 && a < 1e7) {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// check validates a parsed value; the error text says what was expected.
type check func(v any) error

func atLeast(lo float64) check {
	return func(v any) error {
		if number(v) < lo {
			return fmt.Errorf("expected a value of at least %s", javaNumber(lo))
		}
		return nil
	}
}

func between(lo, hi float64) check {
	return func(v any) error {
		if n := number(v); n < lo || n > hi {
			return fmt.Errorf("expected a value in [%s, %s]", javaNumber(lo), javaNumber(hi))
		}
		return nil
	}
}

// aboveZeroAtMostOne is (0, 1], for a load factor.
func aboveZeroAtMostOne(v any) error {
	if n := number(v); n <= 0 || n > 1 {
		return errors.New("expected a value in (0, 1]")
	}
	return nil
}

// atLeastOrMinusOne accepts -1 (Kafka's "use the default level") or
// [lo, hi].
func levelOrMinusOne(lo, hi float64) check {
	return func(v any) error {
		if n := number(v); n != -1 && (n < lo || n > hi) {
			return fmt.Errorf("expected -1 or a value in [%s, %s]", javaNumber(lo), javaNumber(hi))
		}
		return nil
	}
}

// oneOf is Kafka's ValidString.in: a case-sensitive choice.
func oneOf(vals ...string) check {
	return func(v any) error {
		for _, s := range vals {
			if v.(string) == s {
				return nil
			}
		}
		return fmt.Errorf("expected one of %s", strings.Join(vals, ", "))
	}
}

// oneOfOrNull is oneOf that also takes "" (Kafka's null).
func oneOfOrNull(vals ...string) check {
	in := oneOf(vals...)
	return func(v any) error {
		if v.(string) == "" {
			return nil
		}
		return in(v)
	}
}

// RackAwareReplicaSelector is the one replica.selector.class served:
// Kafka's selector that sends a consumer to a replica in its
// client.rack (KIP-392).
const RackAwareReplicaSelector = "org.apache.kafka.common.replica.RackAwareReplicaSelector"

// listOf is Kafka's ValidList.in: every item one of vals, and (unlike
// Kafka) no item twice.
func listOf(vals ...string) check {
	return func(v any) error {
		seen := map[string]bool{}
		for _, item := range v.([]string) {
			if err := oneOf(vals...)(item); err != nil {
				return fmt.Errorf("expected a comma-separated list of %s", strings.Join(vals, ", "))
			}
			if seen[item] {
				return fmt.Errorf("%q is listed twice", item)
			}
			seen[item] = true
		}
		return nil
	}
}

func nonEmptyList(v any) error {
	if len(v.([]string)) == 0 {
		return errors.New("expected at least one item")
	}
	for _, item := range v.([]string) {
		if item == "" {
			return errors.New("expected no empty item")
		}
	}
	return nil
}

func number(v any) float64 {
	switch n := v.(type) {
	case int64:
		return float64(n)
	case float64:
		return n
	}
	return math.NaN()
}

func javaNumber(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.FormatInt(int64(f), 10)
	}
	return javaDouble(f)
}

// setField stores a parsed value into the field ptr points to,
// converting between kinds of the same family (int64 to int or Millis).
// A mismatch is a bug in a definitions table, caught by every test that
// parses the defaults.
func setField(ptr, v any) {
	dst := reflect.ValueOf(ptr).Elem()
	src := reflect.ValueOf(v)
	if src.Type() != dst.Type() {
		src = src.Convert(dst.Type())
	}
	dst.Set(src)
}
