package group

import (
	"cmp"
	"hash/fnv"
	"slices"
	"time"
)

// KIP-848 consumer groups (Kafka's ConsumerGroup and
// GroupMetadataManager for the consumer protocol): members join and stay
// by ConsumerGroupHeartbeat, the coordinator computes the target
// assignment with a server-side assignor, and each member reconciles
// towards it: it first revokes what the target takes away, and gets a
// partition only once no other member still holds it. A consumer group
// is a group (group.go) whose cons field is set: it shares the offsets,
// ListGroups, DescribeGroups and DeleteGroups paths with classic groups.

// Kafka's defaults for the consumer group settings.
const (
	DefaultConsumerSessionTimeout    = 45 * time.Second // group.consumer.session.timeout.ms
	DefaultConsumerHeartbeatInterval = 5 * time.Second  // group.consumer.heartbeat.interval.ms
	DefaultConsumerMaxSize           = 1<<31 - 1        // group.consumer.max.size
)

// DefaultConsumerAssignors is group.consumer.assignors' default: the
// first is used when no member asks for one.
var DefaultConsumerAssignors = []string{"uniform", "range"}

// ConsumerGroupType is the type ListGroups v5 reports for KIP-848 groups.
const ConsumerGroupType = "consumer"

// TopicID is a topic's 16-byte id.
type TopicID [16]byte

// TopicInfo is what the assignors need of a topic.
type TopicInfo struct {
	Name       string
	ID         TopicID
	Partitions int32
}

// Topics is the coordinator's view of the cluster's topics.
type Topics interface {
	TopicByName(name string) (TopicInfo, bool)
	TopicByID(id TopicID) (TopicInfo, bool)
	// TopicNames lists every topic's name, sorted, with the version of
	// the topic list they were taken from (regular expression
	// subscriptions, consumer_regex.go).
	TopicNames() (names []string, version int64)
	// TopicsVersion is the topic list's version: it changes whenever a
	// topic is created or deleted (it may change more often).
	TopicsVersion() int64
}

// memberState is Kafka's MemberState: where a member is in its
// reconciliation.
type memberState int8

const (
	memberStable     memberState = 0 // holds its whole target
	memberUnrevoked  memberState = 1 // must revoke partitions first
	memberUnreleased memberState = 2 // waits for partitions others still hold
)

func (s memberState) String() string {
	switch s {
	case memberStable:
		return "stable"
	case memberUnrevoked:
		return "unrevoked_partitions"
	case memberUnreleased:
		return "unreleased_partitions"
	}
	return "unknown"
}

// Member epochs a heartbeat may carry besides the member's epoch.
const (
	joinEpoch        = 0  // a member joining
	leaveEpoch       = -1 // a member leaving
	staticLeaveEpoch = -2 // a static member leaving for a while (KIP-345)
)

// cmember is one consumer group member (Kafka's ConsumerGroupMember).
type cmember struct {
	id, instanceID, rackID string
	clientID, clientHost   string
	topics                 []string     // subscribed topic names, sorted
	regex                  string       // subscribed regular expression; "" none
	assignor               string       // server assignor asked for; "" none
	classic                *classicMeta // set for a member of the classic protocol (consumer_classic.go)
	rebalanceTimeout       int32        // ms

	epoch, prevEpoch   int32
	state              memberState
	assigned, revoking partSet
}

func (m *cmember) clone() *cmember {
	c := *m
	c.topics = slices.Clone(m.topics)
	c.assigned, c.revoking = m.assigned.clone(), m.revoking.clone()
	return &c
}

// consumerState is what a consumer group holds besides the offsets.
type consumerState struct {
	epoch           int32 // group epoch: bumps on membership, subscription or metadata change
	metadataHash    int64 // hash of the subscribed topics' metadata at epoch
	assignmentEpoch int32 // epoch the target assignment was computed at
	members         map[string]*cmember
	target          map[string]partSet // member id -> target partitions

	// regexes are the resolutions of the members' regular expressions
	// (consumer_regex.go). regexVersion and regexCheckedAt say when they
	// were last all resolved again; they are not stored (a loaded group
	// resolves again at its first heartbeat).
	regexes        map[string]*resolvedRegex
	regexVersion   int64
	regexCheckedAt time.Time
}

func newConsumerState() *consumerState {
	return &consumerState{members: map[string]*cmember{}, target: map[string]partSet{}, regexes: map[string]*resolvedRegex{}}
}

