package group

import (
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// harness drives one Coordinator with a fake clock and an in-memory log.
type harness struct {
	t    testing.TB
	c    *Coordinator
	log  *MemoryLog
	cfg  Config
	now  time.Time
	uuid int
}

func testConfig() Config {
	return Config{
		InitialRebalanceDelay: 0,
		MinSessionTimeout:     100 * time.Millisecond,
		MaxSessionTimeout:     time.Minute,
		Logger:                slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

func newHarness(t testing.TB, cfg Config) *harness {
	h := &harness{t: t, log: &MemoryLog{}, now: time.UnixMilli(1_700_000_000_000)}
	cfg.NewUUID = func() string { h.uuid++; return fmt.Sprintf("uuid%d", h.uuid) }
	h.cfg = cfg
	h.c = New(7, cfg, h.log)
	h.c.BeginLoad()
	h.c.FinishLoad(h.now)
	return h
}

// reload starts a new coordinator from everything written so far.
func (h *harness) reload() LoadReport {
	h.t.Helper()
	h.c.Stop()
	h.c = New(7, h.cfg, h.log)
	h.c.BeginLoad()
	if _, err := h.c.Load(h.log.Bytes()); err != nil {
		h.t.Fatal(err)
	}
	return h.c.FinishLoad(h.now)
}

// advance moves the clock and fires what is due.
func (h *harness) advance(d time.Duration) {
	h.now = h.now.Add(d)
	h.c.Tick(h.now)
}

// parked is a JoinGroup or SyncGroup whose reply may come later.
type parked[T any] struct {
	resp  T
	calls int
}

func (p *parked[T]) done() bool { return p.calls > 0 }

// joinSpec describes a JoinGroup.
type joinSpec struct {
	group, member, instance, protocolType string
	protocols                             []string
	version                               int16
	session, rebalance                    int32
	metadata                              []byte
}

func (h *harness) join(s joinSpec) *parked[*kmsg.JoinGroupResponse] {
	h.t.Helper()
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version, req.Group, req.MemberID = s.version, s.group, s.member
	if req.Version == 0 {
		req.Version = 9
	}
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = s.session, s.rebalance
	if req.SessionTimeoutMillis == 0 {
		req.SessionTimeoutMillis = 1000
	}
	if req.RebalanceTimeoutMillis == 0 {
		req.RebalanceTimeoutMillis = 2000
	}
	req.ProtocolType = s.protocolType
	if req.ProtocolType == "" {
		req.ProtocolType = "consumer"
	}
	if req.ProtocolType == "-" {
		req.ProtocolType = ""
	}
	if s.instance != "" {
		req.InstanceID = &s.instance
	}
	protos := s.protocols
	if protos == nil {
		protos = []string{"range"}
	}
	for _, p := range protos {
		jp := kmsg.NewJoinGroupRequestProtocol()
		jp.Name, jp.Metadata = p, s.metadata
		if jp.Metadata == nil {
			jp.Metadata = subscription("t")
		}
		req.Protocols = append(req.Protocols, jp)
	}
	p := &parked[*kmsg.JoinGroupResponse]{}
	h.c.Join(h.now, req, Client{ID: "client", Host: "/127.0.0.1"}, func(r *kmsg.JoinGroupResponse) {
		p.calls++
		p.resp = r
		if p.calls > 1 {
			h.t.Errorf("JoinGroup of %q answered %d times", s.member, p.calls)
		}
	})
	return p
}

// joinNew joins a dynamic member the KIP-394 way (MEMBER_ID_REQUIRED,
// then again with the id) and returns the second, parked, join.
func (h *harness) joinNew(groupID string) *parked[*kmsg.JoinGroupResponse] {
	h.t.Helper()
	first := h.join(joinSpec{group: groupID})
	if first.resp == nil || first.resp.ErrorCode != kerr.MemberIDRequired.Code {
		h.t.Fatalf("first join: %+v", first.resp)
	}
	return h.join(joinSpec{group: groupID, member: first.resp.MemberID})
}

func (h *harness) sync(groupID, member string, gen int32, assignment map[string][]byte) *parked[*kmsg.SyncGroupResponse] {
	h.t.Helper()
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version, req.Group, req.MemberID, req.Generation = 5, groupID, member, gen
	for id, a := range assignment {
		ga := kmsg.NewSyncGroupRequestGroupAssignment()
		ga.MemberID, ga.MemberAssignment = id, a
		req.GroupAssignment = append(req.GroupAssignment, ga)
	}
	p := &parked[*kmsg.SyncGroupResponse]{}
	h.c.Sync(h.now, req, func(r *kmsg.SyncGroupResponse) {
		p.calls++
		p.resp = r
		if p.calls > 1 {
			h.t.Errorf("SyncGroup of %q answered %d times", member, p.calls)
		}
	})
	return p
}

func (h *harness) heartbeat(groupID, member string, gen int32) int16 {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.Generation = 4, groupID, member, gen
	return h.c.Heartbeat(h.now, req).ErrorCode
}

func (h *harness) leave(groupID, member string) int16 {
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version, req.Group = 5, groupID
	lm := kmsg.NewLeaveGroupRequestMember()
	lm.MemberID = member
	req.Members = []kmsg.LeaveGroupRequestMember{lm}
	resp := h.c.Leave(h.now, req)
	if resp.ErrorCode != 0 {
		return resp.ErrorCode
	}
	return resp.Members[0].ErrorCode
}

// commit commits offsets (partition -> offset of topic) and returns the
// first error code.
func (h *harness) commit(groupID, member string, gen int32, topic string, offsets map[int32]int64) int16 {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.MemberID, req.Generation = 9, groupID, member, gen
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	for p, o := range offsets {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = p, o
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = []kmsg.OffsetCommitRequestTopic{rt}
	resp := h.c.CommitOffsets(h.now, req)
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return p.ErrorCode
			}
		}
	}
	return 0
}

// fetch returns the committed offset of topic/partition (-1: none).
func (h *harness) fetch(groupID, topic string, partition int32) int64 {
	h.t.Helper()
	t := kmsg.NewOffsetFetchRequestGroupTopic()
	t.Topic, t.Partitions = topic, []int32{partition}
	code, topics := h.c.FetchOffsets(h.now, groupID, []kmsg.OffsetFetchRequestGroupTopic{t})
	if code != 0 {
		h.t.Fatalf("fetch offsets: code %d", code)
	}
	return topics[0].Partitions[0].Offset
}

func (h *harness) state(groupID string) string {
	return h.c.DescribeGroup(h.now, groupID, false).State
}

// subscription is consumer protocol metadata subscribing to topics.
func subscription(topics ...string) []byte {
	m := kmsg.NewConsumerMemberMetadata()
	m.Version, m.Topics = 0, topics
	return m.AppendTo(nil)
}

// stableGroup brings n dynamic members to Stable in generation 1 and
// returns their member ids, the leader first.
func (h *harness) stableGroup(groupID string, n int) []string {
	h.t.Helper()
	var joins []*parked[*kmsg.JoinGroupResponse]
	for i := 0; i < n; i++ {
		joins = append(joins, h.joinNew(groupID))
	}
	h.advance(0) // the initial delay (0 in tests) passes
	var ids []string
	for _, j := range joins {
		if !j.done() || j.resp.ErrorCode != 0 {
			h.t.Fatalf("join not completed: %+v", j.resp)
		}
		ids = append(ids, j.resp.MemberID)
	}
	leader := joins[0].resp.LeaderID
	assignment := map[string][]byte{}
	for _, id := range ids {
		assignment[id] = []byte("assigned-" + id)
	}
	gen := joins[0].resp.Generation
	var syncs []*parked[*kmsg.SyncGroupResponse]
	for _, id := range ids {
		if id != leader {
			syncs = append(syncs, h.sync(groupID, id, gen, nil))
		}
	}
	syncs = append(syncs, h.sync(groupID, leader, gen, assignment))
	for _, s := range syncs {
		if !s.done() || s.resp.ErrorCode != 0 {
			h.t.Fatalf("sync not completed: %+v", s.resp)
		}
	}
	out := []string{leader}
	for _, id := range ids {
		if id != leader {
			out = append(out, id)
		}
	}
	return out
}
