package retention

import (
	"fmt"
	"time"

	"github.com/varve/varve/segment"
)

// Rule names a retention rule, for results and logs.
type Rule string

// Kafka's three rules, in the order they run (UnifiedLog.deleteOldSegments).
const (
	RuleStartOffset Rule = "log-start-offset" // deleteLogStartOffsetBreachedSegments
	RuleSize        Rule = "retention.bytes"  // deleteRetentionSizeBreachedSegments
	RuleTime        Rule = "retention.ms"     // deleteRetentionMsBreachedSegments
)

// Result says what one Enforce call removed.
type Result struct {
	// Deleted lists the removed segments, oldest first. Their files were
	// renamed *.deleted and go after file.delete.delay.ms.
	Deleted []segment.SegmentInfo
	// ByRule counts the removed segments per rule.
	ByRule map[Rule]int
	// Bytes is the total size of the removed segments.
	Bytes int64
	// StartOffset is the log start offset afterwards.
	StartOffset int64
}

// Enforce applies p to l once, as Kafka's UnifiedLog.deleteOldSegments:
// the log-start-offset rule, then (when the policy includes delete)
// retention.bytes, then retention.ms. Each rule walks the segments oldest
// first and stops at the first one it keeps, so only a prefix of the log
// goes. No segment goes unless every offset in it is below upperBound
// (the broker passes the high watermark, a library user l.EndOffset()), and
// an empty active segment never goes; a non-empty active segment that
// qualifies is rolled first, so the log keeps one segment. now judges
// retention.ms.
//
// Enforce reads no segment data: its cost grows with the number of
// segments, not their size.
func Enforce(l *segment.Log, p Policy, upperBound int64, now time.Time) (Result, error) {
	res := Result{ByRule: map[Rule]int{}, StartOffset: l.StartOffset()}
	if err := p.validate(); err != nil {
		return res, err
	}
	rules := []Rule{RuleStartOffset}
	if p.CleanupPolicy.Delete() {
		rules = append(rules, RuleSize, RuleTime)
	}
	for _, r := range rules {
		if err := applyRule(l, r, p, upperBound, now, &res); err != nil {
			return res, err
		}
	}
	res.StartOffset = l.StartOffset()
	return res, nil
}

// applyRule deletes the prefix of segments that rule r selects.
func applyRule(l *segment.Log, r Rule, p Policy, upperBound int64, now time.Time, res *Result) error {
	segs := l.Segments()
	pred := newPredicate(r, p, l, now)
	if pred == nil {
		return nil
	}
	n := deletablePrefix(segs, upperBound, pred)
	if n == 0 {
		return nil
	}
	removed, err := l.DeleteSegmentsBefore(segs[n-1].NextOffset)
	if err != nil {
		return fmt.Errorf("retention %s: %s: %w", r, l.Dir(), err)
	}
	res.Deleted = append(res.Deleted, removed...)
	res.ByRule[r] += len(removed)
	for _, s := range removed {
		res.Bytes += s.Size
	}
	return nil
}

// predicate says whether segs[i] may go; it may keep state across calls
// (the size rule counts down), and is called in order until it refuses.
type predicate func(segs []segment.SegmentInfo, i int) bool

// newPredicate returns rule r's test, or nil when the rule is off.
func newPredicate(r Rule, p Policy, l *segment.Log, now time.Time) predicate {
	switch r {
	case RuleStartOffset:
		start := l.StartOffset()
		// Kafka: nextSegmentOpt.exists(_.baseOffset <= logStartOffset).
		return func(segs []segment.SegmentInfo, i int) bool {
			return i+1 < len(segs) && segs[i+1].BaseOffset <= start
		}
	case RuleSize:
		return sizePredicate(p, l.Size())
	case RuleTime:
		if !p.timeRuleOn() {
			return nil
		}
		nowMs, limit := now.UnixMilli(), p.RetentionMs.Milliseconds()
		// Kafka: startMs - segment.largestTimestamp > retentionMs.
		return func(segs []segment.SegmentInfo, i int) bool {
			return nowMs-segs[i].LargestTimestamp > limit
		}
	}
	return nil
}

// sizePredicate is Kafka's retention.bytes rule: diff = size -
// retention.bytes; a segment goes while diff - its size >= 0.
func sizePredicate(p Policy, size int64) predicate {
	if !p.sizeRuleOn() || size < p.RetentionBytes {
		return nil
	}
	diff := size - p.RetentionBytes
	return func(segs []segment.SegmentInfo, i int) bool {
		if diff-segs[i].Size < 0 {
			return false
		}
		diff -= segs[i].Size
		return true
	}
}

// deletablePrefix is Kafka's UnifiedLog.deletableSegments: the number of
// leading segments that pred accepts, each wholly below upperBound (the
// next segment's base, or the log end for the last, must not exceed it),
// never counting an empty last segment.
func deletablePrefix(segs []segment.SegmentInfo, upperBound int64, pred predicate) int {
	n := 0
	for i := range segs {
		last := i == len(segs)-1
		if last && segs[i].Size == 0 {
			break
		}
		bound := segs[i].NextOffset
		if !last {
			bound = segs[i+1].BaseOffset
		}
		if upperBound < bound || !pred(segs, i) {
			break
		}
		n++
	}
	return n
}