// memberIDs lists the members sorted by id.
func (s *consumerState) memberIDs() []string {
	ids := make([]string, 0, len(s.members))
	for id := range s.members {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// staticMember finds the member with instance id.
func (s *consumerState) staticMember(instanceID string) *cmember {
	for _, m := range s.members {
		if instanceID != "" && m.instanceID == instanceID {
			return m
		}
	}
	return nil
}

// stateName is Kafka's ConsumerGroupState: Empty, Assigning (the target
// lags the group epoch), Reconciling (a member lags the target), Stable.
func (s *consumerState) stateName() string {
	if len(s.members) == 0 {
		return "Empty"
	}
	if s.assignmentEpoch < s.epoch {
		return "Assigning"
	}
	for _, m := range s.members {
		if m.epoch != s.assignmentEpoch || m.state != memberStable {
			return "Reconciling"
		}
	}
	return "Stable"
}

// subscribedTopics is the union of the members' subscriptions (names
// and resolved regular expressions), sorted.
func (s *consumerState) subscribedTopics() []string {
	set := map[string]bool{}
	for _, m := range s.members {
		for _, t := range s.memberTopics(m) {
			set[t] = true
		}
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// owners maps each partition held by a member (assigned or still being
// revoked) to that member, excluding skip.
func (s *consumerState) owners(skip string) map[tidp]string {
	out := map[tidp]string{}
	for id, m := range s.members {
		if id == skip {
			continue
		}
		for p := range m.assigned {
			out[p] = id
		}
		for p := range m.revoking {
			out[p] = id
		}
	}
	return out
}

// metadataHash hashes the names, ids and partition counts of the
// subscribed topics that exist: when it changes the group epoch bumps
// and the target is recomputed (KIP-1101's role; the hash function is
// Varve's own). A subscribed name without a topic counts for nothing,
// as in Kafka's hash, so that a deleted topic dropping out of a regular
// expression's resolution later bumps nothing again.
func metadataHash(topics []string, meta Topics) int64 {
	h := fnv.New64a()
	if meta == nil {
		return int64(h.Sum64())
	}
	for _, name := range topics {
		if t, ok := meta.TopicByName(name); ok {
			h.Write([]byte(name))
			h.Write([]byte{0})
			h.Write(t.ID[:])
			h.Write([]byte{byte(t.Partitions >> 24), byte(t.Partitions >> 16), byte(t.Partitions >> 8), byte(t.Partitions)})
		}
	}
	return int64(h.Sum64())
}

// tidp is one partition of a topic named by id.
type tidp struct {
	id TopicID
	p  int32
}

// partSet is a set of partitions.
type partSet map[tidp]struct{}

func (s partSet) add(id TopicID, p int32) { s[tidp{id, p}] = struct{}{} }
func (s partSet) has(x tidp) bool         { _, ok := s[x]; return ok }

func (s partSet) clone() partSet {
	out := make(partSet, len(s))
	for k := range s {
		out[k] = struct{}{}
	}
	return out
}

func (s partSet) equal(o partSet) bool {
	if len(s) != len(o) {
		return false
	}
	for k := range s {
		if !o.has(k) {
			return false
		}
	}
	return true
}

// minus is s without o; and is s with o.
func (s partSet) minus(o partSet) partSet {
	out := partSet{}
	for k := range s {
		if !o.has(k) {
			out[k] = struct{}{}
		}
	}
	return out
}

func (s partSet) and(o partSet) partSet {
	out := partSet{}
	for k := range s {
		if o.has(k) {
			out[k] = struct{}{}
		}
	}
	return out
}

func (s partSet) intersects(o partSet) bool {
	for k := range s {
		if o.has(k) {
			return true
		}
	}
	return false
}

// topicParts is one topic's partitions, ascending.
type topicParts struct {
	id         TopicID
	partitions []int32
}

// byTopic lists the set by topic id, partitions ascending: the
// deterministic order records and responses use.
func (s partSet) byTopic() []topicParts {
	m := map[TopicID][]int32{}
	for k := range s {
		m[k.id] = append(m[k.id], k.p)
	}
	out := make([]topicParts, 0, len(m))
	for id, ps := range m {
		slices.Sort(ps)
		out = append(out, topicParts{id: id, partitions: ps})
	}
	slices.SortFunc(out, func(a, b topicParts) int { return cmpID(a.id, b.id) })
	return out
}

func cmpID(a, b TopicID) int {
	for i := range a {
		if c := cmp.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

func cmpTIDP(a, b tidp) int {
	if c := cmpID(a.id, b.id); c != 0 {
		return c
	}
	return cmp.Compare(a.p, b.p)
}

// sorted lists the set's partitions in order.
func (s partSet) sorted() []tidp {
	out := make([]tidp, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	slices.SortFunc(out, cmpTIDP)
	return out
}
