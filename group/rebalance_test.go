package group

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Kafka: KIP-394. A JoinGroup v4+ without a member id gets
// MEMBER_ID_REQUIRED and an id made of the client id and a UUID; joining
// again with it adds the member.
func TestFirstJoinRequiresMemberID(t *testing.T) {
	h := newHarness(t, testConfig())
	first := h.join(joinSpec{group: "g"})
	if first.resp.ErrorCode != kerr.MemberIDRequired.Code || !strings.HasPrefix(first.resp.MemberID, "client-") {
		t.Fatalf("first join: code %d member %q", first.resp.ErrorCode, first.resp.MemberID)
	}
	second := h.join(joinSpec{group: "g", member: first.resp.MemberID})
	h.advance(0)
	r := second.resp
	if r.ErrorCode != 0 || r.MemberID != first.resp.MemberID || r.LeaderID != r.MemberID || r.Generation != 1 || len(r.Members) != 1 {
		t.Fatalf("second join: %+v", r)
	}
	if got := h.state("g"); got != "CompletingRebalance" {
		t.Fatalf("state %s after the join", got)
	}
	s := h.sync("g", r.MemberID, 1, map[string][]byte{r.MemberID: []byte("a")})
	if s.resp.ErrorCode != 0 || string(s.resp.MemberAssignment) != "a" || h.state("g") != "Stable" {
		t.Fatalf("sync: %+v, state %s", s.resp, h.state("g"))
	}
}

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

