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
