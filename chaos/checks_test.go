package chaos

import (
	"strings"
	"testing"
	"time"
)

// ms is a time on a hand-made history's clock.
func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// build makes a finished history from hand-written operations.
func build(appends []Append, polls []Poll, final map[int32][]Rec) *History {
	h := NewHistory()
	for i := range appends {
		appends[i].ID = i
	}
	for i := range polls {
		polls[i].ID = i
	}
	h.mu.appends, h.mu.polls, h.Final = appends, polls, final
	return h
}

func ok(client string, p int32, v string, inv, done int, off int64) Append {
	return Append{Client: client, Partition: p, Value: v, Invoke: ms(inv), Complete: ms(done), Outcome: OK, Offset: off}
}

func unknown(client string, p int32, v string, inv, done int) Append {
	return Append{Client: client, Partition: p, Value: v, Invoke: ms(inv), Complete: ms(done), Outcome: Unknown, Err: "timed out"}
}

func recs(p int32, from int64, values ...string) []Rec {
	out := make([]Rec, len(values))
	for i, v := range values {
		out[i] = Rec{p, from + int64(i), v}
	}
	return out
}

func poll(consumer string, inv, done int, rs ...Rec) Poll {
	return Poll{Consumer: consumer, Invoke: ms(inv), Complete: ms(done), Records: rs}
}

// cleanAppends: two producers on p0 with overlapping appends, one that
// timed out but happened (c), one that timed out and did not (lost-in-
// flight, never acknowledged), and one append on p1.
func cleanAppends() []Append {
	return []Append{
		ok("p1", 0, "a", 0, 10, 0),
		ok("p2", 0, "b", 5, 12, 1),
		unknown("p1", 0, "c", 11, 40),
		unknown("p2", 0, "never", 13, 40),
		ok("p1", 0, "d", 41, 50, 3),
		ok("p2", 1, "x", 1, 3, 0),
	}
}

func cleanPolls() []Poll {
	return []Poll{
		{Consumer: "assigned", Assigned: []int32{0, 1}, FromStart: true},
		poll("assigned", 0, 15, recs(0, 0, "a", "b")...),
		poll("assigned", 15, 45, append(recs(0, 2, "c"), recs(1, 0, "x")...)...),
		poll("assigned", 45, 55, recs(0, 3, "d")...),
		{Consumer: "group", Assigned: []int32{0}},
		poll("group", 20, 30, recs(0, 1, "b", "c")...),
		{Consumer: "group", Assigned: []int32{0}}, // a rebalance: back to the committed offset
		poll("group", 42, 52, recs(0, 1, "b", "c", "d")...),
	}
}

func cleanFinal() map[int32][]Rec {
	return map[int32][]Rec{0: recs(0, 0, "a", "b", "c", "d"), 1: recs(1, 0, "x")}
}

func clean() *History { return build(cleanAppends(), cleanPolls(), cleanFinal()) }

// A history with acknowledged, indeterminate and unacknowledged appends,
// an assigned consumer from the start and a group consumer that
// rebalances back to a committed offset has no anomaly.
func TestCleanHistoryHasNoAnomaly(t *testing.T) {
	r := Check(clean())
	if !r.OK() {
		t.Fatal(r)
	}
	if len(r.Checked) != len(Checkers) {
		t.Fatalf("ran %v", r.Checked)
	}
}

// expect asserts that checker found exactly n anomalies in h, each
// naming every string in mention, and prints them.
func expect(t *testing.T, h *History, checker string, n int, mention ...string) {
	t.Helper()
	r := Check(h)
	got := r.Of(checker)
	t.Logf("%s", r)
	if len(got) != n {
		t.Fatalf("%s found %d anomalies, want %d", checker, len(got), n)
	}
	for _, a := range got {
		for _, m := range mention {
			if !strings.Contains(a.String(), m) {
				t.Errorf("%s anomaly does not mention %q:\n%s", checker, m, a)
			}
		}
	}
}

// Kafka: with acks=all an acknowledged record is never lost (Jepsen
// 2013 found such losses when the ISR shrank to a leader that died).
func TestLostFindsAcknowledgedValueMissingFromFinalRead(t *testing.T) {
	f := cleanFinal()
	f[0] = recs(0, 0, "a", "b", "c") // "d" was acknowledged at 3
	expect(t, build(cleanAppends(), cleanPolls(), f), "lost", 1, `"d"`, "append#4")
}

// Kafka: a consumer reads only below the high watermark, so a value it
// read is committed and must survive, acknowledged or not ("c" timed out).
func TestLostFindsReadValueMissingFromFinalRead(t *testing.T) {
	f := cleanFinal()
	f[0] = recs(0, 0, "a", "b", "d")
	expect(t, build(cleanAppends(), cleanPolls(), f), "lost", 1, `"c" was read`, "poll#2")
}

