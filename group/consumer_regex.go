package group

import (
	"errors"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Regular-expression subscriptions (KIP-848's SubscribedTopicRegex;
// Kafka's GroupMetadataManager.maybeUpdateRegularExpressions and
// TopicRegexResolver). A member may subscribe to a regular expression
// instead of, or besides, topic names; the coordinator resolves each
// regular expression of the group against the cluster's topic names
// (full matches, as RE2/J's Matcher.matches), keeps only the topics the
// member whose heartbeat resolved it may DESCRIBE, and stores the result
// in a ConsumerGroupRegularExpression record (type 16). The resolved
// topics join the group's subscribed topics, so a topic created or
// deleted that changes a resolution bumps the group epoch through the
// subscription metadata hash.
//
// Kafka resolves in a background task; here the resolution is part of
// the heartbeat that needs it, so the state machine stays
// deterministic: the topic list and its version come in through
// Config.Topics as the partition counts do. A regular expression new to
// the group is resolved at once; the group's regular expressions are
// resolved again when the topic list's version moved on, at most every
// regexRefreshInterval (Kafka's REGEX_BATCH_REFRESH_INTERVAL_MS). A
// regular expression no member subscribes to any more is deleted
// (tombstone). A record is written when a resolution's topics change.
//
// Syntax: Kafka compiles with RE2/J, Go's regexp is RE2; both refuse
// Java's lookaround, backreferences and possessive quantifiers, and
// accept the same Perl classes, flags (i, m, s, U) and named groups. A
// pattern Go refuses (also one past Go's size limits or longer than a
// record key can hold) is INVALID_REGULAR_EXPRESSION.

// regexRefreshInterval is the least time between two resolutions of a
// group's regular expressions against a changed topic list.
const regexRefreshInterval = 10 * time.Second

// resolvedRegex is a regular expression's resolution (Kafka's
// ResolvedRegularExpression). It is replaced, never changed in place.
type resolvedRegex struct {
	topics    []string // matching topic names, sorted
	version   int64    // the topic list's version it was resolved at
	timestamp int64    // when, ms since the epoch
}

// compileRegex checks a subscription's regular expression and compiles
// it for full matches.
func compileRegex(expr string) (*regexp.Regexp, error) {
	if len(expr) > math.MaxInt16 {
		return nil, errors.New("pattern too long")
	}
	if _, err := regexp.Compile(expr); err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return nil, errors.New(string(se.Code))
		}
		return nil, err
	}
	return regexp.Compile(`^(?:` + expr + `)$`)
}

// checkRegex is Kafka's throwIfRegularExpressionIsInvalid.
func checkRegex(expr string) (int16, string) {
	if _, err := compileRegex(expr); err != nil {
		return kerr.InvalidRegularExpression.Code, "SubscribedTopicRegex `" + expr + "` is not a valid regular expression: " + err.Error() + "."
	}
	return 0, ""
}

// resolveRegex lists the names that expr matches and that may pass
// (nil: every name); names are sorted.
func resolveRegex(expr string, names []string, may func(topic string) bool) []string {
	re, err := compileRegex(expr)
	if err != nil { // checked when the member brought it
		return []string{}
	}
	out := []string{}
	for _, n := range names {
		if re.MatchString(n) && (may == nil || may(n)) {
			out = append(out, n)
		}
	}
	return out
}

// memberTopics is what m subscribes to: its topic names and its regular
// expression's resolution, sorted.
func (s *consumerState) memberTopics(m *cmember) []string {
	r := s.regexes[m.regex]
	if m.regex == "" || r == nil || len(r.topics) == 0 {
		return m.topics
	}
	out := append(slices.Clone(m.topics), r.topics...)
	slices.Sort(out)
	return slices.Compact(out)
}

// regexesInUse lists the members' regular expressions, sorted.
func (s *consumerState) regexesInUse() []string {
	var out []string
	for _, m := range s.members {
		if m.regex != "" {
			out = append(out, m.regex)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// dropUnusedRegexes deletes the resolutions no member needs any more.
func (c *Coordinator) dropUnusedRegexes(h *hbCtx) {
	s := h.g.cons
	inUse := s.regexesInUse()
	var gone []string
	for expr := range s.regexes {
		if _, ok := slices.BinarySearch(inUse, expr); !ok {
			gone = append(gone, expr)
		}
	}
	slices.Sort(gone)
	for _, expr := range gone {
		delete(s.regexes, expr)
		h.entries = append(h.entries, entry{key: cgRegexKeyBytes(h.g.id, expr)})
	}
}

// refreshRegexes brings the group's resolutions up to date for a
// heartbeat: unused ones are deleted, new ones resolved, and all of them
// resolved again once the topic list changed and the last refresh is
// regexRefreshInterval old. Only topics the heartbeat's client may
// describe are kept.
func (c *Coordinator) refreshRegexes(h *hbCtx) {
	c.dropUnusedRegexes(h)
	s := h.g.cons
	inUse := s.regexesInUse()
	if len(inUse) == 0 || c.cfg.Topics == nil {
		return
	}
	var todo []string
	for _, expr := range inUse {
		if s.regexes[expr] == nil {
			todo = append(todo, expr)
		}
	}
	version := c.cfg.Topics.TopicsVersion()
	all := version != s.regexVersion && !c.now.Before(s.regexCheckedAt.Add(regexRefreshInterval))
	if all {
		todo = inUse
	}
	if len(todo) == 0 {
		return
	}
	names, version := c.cfg.Topics.TopicNames()
	if all {
		s.regexVersion, s.regexCheckedAt = version, c.now
	}
	for _, expr := range todo {
		topics := resolveRegex(expr, names, h.client.MayDescribe)
		if old := s.regexes[expr]; old != nil && slices.Equal(old.topics, topics) {
			continue
		}
		r := &resolvedRegex{topics: topics, version: version, timestamp: c.now.UnixMilli()}
		s.regexes[expr] = r
		h.entries = append(h.entries, entry{cgRegexKeyBytes(h.g.id, expr), cgRegexValue(r)})
	}
}
