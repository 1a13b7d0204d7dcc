package group

import (
	"io"
	"log/slog"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"pgregory.net/rapid"
)

// classicJoin sends a JoinGroup v5 of a cooperative consumer owning
// owned (topic -> partitions) and returns the response.
func classicJoin(t *testing.T, c *Coordinator, now time.Time, memberID string, owned map[string][]int32) *kmsg.JoinGroupResponse {
	t.Helper()
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Version, meta.Topics = 3, []string{"a"}
	for _, topic := range slices.Sorted(func(yield func(string) bool) {
		for k := range owned {
			if !yield(k) {
				return
			}
		}
	}) {
		op := kmsg.NewConsumerMemberMetadataOwnedPartition()
		op.Topic, op.Partitions = topic, owned[topic]
		meta.OwnedPartitions = append(meta.OwnedPartitions, op)
	}
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version, req.Group, req.MemberID, req.ProtocolType = 5, "g", memberID, "consumer"
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10000, 10000
	jp := kmsg.NewJoinGroupRequestProtocol()
	jp.Name, jp.Metadata = "cooperative-sticky", meta.AppendTo(nil)
	req.Protocols = []kmsg.JoinGroupRequestProtocol{jp}
	var resp *kmsg.JoinGroupResponse
	c.Join(now, req, Client{ID: "classic"}, func(r *kmsg.JoinGroupResponse) { resp = r })
	if resp == nil {
		t.Fatal("JoinGroup to a consumer group was parked")
	}
	return resp
}

// classicSync returns the assignment SyncGroup gives, decoded.
func classicSync(t *testing.T, c *Coordinator, now time.Time, memberID string, gen int32) map[string][]int32 {
	t.Helper()
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group, req.MemberID, req.Generation = "g", memberID, gen
	var resp *kmsg.SyncGroupResponse
	c.Sync(now, req, func(r *kmsg.SyncGroupResponse) { resp = r })
	if resp == nil || resp.ErrorCode != 0 {
		t.Fatalf("SyncGroup: %+v", resp)
	}
	var a kmsg.ConsumerMemberAssignment
	if err := a.ReadFrom(resp.MemberAssignment); err != nil {
		t.Fatalf("assignment: %v", err)
	}
	if a.Version != 3 {
		t.Fatalf("assignment version %d, want the subscription's, 3", a.Version)
	}
	out := map[string][]int32{}
	for _, at := range a.Topics {
		out[at.Topic] = at.Partitions
	}
	return out
}