// Kafka: InitialDelayedJoin. An Empty group waits
// group.initial.rebalance.delay.ms, and again for each new member, up to
// the rebalance timeout, so that members starting together share one
// generation.
func TestInitialRebalanceDelayExtendsForNewMembers(t *testing.T) {
	cfg := testConfig()
	cfg.InitialRebalanceDelay = 3 * time.Second
	h := newHarness(t, cfg)
	a := h.join(joinSpec{group: "g", version: 3, rebalance: 60_000})
	h.advance(2 * time.Second)
	b := h.join(joinSpec{group: "g", version: 3, rebalance: 60_000})
	h.advance(time.Second) // 3 s: the first delay ends, but b arrived
	if a.done() || b.done() {
		t.Fatal("the rebalance completed although a new member arrived during the delay")
	}
	h.advance(3 * time.Second) // 6 s: a second delay without newcomers
	if !a.done() || !b.done() || a.resp.Generation != 1 || b.resp.Generation != 1 {
		t.Fatalf("after the delays: a %+v b %+v", a.resp, b.resp)
	}
	if len(a.resp.Members)+len(b.resp.Members) != 2 {
		t.Fatal("the leader's response does not list both members")
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

// Kafka: session.timeout.ms. A member that stops heartbeating is removed
// when its session expires and the group rebalances without it.
func TestSessionTimeoutRemovesMember(t *testing.T) {
	h := newHarness(t, testConfig())
	ids := h.stableGroup("g", 2) // session timeout 1 s
	for i := 0; i < 3; i++ {
		h.advance(300 * time.Millisecond)
		if code := h.heartbeat("g", ids[0], 1); code != 0 {
			t.Fatalf("heartbeat %d: %d", i, code)
		}
	}
	h.advance(300 * time.Millisecond)
	// 1.2 s: the silent member's session (1 s) has expired.
	if got := h.heartbeat("g", ids[0], 1); got != kerr.RebalanceInProgress.Code {
		t.Fatalf("heartbeat after the other's session expired: %d", got)
	}
	j := h.join(joinSpec{group: "g", member: ids[0]})
	if !j.done() || len(j.resp.Members) != 1 || j.resp.Generation != 2 {
		t.Fatalf("rejoin: %+v", j.resp)
	}
}

// Kafka: rebalance.timeout.ms. Members that do not rejoin a rebalance in
// time are removed and the generation completes with those that did.
func TestRebalanceTimeoutDropsMembersThatDoNotRejoin(t *testing.T) {
	h := newHarness(t, testConfig())
	ids := h.stableGroup("g", 2)
	j := h.join(joinSpec{group: "g", member: ids[0]}) // the leader rejoins: rebalance
	if j.done() {
		t.Fatal("the join completed without the other member")
	}
	for i := 0; i < 7; i++ { // 2.1 s; the other keeps heartbeating but never rejoins
		h.advance(300 * time.Millisecond)
		h.heartbeat("g", ids[1], 1)
	}
	if !j.done() || j.resp.Generation != 2 || len(j.resp.Members) != 1 {
		t.Fatalf("after the rebalance timeout: %+v", j.resp)
	}
	if code := h.heartbeat("g", ids[1], 1); code != kerr.UnknownMemberID.Code {
		t.Fatalf("heartbeat of the dropped member: %d", code)
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

// Kafka: KIP-345. A static member restarting (joining with its
// group.instance.id and no member id) takes over its slot in a Stable
// group without a rebalance: same generation, its stored assignment,
// and the old member id is fenced.
func TestStaticMemberRejoinsWithoutRebalance(t *testing.T) {
	h := newHarness(t, testConfig())
	a := h.join(joinSpec{group: "g", instance: "i1"}) // static: no MEMBER_ID_REQUIRED
	b := h.joinNew("g")
	h.advance(0)
	if !a.done() || a.resp.ErrorCode != 0 || !b.done() {
		t.Fatalf("joins: %+v %+v", a.resp, b.resp)
	}
	oldID := a.resp.MemberID
	leader := a.resp.LeaderID
	h.sync("g", b.resp.MemberID, 1, nil)
	h.sync("g", leader, 1, map[string][]byte{oldID: []byte("for-i1"), b.resp.MemberID: []byte("for-b")})

	again := h.join(joinSpec{group: "g", instance: "i1"})
	r := again.resp
	if !again.done() || r.ErrorCode != 0 || r.Generation != 1 || r.MemberID == oldID || h.state("g") != "Stable" {
		t.Fatalf("static rejoin: %+v, state %s", r, h.state("g"))
	}
	if code := h.heartbeatStatic("g", oldID, "i1", 1); code != kerr.FencedInstanceID.Code {
		t.Fatalf("old member id: %d, want FENCED_INSTANCE_ID", code)
	}
	if s := h.sync("g", r.MemberID, 1, nil); string(s.resp.MemberAssignment) != "for-i1" {
		t.Fatalf("assignment after the static rejoin: %q", s.resp.MemberAssignment)
	}
	if code := h.heartbeat("g", b.resp.MemberID, 1); code != 0 {
		t.Fatalf("the other member saw a rebalance: %d", code)
	}
}

// Kafka: LeaveGroup v3+ removes a static member by instance id alone.
func TestLeaveByInstanceID(t *testing.T) {
	h := newHarness(t, testConfig())
	h.join(joinSpec{group: "g", instance: "i1"})
	h.advance(0)
	resp := h.c.Leave(h.now, leaveByInstance("g", "i1"))
	if resp.ErrorCode != 0 || resp.Members[0].ErrorCode != 0 {
		t.Fatalf("leave by instance id: %+v", resp)
	}
	if got := h.state("g"); got != "PreparingRebalance" && got != "Empty" {
		t.Fatalf("state %s after the only member left", got)
	}
}

// Kafka: group.max.size. A new member beyond it gets GROUP_MAX_SIZE_REACHED.
func TestGroupMaxSize(t *testing.T) {
	cfg := testConfig()
	cfg.MaxSize = 1
	h := newHarness(t, cfg)
	h.stableGroup("g", 1)
	first := h.join(joinSpec{group: "g"})
	second := h.join(joinSpec{group: "g", member: first.resp.MemberID})
	if second.resp.ErrorCode != kerr.GroupMaxSizeReached.Code {
		t.Fatalf("join beyond group.max.size: %+v", second.resp)
	}
}

// Kafka: onGroupUnloaded. Stopping answers parked requests
// NOT_COORDINATOR; later requests get COORDINATOR_NOT_AVAILABLE.
func TestStopAnswersParkedRequests(t *testing.T) {
	cfg := testConfig()
	cfg.InitialRebalanceDelay = time.Second
	h := newHarness(t, cfg)
	j := h.joinNew("g")
	h.c.Stop()
	if !j.done() || j.resp.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("parked join after stop: %+v", j.resp)
	}
	if code := h.heartbeat("g", "m", 1); code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("heartbeat after stop: %d", code)
	}
}

// Kafka: while a partition loads, group requests get
// COORDINATOR_LOAD_IN_PROGRESS, except Heartbeat (answered blindly) and
// SyncGroup (REBALANCE_IN_PROGRESS, so the member rejoins).
func TestLoadingAnswers(t *testing.T) {
	h := newHarness(t, testConfig())
	h.c.BeginLoad()
	if r := h.join(joinSpec{group: "g"}).resp; r.ErrorCode != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("join while loading: %d", r.ErrorCode)
	}
	if code := h.heartbeat("g", "m", 1); code != 0 {
		t.Fatalf("heartbeat while loading: %d", code)
	}
	if r := h.sync("g", "m", 1, nil).resp; r.ErrorCode != kerr.RebalanceInProgress.Code {
		t.Fatalf("sync while loading: %d", r.ErrorCode)
	}
	if code := h.commit("g", "", -1, "t", map[int32]int64{0: 1}); code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("commit while loading: %d", code)
	}
	fresh := New(1, testConfig(), &MemoryLog{})
	if code := fresh.Heartbeat(h.now, heartbeatReq("g")).ErrorCode; code != kerr.NotCoordinator.Code {
		t.Fatalf("heartbeat to a coordinator never loaded: %d", code)
	}
}
