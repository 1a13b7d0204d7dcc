package group

import (
	"bytes"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// protocol is one assignment protocol a member supports, with the
// member's metadata for it (for consumers, its subscription).
type protocol struct {
	name     string
	metadata []byte
}

// JoinReply receives a JoinGroup response; SyncReply a SyncGroup one.
// The coordinator calls them from inside its methods, possibly long
// after the request (a parked JoinGroup), so they must not block.
type (
	JoinReply func(*kmsg.JoinGroupResponse)
	SyncReply func(*kmsg.SyncGroupResponse)
)

// member is one member of a classic group (Kafka's MemberMetadata).
type member struct {
	id               string
	instanceID       string // group.instance.id; "" for a dynamic member
	clientID         string
	clientHost       string
	rebalanceTimeout int32 // ms
	sessionTimeout   int32 // ms
	protocolType     string
	protocols        []protocol
	assignment       []byte

	// joinReply is set while the member waits in a rebalance, syncReply
	// while it waits for the leader's assignment; joinVersion and
	// syncVersion are the request versions they answer.
	joinReply   JoinReply
	joinVersion int16
	syncReply   SyncReply

	// isNew: the member joined in the current rebalance and has not yet
	// received a JoinGroup response; it expires after the new-member
	// join timeout instead of its session timeout.
	isNew bool

	// charged is what the member counts against the metadata bounds
	// (bound.go); it equals cost() between calls.
	charged int64
}

func (m *member) static() bool       { return m.instanceID != "" }
func (m *member) awaitingJoin() bool { return m.joinReply != nil }
func (m *member) awaitingSync() bool { return m.syncReply != nil }

// heartbeatSatisfied reports whether the member's heartbeat deadline
// may pass without removing it (Kafka's hasSatisfiedHeartbeat): members
// waiting in a rebalance are alive by definition, except new members,
// which the new-member join timeout bounds.
func (m *member) heartbeatSatisfied() bool {
	if m.isNew {
		return false
	}
	return m.awaitingJoin() || m.awaitingSync()
}

// metadata is the member's metadata for protocol name, nil if it does
// not support it.
func (m *member) metadata(name string) []byte {
	for _, p := range m.protocols {
		if p.name == name {
			return p.metadata
		}
	}
	return nil
}

// matches reports whether protocols are exactly the member's current
// ones, names and metadata in order (Kafka's MemberMetadata.matches).
func (m *member) matches(protocols []protocol) bool {
	if len(protocols) != len(m.protocols) {
		return false
	}
	for i, p := range protocols {
		if p.name != m.protocols[i].name || !bytes.Equal(p.metadata, m.protocols[i].metadata) {
			return false
		}
	}
	return true
}

// instanceIDPtr is the member's instance id as the protocol carries it.
func (m *member) instanceIDPtr() *string {
	if m.instanceID == "" {
		return nil
	}
	s := m.instanceID
	return &s
}

// protocolsOf copies a JoinGroup request's protocols.
func protocolsOf(ps []kmsg.JoinGroupRequestProtocol) []protocol {
	out := make([]protocol, len(ps))
	for i, p := range ps {
		out[i] = protocol{name: p.Name, metadata: bytes.Clone(p.Metadata)}
	}
	return out
}