// Kafka: KIP-848 with classic members (classicGroupJoinToConsumerGroup,
// classicGroupSyncToConsumerGroup). A cooperative classic consumer in a
// consumer group reports what it owns in its subscription's
// OwnedPartitions; SyncGroup hands it the partitions it holds as a
// consumer protocol assignment (topic names, the subscription's
// version). When a consumer member joins, the classic member keeps what
// stays its own and moves to the new epoch only once its JoinGroup no
// longer reports the partition it gave up.
func TestClassicMemberCooperativeInConsumerGroup(t *testing.T) {
	topics := scriptTopics{"a": 4}
	n := 0
	cfg := Config{Topics: topics, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		NewUUID: func() string { n++; return "u" + strconv.Itoa(n) }}
	c := New(0, cfg, &MemoryLog{})
	c.BeginLoad()
	now := time.UnixMilli(1_700_000_000_000)
	c.FinishLoad(now)
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID, hb.MemberEpoch, hb.RebalanceTimeoutMillis = 1, "g", "m1", 0, 10000
	hb.SubscribedTopicNames, hb.Topics = []string{"b"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if r := c.ConsumerHeartbeat(now, hb, Client{ID: "m1"}); r.ErrorCode != 0 {
		t.Fatalf("consumer join: %d", r.ErrorCode)
	}

	if r := classicJoin(t, c, now, "", nil); r.ErrorCode != kerr.MemberIDRequired.Code || r.MemberID != "u1" {
		t.Fatalf("first JoinGroup v5: %+v", r)
	}
	r := classicJoin(t, c, now, "u1", nil)
	if r.ErrorCode != 0 || r.LeaderID != "" || r.Generation != 2 || *r.Protocol != "cooperative-sticky" {
		t.Fatalf("JoinGroup: %+v", r)
	}
	if got := classicSync(t, c, now, "u1", r.Generation); !slices.Equal(got["a"], []int32{0, 1, 2, 3}) {
		t.Fatalf("assigned %v, want a/0-3", got)
	}

	// m1 now subscribes to a as well: the group epoch bumps.
	hb.MemberEpoch, hb.SubscribedTopicNames = 1, []string{"a"}
	if r := c.ConsumerHeartbeat(now, hb, Client{ID: "m1"}); r.ErrorCode != 0 {
		t.Fatalf("consumer heartbeat: %d", r.ErrorCode)
	}
	beat := kmsg.NewPtrHeartbeatRequest()
	beat.Group, beat.MemberID, beat.Generation = "g", "u1", 2
	if code := c.Heartbeat(now, beat).ErrorCode; code != kerr.RebalanceInProgress.Code {
		t.Fatalf("heartbeat after the epoch bump: %d, want REBALANCE_IN_PROGRESS", code)
	}
	r = classicJoin(t, c, now, "u1", map[string][]int32{"a": {0, 1, 2, 3}})
	if r.Generation != 2 {
		t.Fatalf("rejoin still owning what it must give up: generation %d, want 2", r.Generation)
	}
	kept := classicSync(t, c, now, "u1", 2)
	if len(kept["a"]) != 2 {
		t.Fatalf("kept %v, want two partitions of a", kept)
	}
	r = classicJoin(t, c, now, "u1", kept)
	if r.Generation != 3 {
		t.Fatalf("rejoin after revoking: generation %d, want 3", r.Generation)
	}
	if got := classicSync(t, c, now, "u1", 3); !slices.Equal(got["a"], kept["a"]) {
		t.Fatalf("assigned %v after revoking, want %v", got, kept)
	}
}

// modelClassicBeat moves a cooperative classic consumer one step: a
// member heartbeats, and rejoins (JoinGroup reporting what it owns,
// then SyncGroup) when told to or when it is not a member; it owns what
// the last SyncGroup gave it, and nothing once fenced.
func modelClassicBeat(c *Coordinator, now time.Time, cl *modelClient, rejoin bool) {
	if cl.epoch > 0 && !rejoin {
		beat := kmsg.NewPtrHeartbeatRequest()
		beat.Group, beat.MemberID, beat.Generation = "g", cl.id, cl.epoch
		switch c.Heartbeat(now, beat).ErrorCode {
		case 0:
			return
		case kerr.RebalanceInProgress.Code:
		default:
			cl.epoch, cl.owned = 0, partSet{}
		}
	}
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Version, meta.Topics = 3, cl.topics
	for _, t := range cl.owned.byTopic() {
		op := kmsg.NewConsumerMemberMetadataOwnedPartition()
		op.Topic, op.Partitions = topicNameOf(t.id), t.partitions
		meta.OwnedPartitions = append(meta.OwnedPartitions, op)
	}
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version, req.Group, req.MemberID, req.ProtocolType = 5, "g", cl.id, "consumer"
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 45000, 30000
	jp := kmsg.NewJoinGroupRequestProtocol()
	jp.Name, jp.Metadata = "cooperative-sticky", meta.AppendTo(nil)
	req.Protocols = []kmsg.JoinGroupRequestProtocol{jp}
	var join *kmsg.JoinGroupResponse
	c.Join(now, req, Client{ID: cl.id}, func(r *kmsg.JoinGroupResponse) { join = r })
	if join == nil || join.ErrorCode != 0 {
		cl.epoch, cl.owned = 0, partSet{} // a consumer group answers at once; else it is not one
		return
	}
	sreq := kmsg.NewPtrSyncGroupRequest()
	sreq.Group, sreq.MemberID, sreq.Generation = "g", cl.id, join.Generation
	var sync *kmsg.SyncGroupResponse
	c.Sync(now, sreq, func(r *kmsg.SyncGroupResponse) { sync = r })
	if sync == nil || sync.ErrorCode != 0 {
		cl.epoch, cl.owned = 0, partSet{}
		return
	}
	var a kmsg.ConsumerMemberAssignment
	if err := a.ReadFrom(sync.MemberAssignment); err != nil {
		panic(err)
	}
	cl.epoch, cl.owned = join.Generation, partSet{}
	for _, t := range a.Topics {
		for _, p := range t.Partitions {
			cl.owned.add(topicIDOf(t.Topic), p)
		}
	}
}

// Kafka: KIP-848 with classic members. Random heartbeats, rejoins,
// subscription changes and clock ticks of two consumer-protocol and two
// cooperative classic consumers never give a partition to two of them
// at once, replaying the log rebuilds the group, and once everyone has
// heartbeated a few rounds every subscribed partition is owned exactly
// once.
func TestMixedGroupRandomSequences(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		topics := scriptTopics{"a": 4, "b": 3}
		cfg := Config{Topics: topics, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		log := &MemoryLog{}
		c := New(0, cfg, log)
		c.BeginLoad()
		now := time.UnixMilli(1_700_000_000_000)
		c.FinishLoad(now)
		clients := []*modelClient{{id: "m0"}, {id: "m1"}, {id: "k0"}, {id: "k1"}}
		classic := func(cl *modelClient) bool { return cl.id[0] == 'k' }
		step := func(cl *modelClient) {
			if classic(cl) {
				modelClassicBeat(c, now, cl, false)
			} else {
				modelBeat(c, now, cl, cl.epoch)
			}
		}
		for _, cl := range clients {
			cl.owned, cl.topics = partSet{}, []string{"a"}
		}
		modelBeat(c, now, clients[0], 0) // a consumer group from the start
		steps := rapid.IntRange(1, 60).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			cl := clients[rapid.IntRange(0, len(clients)-1).Draw(rt, "client")]
			switch rapid.IntRange(0, 7).Draw(rt, "action") {
			case 0:
				now = now.Add(time.Duration(rapid.IntRange(1, 50).Draw(rt, "seconds")) * time.Second)
				c.Tick(now)
			case 1:
				cl.topics = rapid.SampledFrom([][]string{{"a"}, {"b"}, {"a", "b"}}).Draw(rt, "topics")
				if classic(cl) {
					modelClassicBeat(c, now, cl, true) // a new subscription rejoins
				} else {
					modelBeat(c, now, cl, cl.epoch)
				}
			default:
				step(cl)
			}
			if g := c.groups["g"]; g != nil && g.cons == nil {
				return // the group went back to classic: another test's subject
			}
			checkConsumerSafety(rt, c, clients)
		}
		checkReplay(rt, c, log, now)
		for round := 0; round < 8; round++ {
			for _, cl := range clients {
				if cl.epoch > 0 {
					step(cl)
				}
			}
		}
		checkConverged(rt, c, clients, "")
	})
}

