package group

import (
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Member metadata is bounded. Kafka bounds what a group holds only by
// group.max.size and the request size (socket.request.max.bytes, 100
// MiB), so a few clients joining with megabytes of protocol metadata
// each can make a coordinator hold gigabytes for a session timeout.
// Varve counts what each member makes the coordinator hold (its
// protocols' names and metadata, its assignment, its client id, host
// and instance id) against two bounds:
//
//   - Config.MaxGroupMetadataBytes per group, answered
//     GROUP_MAX_SIZE_REACHED: the group is full, by bytes instead of by
//     members, and clients already treat that answer as "this group
//     cannot take this member" without disturbing the members it has;
//   - a MetadataBudget shared by every coordinator of the broker,
//     answered COORDINATOR_NOT_AVAILABLE: the broker, not the group, is
//     out of room for now, and that is the retriable answer a client
//     meets with a backoff and a new FindCoordinator (Kafka's answer
//     when a coordinator cannot serve for a while).
//
// A JoinGroup that would exceed a bound is refused before anything of
// it is kept; a member that already belonged keeps its previous
// metadata. A leader's SyncGroup whose assignment would exceed a bound
// fails as a group record too large to store fails in Kafka
// (UNKNOWN_SERVER_ERROR) or, for the broker-wide bound,
// COORDINATOR_NOT_AVAILABLE, and the group rebalances. What a member
// holds is released when it leaves, is removed, is replaced, or the
// coordinator stops. Loading replays what the log holds without
// refusing (the bound may be exceeded until members go).

// Varve's defaults for the bounds on member metadata.
const (
	DefaultMaxGroupMetadataBytes  = 32 << 20  // per group
	DefaultMaxBrokerMetadataBytes = 256 << 20 // per broker, every coordinator together
)

// MetadataBudget is the broker-wide bound on member metadata, shared
// by the coordinators of every __consumer_offsets partition. It is
// safe for concurrent use (an atomic counter; each coordinator still
// runs under its own caller's lock).
type MetadataBudget struct {
	limit int64
	used  atomic.Int64
}

// NewMetadataBudget returns a budget of limit bytes; limit <= 0 uses
// DefaultMaxBrokerMetadataBytes.
func NewMetadataBudget(limit int64) *MetadataBudget {
	if limit <= 0 {
		limit = DefaultMaxBrokerMetadataBytes
	}
	return &MetadataBudget{limit: limit}
}

// Used is how many bytes the coordinators sharing the budget hold.
func (b *MetadataBudget) Used() int64 { return b.used.Load() }

// Limit is the budget's bound.
func (b *MetadataBudget) Limit() int64 { return b.limit }

// reserve takes n > 0 bytes if they fit under the limit.
func (b *MetadataBudget) reserve(n int64) bool {
	for {
		cur := b.used.Load()
		if cur+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}

// add changes the usage by n without checking the limit: releases, and
// what loading replays.
func (b *MetadataBudget) add(n int64) { b.used.Add(n) }

// bounds is what a group's accounting needs from its coordinator.
type bounds struct {
	budget   *MetadataBudget
	maxGroup int64
}

// memberCost is what a member with these protocols and assignment makes
// the coordinator hold, in bytes. The member id is its client id or
// instance id and a fixed-size UUID, so those count for it.
func memberCost(m *member, ps []protocol, assignment []byte) int64 {
	n := len(m.instanceID) + len(m.clientID) + len(m.clientHost) + len(m.protocolType) + len(assignment)
	for _, p := range ps {
		n += len(p.name) + len(p.metadata)
	}
	return int64(n)
}

func (m *member) cost() int64 { return memberCost(m, m.protocols, m.assignment) }

// admit reserves delta more bytes for g against both bounds and returns
// 0, or the error code of the bound it would exceed, reserving nothing.
// A delta <= 0 always fits and is released from the budget at once.
// Once the change is made, settle brings the group's count along; if it
// is not made, refund undoes the admit.
func (g *group) admit(delta int64) int16 {
	switch {
	case delta <= 0:
		g.bounds.budget.add(delta)
		return 0
	case g.metaBytes+delta > g.bounds.maxGroup:
		return kerr.GroupMaxSizeReached.Code
	case !g.bounds.budget.reserve(delta):
		return kerr.CoordinatorNotAvailable.Code
	}
	return 0
}

// refund undoes an admit whose change was not made.
func (g *group) refund(delta int64) { g.bounds.budget.add(-delta) }

// settle makes g's count match m's cost after a change admitted for it.
func (g *group) settle(m *member) {
	c := m.cost()
	g.metaBytes += c - m.charged
	m.charged = c
}

// forceSettle is settle for a change that was not admitted: loading,
// and changes that only shrink or restore what was admitted before.
func (g *group) forceSettle(m *member) {
	g.bounds.budget.add(m.cost() - m.charged)
	g.settle(m)
}

// release gives back everything m holds.
func (g *group) release(m *member) {
	g.bounds.budget.add(-m.charged)
	g.metaBytes -= m.charged
	m.charged = 0
}

// MetadataBytes is how many bytes of member metadata the coordinator
// holds, over all its groups.
func (c *Coordinator) MetadataBytes() int64 {
	var n int64
	for _, g := range c.groups {
		n += g.metaBytes
	}
	return n
}
