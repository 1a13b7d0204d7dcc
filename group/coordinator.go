package group

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// status is whether a coordinator serves its partition's groups.
type status int8

const (
	notCoordinator status = iota // the partition is not (yet) this node's: NOT_COORDINATOR
	loading                      // replaying the partition: COORDINATOR_LOAD_IN_PROGRESS
	active                       // serving
	stopped                      // shut down: COORDINATOR_NOT_AVAILABLE
)

// Coordinator is the group coordinator of one __consumer_offsets
// partition: every group that PartitionFor maps there, its members,
// rebalances and committed offsets (Kafka's GroupCoordinator and
// GroupMetadataManager, for one partition).
//
// It is a deterministic state machine: it has no goroutines and reads
// no clock. Every method takes the current time; Tick fires the
// deadlines that have passed and NextDeadline says when the next one
// is due. Replies to parked JoinGroup and SyncGroup requests are called
// from inside whichever method completes them. Records are written to
// its Log synchronously. A Coordinator is not safe for concurrent use:
// the caller serialises every call (package doc).
type Coordinator struct {
	partition int32
	cfg       Config
	log       Log
	bounds    bounds

	status status
	now    time.Time
	groups map[string]*group
	timers timers
	load   *loader
	txn    txnOffsets // txn_offsets.go
}

// New returns the coordinator of partition, which does not serve until
// it is loaded (BeginLoad, Load, FinishLoad).
func New(partition int32, cfg Config, log Log) *Coordinator {
	cfg = cfg.withDefaults()
	return &Coordinator{partition: partition, cfg: cfg, log: log,
		bounds: bounds{budget: cfg.MetadataBudget, maxGroup: cfg.MaxGroupMetadataBytes},
		groups: map[string]*group{}, timers: newTimers(), txn: newTxnOffsets()}
}

// Partition is the __consumer_offsets partition this coordinator owns.
func (c *Coordinator) Partition() int32 { return c.partition }

// Active reports whether the coordinator serves requests.
func (c *Coordinator) Active() bool { return c.status == active }

// NextDeadline is when Tick next has something to do.
func (c *Coordinator) NextDeadline() (time.Time, bool) {
	if c.status != active {
		return time.Time{}, false
	}
	return c.timers.next()
}

// Tick fires every deadline at or before now: session and rebalance
// timeouts, the initial rebalance delay, and the offsets retention
// check.
func (c *Coordinator) Tick(now time.Time) {
	c.now = now
	for c.status == active {
		k, ok := c.timers.due(now)
		if !ok {
			return
		}
		c.fire(k)
	}
}

func (c *Coordinator) fire(k timerKey) {
	if k.kind == timerRetention {
		c.expireOffsets()
		c.timers.set(retentionKey, c.now.Add(c.cfg.RetentionCheckInterval))
		return
	}
	g := c.groups[k.group]
	if g == nil {
		return
	}
	switch k.kind {
	case timerHeartbeat:
		c.expireHeartbeat(g, k.member)
	case timerPending:
		c.expirePending(g, k.member)
	case timerJoin:
		c.expireJoin(g)
	case timerSync:
		c.expireSync(g)
	case timerConsumerSession, timerConsumerRevoke:
		c.expireConsumerMember(g, k.member, k.kind == timerConsumerRevoke)
	}
}

var retentionKey = timerKey{kind: timerRetention}

func heartbeatKey(g, m string) timerKey { return timerKey{kind: timerHeartbeat, group: g, member: m} }
func pendingKey(g, m string) timerKey   { return timerKey{kind: timerPending, group: g, member: m} }
func joinKey(g string) timerKey         { return timerKey{kind: timerJoin, group: g} }
func syncKey(g string) timerKey         { return timerKey{kind: timerSync, group: g} }
func consumerSessionKey(g, m string) timerKey {
	return timerKey{kind: timerConsumerSession, group: g, member: m}
}
func consumerRevokeKey(g, m string) timerKey {
	return timerKey{kind: timerConsumerRevoke, group: g, member: m}
}

// Stop unloads every group (Kafka's onGroupUnloaded): parked JoinGroup
// and SyncGroup requests are answered NOT_COORDINATOR so clients look
// for the coordinator again, and every later request gets
// COORDINATOR_NOT_AVAILABLE.
func (c *Coordinator) Stop() {
	for _, id := range c.sortedGroupIDs() {
		g := c.groups[id]
		for _, mid := range append([]string(nil), g.order...) {
			m := g.members[mid]
			g.answerJoin(m, joinError(m.id, kerr.NotCoordinator.Code))
			g.answerSync(m, syncError(kerr.NotCoordinator.Code))
			g.release(m)
		}
		g.state = Dead
	}
	c.groups, c.timers, c.load, c.txn = map[string]*group{}, newTimers(), nil, newTxnOffsets()
	c.status = stopped
}

// check is Kafka's validateGroupStatus: the group id must be valid for
// the API, and the coordinator must own and have loaded the partition.
func (c *Coordinator) check(groupID string, key kmsg.Key) int16 {
	if groupID == "" && !emptyGroupIDAllowed(key) {
		return kerr.InvalidGroupID.Code
	}
	switch c.status {
	case stopped:
		return kerr.CoordinatorNotAvailable.Code
	case loading:
		return kerr.CoordinatorLoadInProgress.Code
	case notCoordinator:
		return kerr.NotCoordinator.Code
	}
	return 0
}

// emptyGroupIDAllowed: the APIs old consumers used with group "" (Kafka's
// isValidGroupId accepts a non-null id for them).
func emptyGroupIDAllowed(key kmsg.Key) bool {
	switch key {
	case kmsg.OffsetCommit, kmsg.OffsetFetch, kmsg.DescribeGroups, kmsg.DeleteGroups:
		return true
	}
	return false
}

// logTransition moves g to s, logging the bug if Kafka forbids it.
func (c *Coordinator) logTransition(g *group, s State) {
	if err := g.transition(s, c.now); err != nil {
		c.cfg.Logger.Error("group state machine", "partition", c.partition, "err", err)
	}
}

// sortedGroupIDs lists the groups in name order, for deterministic
// iteration.
func (c *Coordinator) sortedGroupIDs() []string {
	ids := make([]string, 0, len(c.groups))
	for id := range c.groups {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// joinError is a JoinGroup response carrying only an error.
func joinError(memberID string, code int16) *kmsg.JoinGroupResponse {
	r := kmsg.NewPtrJoinGroupResponse()
	r.MemberID, r.ErrorCode = memberID, code
	return r
}

// syncError is a SyncGroup response carrying only an error.
func syncError(code int16) *kmsg.SyncGroupResponse {
	r := kmsg.NewPtrSyncGroupResponse()
	r.ErrorCode = code
	r.MemberAssignment = []byte{}
	return r
}
