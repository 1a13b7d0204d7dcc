package config

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Sentinel errors. Every error this package returns wraps one of them;
// test with errors.Is. A broker maps all three to Kafka's INVALID_CONFIG
// (or refuses to start).
var (
	// ErrUnknownProperty: a name that is neither one of Kafka's
	// properties Varve accepts nor one of Varve's own.
	ErrUnknownProperty = errors.New("unknown property")
	// ErrInvalidValue: a value that does not parse as the property's type
	// or lies outside its valid range, or two properties that contradict
	// each other.
	ErrInvalidValue = errors.New("invalid value")
	// ErrUnsupported: a valid Kafka setting that asks for something Varve
	// does not do (remote.storage.enable=true).
	ErrUnsupported = errors.New("not supported by Varve")
	// ErrSyntax: a properties file that is not valid Java .properties.
	ErrSyntax = errors.New("properties syntax error")
)

// PropertyError says which property is wrong, what it was given and what
// was expected. Parse functions return one per wrong property, joined with
// errors.Join, so errors.As finds the first.
type PropertyError struct {
	Name   string // the property, by Kafka's name
	Value  string // the value given (empty for an unknown name)
	Reason string // what was expected, in words
	Err    error  // ErrUnknownProperty, ErrInvalidValue or ErrUnsupported
}

func (e *PropertyError) Error() string {
	if errors.Is(e.Err, ErrUnknownProperty) {
		return fmt.Sprintf("config: unknown property %q: %s", e.Name, e.Reason)
	}
	return fmt.Sprintf("config: %s=%q: %s", e.Name, e.Value, e.Reason)
}

func (e *PropertyError) Unwrap() error { return e.Err }

func invalid(name, value, format string, args ...any) *PropertyError {
	return &PropertyError{Name: name, Value: value, Reason: fmt.Sprintf(format, args...), Err: ErrInvalidValue}
}

// unknownNames returns one error per name in props that known does not
// hold, sorted by name, each suggesting the closest known name.
func unknownNames(props map[string]string, known []string, kind string) error {
	var bad []string
	idx := make(map[string]bool, len(known))
	for _, n := range known {
		idx[n] = true
	}
	for n := range props {
		if !idx[n] {
			bad = append(bad, n)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	errs := make([]error, len(bad))
	for i, n := range bad {
		errs[i] = unknownError(n, known, kind)
	}
	return errors.Join(errs...)
}

func unknownError(name string, known []string, kind string) *PropertyError {
	reason := fmt.Sprintf("not a %s property Varve knows (Kafka only warns about unknown names; Varve refuses them so that typos are caught)", kind)
	if s := closest(name, known); s != "" {
		reason = fmt.Sprintf("did you mean %q? (Varve refuses unknown %s properties so that typos are caught)", s, kind)
	}
	return &PropertyError{Name: name, Reason: reason, Err: ErrUnknownProperty}
}

// closest returns the known name within edit distance 2 of name, or "".
func closest(name string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(name), k, bestD); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, or limit when it
// is at least limit.
func editDistance(a, b string, limit int) int {
	if abs(len(a)-len(b)) >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
