package group

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Kafka: a JoinGroup before v4 adds the member at once (no
// MEMBER_ID_REQUIRED).
func TestOldJoinAddsMemberAtOnce(t *testing.T) {
	h := newHarness(t, testConfig())
	j := h.join(joinSpec{group: "g", version: 3})
	h.advance(0)
	if !j.done() || j.resp.ErrorCode != 0 || j.resp.Generation != 1 {
		t.Fatalf("v3 join: %+v", j.resp)
	}
}

// Kafka: the leader is told every member's metadata and the followers
// get the assignment the leader sent in SyncGroup.
func TestLeaderAssignmentReachesFollowers(t *testing.T) {
	h := newHarness(t, testConfig())
	ids := h.stableGroup("g", 3)
	for _, id := range ids {
		s := h.sync("g", id, 1, nil) // Stable: the stored assignment comes back
		if string(s.resp.MemberAssignment) != "assigned-"+id {
			t.Fatalf("member %s got %q", id, s.resp.MemberAssignment)
		}
	}
}

// Kafka: a member leaving (LeaveGroup) makes the group rebalance; the
// remaining member rejoins and the join completes as soon as everybody
// left has rejoined.
func TestLeaveTriggersRebalance(t *testing.T) {
	h := newHarness(t, testConfig())
	ids := h.stableGroup("g", 2)
	if code := h.leave("g", ids[1]); code != 0 {
		t.Fatalf("leave: %d", code)
	}
	if got := h.heartbeat("g", ids[0], 1); got != kerr.RebalanceInProgress.Code {
		t.Fatalf("heartbeat after a leave: %d", got)
	}
	j := h.join(joinSpec{group: "g", member: ids[0]})
	if !j.done() || j.resp.Generation != 2 || len(j.resp.Members) != 1 || j.resp.LeaderID != ids[0] {
		t.Fatalf("rejoin: %+v", j.resp)
	}
	if code := h.heartbeat("g", ids[1], 2); code != kerr.UnknownMemberID.Code {
		t.Fatalf("heartbeat of the member that left: %d", code)
	}
}

// Kafka: members that got their JoinGroup response but do not send
// SyncGroup within the rebalance timeout are removed (DelayedSync).
func TestMissingSyncRemovesMember(t *testing.T) {
	h := newHarness(t, testConfig())
	a, b := h.joinNew("g"), h.joinNew("g")
	h.advance(0)
	leader := a.resp.LeaderID
	other := b.resp.MemberID
	if other == leader {
		other = a.resp.MemberID
	}
	h.sync("g", leader, 1, nil) // the leader's SyncGroup completes the generation
	if h.state("g") != "Stable" {
		t.Fatalf("state %s after the leader's sync", h.state("g"))
	}
	// Both keep their sessions alive; the follower never sends SyncGroup.
	for i := 0; i < 6; i++ { // 1.8 s: within the rebalance timeout (2 s)
		h.advance(300 * time.Millisecond)
		h.heartbeat("g", leader, 1)
		if code := h.heartbeat("g", other, 1); code != 0 {
			t.Fatalf("heartbeat of the follower before the sync deadline: %d", code)
		}
	}
	h.advance(300 * time.Millisecond) // 2.1 s
	if h.state("g") != "PreparingRebalance" {
		t.Fatalf("state %s after the sync deadline", h.state("g"))
	}
	if code := h.heartbeat("g", other, 1); code != kerr.UnknownMemberID.Code {
		t.Fatalf("the member that never synced: %d", code)
	}
}

// The coordinator tells its driver when to tick: the earliest deadline,
// here the session timeout of the only member.
func TestNextDeadline(t *testing.T) {
	h := newHarness(t, testConfig())
	ids := h.stableGroup("g", 1)
	h.advance(400 * time.Millisecond)
	h.heartbeat("g", ids[0], 1)
	next, ok := h.c.NextDeadline()
	if want := h.now.Add(time.Second); !ok || !next.Equal(want) {
		t.Fatalf("next deadline %v (%v), want the session expiry %v", next, ok, want)
	}
	h.c.Stop()
	if _, ok := h.c.NextDeadline(); ok {
		t.Fatal("a stopped coordinator has a deadline")
	}
}

// Replacing a deadline many times keeps the timer heap bounded.
func TestTimersCompact(t *testing.T) {
	tm := newTimers()
	at := time.Unix(0, 0)
	for i := 0; i < 10_000; i++ {
		tm.set(timerKey{kind: timerHeartbeat, member: "m"}, at.Add(time.Duration(i)))
	}
	if len(tm.h) > 1100 {
		t.Fatalf("%d heap entries for one live timer", len(tm.h))
	}
	if next, _ := tm.next(); !next.Equal(at.Add(9999)) {
		t.Fatalf("next %v", next)
	}
}

// Kafka: ILLEGAL_GENERATION for a heartbeat, SyncGroup or OffsetCommit
// from another generation; UNKNOWN_MEMBER_ID for ids the group does not
// know; REBALANCE_IN_PROGRESS for a SyncGroup while preparing.
func TestStaleGenerationAndUnknownMember(t *testing.T) {
	h := newHarness(t, testConfig())
	ids := h.stableGroup("g", 1)
	cases := []struct {
		name string
		got  int16
		want *kerr.Error
	}{
		{"heartbeat, old generation", h.heartbeat("g", ids[0], 0), kerr.IllegalGeneration},
		{"heartbeat, future generation", h.heartbeat("g", ids[0], 5), kerr.IllegalGeneration},
		{"sync, old generation", h.sync("g", ids[0], 0, nil).resp.ErrorCode, kerr.IllegalGeneration},
		{"commit, old generation", h.commit("g", ids[0], 0, "t", map[int32]int64{0: 1}), kerr.IllegalGeneration},
		{"heartbeat, unknown member", h.heartbeat("g", "nobody", 1), kerr.UnknownMemberID},
		{"sync, unknown member", h.sync("g", "nobody", 1, nil).resp.ErrorCode, kerr.UnknownMemberID},
		{"commit, unknown member", h.commit("g", "nobody", 1, "t", map[int32]int64{0: 1}), kerr.UnknownMemberID},
		{"heartbeat, unknown group", h.heartbeat("nogroup", "m", 1), kerr.UnknownMemberID},
		{"join with an id, unknown group", h.join(joinSpec{group: "nogroup", member: "m"}).resp.ErrorCode, kerr.UnknownMemberID},
		{"join with an id the group never gave", h.join(joinSpec{group: "g", member: "m"}).resp.ErrorCode, kerr.UnknownMemberID},
		{"leave, unknown member", h.leave("g", "nobody"), kerr.UnknownMemberID},
	}
	for _, c := range cases {
		if c.got != c.want.Code {
			t.Errorf("%s: code %d, want %s", c.name, c.got, c.want.Message)
		}
	}
	h.join(joinSpec{group: "g", member: ids[0], protocols: []string{"range", "other"}}) // changed metadata: rebalance
	h.join(joinSpec{group: "g2"})
	if h.state("g") != "CompletingRebalance" {
		// a single member rejoining completes at once
		t.Fatalf("state %s", h.state("g"))
	}
}

// Kafka: INCONSISTENT_GROUP_PROTOCOL for a JoinGroup whose protocol type
// differs from the group's, that shares no protocol with the members,
// or that has an empty protocol type or no protocols.
func TestInconsistentProtocols(t *testing.T) {
	h := newHarness(t, testConfig())
	h.stableGroup("g", 1)
	cases := map[string]joinSpec{
		"unknown protocol type": {group: "g", protocolType: "connect"},
		"no common protocol":    {group: "g", protocols: []string{"roundrobin"}},
		"empty protocol type":   {group: "fresh", protocolType: "-"},
		"no protocols":          {group: "fresh2", protocols: []string{}},
	}
	for name, s := range cases {
		if r := h.join(s).resp; r.ErrorCode != kerr.InconsistentGroupProtocol.Code {
			t.Errorf("%s: code %d", name, r.ErrorCode)
		}
	}
	if r := h.join(joinSpec{group: "g", session: 50}).resp; r.ErrorCode != kerr.InvalidSessionTimeout.Code {
		t.Errorf("session timeout under group.min.session.timeout.ms: %d", r.ErrorCode)
	}
	if r := h.join(joinSpec{group: ""}).resp; r.ErrorCode != kerr.InvalidGroupID.Code {
		t.Errorf("empty group id: %d", r.ErrorCode)
	}
}