// A value no producer wrote (or one the broker refused) must not be read.
func TestUnwrittenFindsPhantomAndRefusedValues(t *testing.T) {
	as := cleanAppends()
	as[3].Outcome, as[3].Err = Failed, "MESSAGE_TOO_LARGE"
	f := cleanFinal()
	f[1] = recs(1, 0, "x", "ghost", "never")
	expect(t, build(as, cleanPolls(), f), "unwritten", 2)
}

// Kafka: KIP-98 idempotence: a retried batch is written once.
func TestDuplicatedFindsValueAtTwoOffsets(t *testing.T) {
	f := cleanFinal()
	f[0] = recs(0, 0, "a", "b", "c", "d", "b")
	expect(t, build(cleanAppends(), cleanPolls(), f), "duplicated", 1, `p0@1="b"`, `p0@4="b"`)
}

// Kafka: KIP-101/KIP-279: after a leader change two readers must never
// see different records at one offset (divergent logs).
func TestInconsistentOffsetsFindsTwoValuesAtOneOffset(t *testing.T) {
	ps := cleanPolls()
	ps[5] = poll("group", 20, 30, recs(0, 1, "b", "z")...)
	expect(t, build(cleanAppends(), ps, cleanFinal()), "inconsistent-offsets", 1, "p0@2", `"c"`, `"z"`, "poll#5")
}

// An acknowledgement is a claim about an offset too.
func TestInconsistentOffsetsFindsAckDisagreeingWithReads(t *testing.T) {
	as := cleanAppends()
	as[4].Offset = 2 // acknowledged "d" at 2, but 2 holds "c"
	expect(t, build(as, cleanPolls(), cleanFinal()), "inconsistent-offsets", 1, "acknowledged to append#4", `"c"`)
}

// Kafka: a consumer's position only moves forward between assignments.
func TestNonMonotonicFindsConsumerGoingBack(t *testing.T) {
	ps := cleanPolls()
	ps[6] = poll("group", 31, 41) // an empty poll where the rebalance was
	expect(t, build(cleanAppends(), ps, cleanFinal()), "nonmonotonic-poll", 1, "from offset 2 back to 1", "poll#5", "poll#7")
}

// Offsets are dense: a reader from the start sees every offset.
func TestSkippedFindsGapsInPollsAndFinalRead(t *testing.T) {
	ps := cleanPolls()
	ps[1] = poll("assigned", 0, 15, recs(0, 1, "b")...)              // the first record is not the log start
	ps[3] = poll("assigned", 45, 55, Rec{0, 3, "d"}, Rec{1, 2, "?"}) // p1 jumps 0 -> 2
	f := cleanFinal()
	f[0] = append(recs(0, 0, "a", "b", "c"), Rec{0, 4, "d"})
	expect(t, build(cleanAppends(), ps, f), "skipped-offsets", 3)
}

// An append of v returning offset o is linearizable iff o is the log's
// length at its linearization point: an append invoked after another
// completed cannot take an earlier offset, though every reader agrees.
func TestLinearizableFindsReorderedAcknowledgements(t *testing.T) {
	as := []Append{ok("p1", 0, "first", 0, 10, 1), ok("p2", 0, "second", 20, 30, 0)}
	h := build(as, nil, map[int32][]Rec{0: recs(0, 0, "second", "first")})
	expect(t, h, "linearizable", 1, "p0", `"first"`)
	if r := Check(h); len(r.Anomalies) != 1 {
		t.Fatalf("only the linearizability checker should see this history:\n%s", r)
	}
}

// A timed-out append that happened must take effect between its invoke
// and the completion of the first poll that saw it. Here "u" is at
// offset 2 and a poll saw it before "b" (offset 1) was invoked: legal
// while nothing saw "u", illegal once a poll did.
func TestLinearizableBoundsIndeterminateAppendsByFirstObservation(t *testing.T) {
	as := func() []Append {
		return []Append{ok("p1", 0, "a", 0, 5, 0), unknown("p2", 0, "u", 1, 40), ok("p1", 0, "b", 20, 30, 1)}
	}
	final := map[int32][]Rec{0: recs(0, 0, "a", "b", "u")}
	expect(t, build(as(), nil, final), "linearizable", 0)
	expect(t, build(as(), []Poll{poll("c", 6, 10, Rec{0, 2, "u"})}, final), "linearizable", 1, `"u"`)
}

// A poll cannot return a value before its append was invoked.
func TestLinearizableFindsReadBeforeInvoke(t *testing.T) {
	as := []Append{ok("p1", 0, "a", 20, 30, 0)}
	expect(t, build(as, []Poll{poll("c", 5, 10, Rec{0, 0, "a"})}, map[int32][]Rec{0: recs(0, 0, "a")}),
		"linearizable", 1, "before its append was invoked")
}

// Offsets nobody acknowledged must still be accounted for: the final
// read's end offset is part of the history.
func TestLinearizableCountsTheFinalEndOffset(t *testing.T) {
	as := []Append{ok("p1", 0, "a", 0, 5, 0)}
	h := build(as, nil, map[int32][]Rec{0: recs(0, 0, "a", "b")}) // "b" was never appended
	expect(t, h, "linearizable", 1, "end() -> 2")
}