// Kafka: KIP-447 with KIP-848 (ConsumerGroup.validateOffsetCommit for a
// transactional commit). A consumer group member's TxnOffsetCommit names
// it and its member epoch: a stale epoch is STALE_MEMBER_EPOCH, an
// unknown member UNKNOWN_MEMBER_ID, and the member at its epoch commits.
func TestConsumerGroupTxnOffsetCommitValidated(t *testing.T) {
	cfg := testConfig()
	cfg.Topics = scriptTopics{"a": 2}
	h := newHarness(t, cfg)
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID, hb.MemberEpoch, hb.RebalanceTimeoutMillis = 1, "g", "m1", 0, 10000
	hb.SubscribedTopicNames, hb.Topics = []string{"a"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	r := h.c.ConsumerHeartbeat(h.now, hb, Client{ID: "m1"})
	if r.ErrorCode != 0 || r.MemberEpoch != 1 {
		t.Fatalf("join: %+v", r)
	}
	if code := h.txnCommit("g", "m1", 0, 1, "a", map[int32]int64{0: 5}); code != kerr.StaleMemberEpoch.Code {
		t.Fatalf("stale epoch: %d, want STALE_MEMBER_EPOCH", code)
	}
	if code := h.txnCommit("g", "nobody", 1, 1, "a", map[int32]int64{0: 5}); code != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown member: %d, want UNKNOWN_MEMBER_ID", code)
	}
	if code := h.txnCommit("g", "m1", 1, 1, "a", map[int32]int64{0: 5}); code != 0 {
		t.Fatalf("member at its epoch: %d, want ok", code)
	}
}
