package group

import (
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumerProtocolType is the protocol type of Kafka's consumers, the
// one whose member metadata the coordinator can read (subscriptions).
const consumerProtocolType = "consumer"

// topicPartition names a partition whose offset a group commits.
type topicPartition struct {
	topic     string
	partition int32
}

// committed is a committed offset (Kafka's OffsetAndMetadata).
type committed struct {
	offset          int64
	leaderEpoch     int32 // -1: unknown
	metadata        string
	commitTimestamp int64 // ms
	expireTimestamp int64 // ms; -1: none (OffsetCommit v2-v4 could set one)
}

// group is one classic group (Kafka's GroupMetadata): its state
// machine, members and committed offsets.
type group struct {
	id         string
	state      State
	stateTime  time.Time // when state was entered (currentStateTimestamp); zero: unknown
	generation int32

	protocolType string // "" = none: a group that only stores offsets
	protocol     string // the selected protocol; "" = none
	leader       string // "" = none

	members   map[string]*member
	order     []string          // member ids in join order: leader election picks the first
	static    map[string]string // group.instance.id -> member id
	pending   map[string]bool   // dynamic members told MEMBER_ID_REQUIRED, not yet joined
	toSync    map[string]bool   // members that must still send SyncGroup this generation
	supported map[string]int    // protocol name -> members supporting it
	awaiting  int               // members with a parked JoinGroup

	// newMemberAdded lets the initial rebalance delay extend itself
	// while new members keep arriving (Kafka's InitialDelayedJoin).
	newMemberAdded bool
	join           *joinTimer // the rebalance in progress, if any

	// subscribed lists the topics the members subscribe to, decoded from
	// consumer protocol metadata; nil when unknown (not a consumer group,
	// or undecodable metadata).
	subscribed map[string]bool

	offsets map[topicPartition]committed

	// cons is set for a KIP-848 consumer group (consumer.go): its
	// members and assignments live there, members stays empty.
	cons *consumerState

	bounds    bounds
	metaBytes int64 // what the members hold (bound.go): the sum of their charged
}

// joinTimer is a group's pending rebalance completion: Kafka's
// DelayedJoin, or InitialDelayedJoin when initial is set.
type joinTimer struct {
	initial          bool
	delay, remaining time.Duration
}

func newGroup(id string, now time.Time, b bounds) *group {
	return &group{
		id: id, state: Empty, stateTime: now, bounds: b,
		members: map[string]*member{}, static: map[string]string{}, pending: map[string]bool{},
		toSync: map[string]bool{}, supported: map[string]int{}, offsets: map[topicPartition]committed{},
	}
}

func (g *group) is(s State) bool { return g.state == s }

// transition moves the group to s, stamping the state time. A transition
// Kafka forbids is a bug in the coordinator, not bad input: it is
// returned as an error for the caller to log, and the state is kept.
func (g *group) transition(s State, now time.Time) error {
	if !canEnter(g.state, s) {
		return fmt.Errorf("group %q: illegal transition %s -> %s", g.id, g.state, s)
	}
	g.state, g.stateTime = s, now
	return nil
}

func (g *group) has(id string) bool      { _, ok := g.members[id]; return ok }
func (g *group) isLeader(id string) bool { return g.leader != "" && g.leader == id }

// canRebalance: Stable, CompletingRebalance and Empty groups may start a
// rebalance.
func (g *group) canRebalance() bool { return canEnter(g.state, PreparingRebalance) }

// staticMember returns the member id holding instance id.
func (g *group) staticMember(instanceID string) (string, bool) {
	id, ok := g.static[instanceID]
	return id, ok
}

// add puts a new member in the group, parked with reply if non-nil.
func (g *group) add(m *member, reply JoinReply, version int16) {
	if m.static() {
		g.static[m.instanceID] = m.id
	}
	if len(g.members) == 0 {
		g.protocolType = m.protocolType
	}
	if g.leader == "" {
		g.leader = m.id
	}
	g.members[m.id] = m
	g.order = append(g.order, m.id)
	g.countProtocols(m, 1)
	m.joinReply, m.joinVersion = reply, version
	if reply != nil {
		g.awaiting++
	}
	delete(g.pending, m.id)
}

// remove drops a member (or a pending member); the leader passes to the
// next member in join order.
func (g *group) remove(id string) {
	if m, ok := g.members[id]; ok {
		g.release(m)
		g.countProtocols(m, -1)
		if m.awaitingJoin() {
			g.awaiting--
		}
		if m.static() {
			delete(g.static, m.instanceID)
		}
		delete(g.members, id)
		g.order = slices.DeleteFunc(g.order, func(s string) bool { return s == id })
	}
	if g.isLeader(id) {
		g.leader = ""
		if len(g.order) > 0 {
			g.leader = g.order[0]
		}
	}
	delete(g.pending, id)
	delete(g.toSync, id)
}

func (g *group) countProtocols(m *member, delta int) {
	for _, p := range m.protocols {
		g.supported[p.name] += delta
		if g.supported[p.name] <= 0 {
			delete(g.supported, p.name)
		}
	}
}

// update replaces a member's protocols and timeouts and parks it with
// reply (or unparks it when reply is nil). A JoinGroup it was already
// parked with is answered REBALANCE_IN_PROGRESS: the client resent it.
func (g *group) update(m *member, protocols []protocol, rebalanceTimeout, sessionTimeout int32, reply JoinReply, version int16) {
	if m.awaitingJoin() && reply != nil {
		old := m.joinReply
		old(joinError(m.id, kerr.RebalanceInProgress.Code))
	}
	g.countProtocols(m, -1)
	m.protocols = protocols
	g.countProtocols(m, 1)
	m.rebalanceTimeout, m.sessionTimeout = rebalanceTimeout, sessionTimeout
	switch {
	case reply != nil && !m.awaitingJoin():
		g.awaiting++
	case reply == nil && m.awaitingJoin():
		g.awaiting--
	}
	m.joinReply, m.joinVersion = reply, version
}

// answerJoin answers a parked JoinGroup, if any.
func (g *group) answerJoin(m *member, resp *kmsg.JoinGroupResponse) {
	if m.joinReply == nil {
		return
	}
	reply := m.joinReply
	m.joinReply = nil
	g.awaiting--
	reply(resp)
}

// answerSync answers a parked SyncGroup, if any.
func (g *group) answerSync(m *member, resp *kmsg.SyncGroupResponse) {
	if m.syncReply == nil {
		return
	}
	reply := m.syncReply
	m.syncReply = nil
	reply(resp)
}

// supportsProtocols reports whether a member with this protocol type
// and these protocols may join (Kafka's supportsProtocols): an empty
// group takes any non-empty type with at least one protocol; otherwise
// the type must match and one protocol must be supported by every
// member.
func (g *group) supportsProtocols(protocolType string, ps []protocol) bool {
	if g.is(Empty) {
		return protocolType != "" && len(ps) > 0
	}
	if g.protocolType != protocolType {
		return false
	}
	for _, p := range ps {
		if g.supported[p.name] == len(g.members) {
			return true
		}
	}
	return false
}

// selectProtocol picks the protocol every member supports that most
// members list first among those (Kafka's selectProtocol); ties go to
// the earlier candidate in the leader's preference order, so the choice
// is deterministic.
func (g *group) selectProtocol() string {
	var candidates []string
	if lm := g.members[g.leader]; lm != nil {
		for _, p := range lm.protocols {
			if g.supported[p.name] == len(g.members) {
				candidates = append(candidates, p.name)
			}
		}
	}
	votes := map[string]int{}
	for _, id := range g.order {
		for _, p := range g.members[id].protocols {
			if slices.Contains(candidates, p.name) {
				votes[p.name]++
				break
			}
		}
	}
	best := ""
	for _, c := range candidates {
		if best == "" || votes[c] > votes[best] {
			best = c
		}
	}
	return best
}

// rebalanceTimeout is the largest rebalance timeout of the members.
func (g *group) rebalanceTimeout() time.Duration {
	var ms int32
	for _, m := range g.members {
		ms = max(ms, m.rebalanceTimeout)
	}
	return time.Duration(ms) * time.Millisecond
}

// allJoined: every member is parked in JoinGroup and no member told
// MEMBER_ID_REQUIRED is still expected.
func (g *group) allJoined() bool {
	return len(g.members) == g.awaiting && len(g.pending) == 0
}

// electJoinedLeader makes sure the leader is a member that rejoined,
// and reports whether there is one (Kafka's maybeElectNewJoinedLeader).
func (g *group) electJoinedLeader() bool {
	if g.leader == "" {
		return false
	}
	if g.members[g.leader].awaitingJoin() {
		return true
	}
	for _, id := range g.order {
		if g.members[id].awaitingJoin() {
			g.leader = id
			return true
		}
	}
	return false
}

// leaderMembers is what the leader's JoinGroup response lists: every
// member with its metadata for the selected protocol.
func (g *group) leaderMembers() []kmsg.JoinGroupResponseMember {
	out := make([]kmsg.JoinGroupResponseMember, 0, len(g.order))
	for _, id := range g.order {
		m := g.members[id]
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID, jm.InstanceID, jm.ProtocolMetadata = m.id, m.instanceIDPtr(), m.metadata(g.protocol)
		out = append(out, jm)
	}
	return out
}

// computeSubscribed decodes the members' subscriptions when the group
// runs the consumer protocol; nil when they cannot be known.
func (g *group) computeSubscribed() map[string]bool {
	switch {
	case g.protocolType != consumerProtocolType:
		return nil
	case len(g.members) == 0:
		return map[string]bool{}
	case g.protocol == "":
		return nil
	}
	out := map[string]bool{}
	for _, m := range g.members {
		var meta kmsg.ConsumerMemberMetadata
		if err := meta.ReadFrom(m.metadata(g.protocol)); err != nil {
			return nil
		}
		for _, t := range meta.Topics {
			out[t] = true
		}
	}
	return out
}

// subscribedTo reports whether members consume topic; unknown
// subscriptions count as yes, the safe answer.
func (g *group) subscribedTo(topic string) bool {
	if g.subscribed == nil {
		return true
	}
	return g.subscribed[topic]
}
