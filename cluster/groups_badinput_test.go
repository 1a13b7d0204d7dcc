package cluster_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawGroup drives a group with hand-made requests.
type rawGroup struct {
	t   *testing.T
	cl  *kgo.Client
	id  string
	mid string
	gen int32
}

func consumerProtocols(names ...string) []kmsg.JoinGroupRequestProtocol {
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Topics = []string{"raw"}
	var out []kmsg.JoinGroupRequestProtocol
	for _, n := range names {
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = n, meta.AppendTo(nil)
		out = append(out, p)
	}
	return out
}

func (g *rawGroup) join(memberID, protocolType string, session int32, protocols ...string) *kmsg.JoinGroupResponse {
	g.t.Helper()
	req := kmsg.NewPtrJoinGroupRequest()
	req.Group, req.MemberID, req.ProtocolType = g.id, memberID, protocolType
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = session, 10_000
	req.Protocols = consumerProtocols(protocols...)
	resp, err := req.RequestWith(ctx(g.t), g.cl)
	if err != nil {
		g.t.Fatalf("join: %v", err)
	}
	return resp
}

// stable makes one member and brings the group to Stable.
func (g *rawGroup) stable() {
	g.t.Helper()
	first := g.join("", "consumer", 30_000, "range")
	if first.ErrorCode != kerr.MemberIDRequired.Code {
		g.t.Fatalf("first join: %v", kerr.ErrorForCode(first.ErrorCode))
	}
	second := g.join(first.MemberID, "consumer", 30_000, "range")
	if second.ErrorCode != 0 || second.LeaderID != first.MemberID {
		g.t.Fatalf("second join: %v %+v", kerr.ErrorForCode(second.ErrorCode), second)
	}
	g.mid, g.gen = second.MemberID, second.Generation
	if code := g.sync(g.gen, map[string][]byte{g.mid: {0, 1}}); code != 0 {
		g.t.Fatalf("sync: %v", kerr.ErrorForCode(code))
	}
}

func (g *rawGroup) sync(gen int32, assignment map[string][]byte) int16 {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group, req.MemberID, req.Generation = g.id, g.mid, gen
	for id, a := range assignment {
		ga := kmsg.NewSyncGroupRequestGroupAssignment()
		ga.MemberID, ga.MemberAssignment = id, a
		req.GroupAssignment = append(req.GroupAssignment, ga)
	}
	resp, err := req.RequestWith(ctx(g.t), g.cl)
	if err != nil {
		g.t.Fatalf("sync: %v", err)
	}
	return resp.ErrorCode
}

func (g *rawGroup) heartbeat(memberID string, gen int32) int16 {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group, req.MemberID, req.Generation = g.id, memberID, gen
	resp, err := req.RequestWith(ctx(g.t), g.cl)
	if err != nil {
		g.t.Fatalf("heartbeat: %v", err)
	}
	return resp.ErrorCode
}

func (g *rawGroup) commit(memberID string, gen int32, topic string) int16 {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.MemberID, req.Generation = g.id, memberID, gen
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = 0, 1
	rt.Partitions = []kmsg.OffsetCommitRequestTopicPartition{rp}
	req.Topics = []kmsg.OffsetCommitRequestTopic{rt}
	resp, err := req.RequestWith(ctx(g.t), g.cl)
	if err != nil {
		g.t.Fatalf("commit: %v", err)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

// Kafka's error codes for group requests that do not fit the group: an
// unknown protocol type or no common protocol
// (INCONSISTENT_GROUP_PROTOCOL), a stale or future generation
// (ILLEGAL_GENERATION), a member id the group does not know
// (UNKNOWN_MEMBER_ID), including commits from a non-member, a session
// timeout outside the broker's bounds (INVALID_SESSION_TIMEOUT), an
// empty group id (INVALID_GROUP_ID), deleting a group with members
// (NON_EMPTY_GROUP) and a commit to an unknown topic
// (UNKNOWN_TOPIC_OR_PARTITION).
func TestGroupBadRequestsGetKafkaErrors(t *testing.T) {
	b := startBroker(t, t.TempDir(), groupProps(map[string]string{"group.max.session.timeout.ms": "60000"}))
	createTopic(t, b.addr, "raw", 1, nil)
	g := &rawGroup{t: t, cl: client(t, b.addr), id: "g-raw"}
	g.stable()

	noError := &kerr.Error{Message: "NONE", Code: 0}
	want := func(what string, got int16, err *kerr.Error) {
		t.Helper()
		if got != err.Code {
			t.Errorf("%s: got %v, want %v", what, kerr.ErrorForCode(got), err)
		}
	}
	want("join with an unknown protocol type", g.join("", "no-such-type", 30_000, "range").ErrorCode, kerr.InconsistentGroupProtocol)
	want("join with no protocol in common", g.join("", "consumer", 30_000, "roundrobin").ErrorCode, kerr.InconsistentGroupProtocol)
	want("join with an empty protocol type", (&rawGroup{t: t, cl: g.cl, id: "g-empty-type"}).join("", "", 30_000, "range").ErrorCode, kerr.InconsistentGroupProtocol)
	want("join with a session timeout over the maximum", g.join("", "consumer", 120_000, "range").ErrorCode, kerr.InvalidSessionTimeout)
	want("join with a session timeout under the minimum", g.join("", "consumer", 50, "range").ErrorCode, kerr.InvalidSessionTimeout)
	want("join with an empty group id", (&rawGroup{t: t, cl: g.cl, id: ""}).join("", "consumer", 30_000, "range").ErrorCode, kerr.InvalidGroupID)
	want("join with a member id never given out", g.join("made-up", "consumer", 30_000, "range").ErrorCode, kerr.UnknownMemberID)

	want("heartbeat, stale generation", g.heartbeat(g.mid, g.gen-1), kerr.IllegalGeneration)
	want("heartbeat, future generation", g.heartbeat(g.mid, g.gen+1), kerr.IllegalGeneration)
	want("heartbeat, unknown member", g.heartbeat("stranger", g.gen), kerr.UnknownMemberID)
	want("sync, stale generation", g.sync(g.gen-1, nil), kerr.IllegalGeneration)

	want("commit from a non-member", g.commit("stranger", g.gen, "raw"), kerr.UnknownMemberID)
	want("anonymous commit to a group with members", g.commit("", -1, "raw"), kerr.UnknownMemberID)
	want("commit, stale generation", g.commit(g.mid, g.gen-1, "raw"), kerr.IllegalGeneration)
	want("commit to an unknown topic", g.commit(g.mid, g.gen, "no-such-topic"), kerr.UnknownTopicOrPartition)
	want("commit from the member", g.commit(g.mid, g.gen, "raw"), noError)
	want("member commit to a group that does not exist", (&rawGroup{t: t, cl: g.cl, id: "g-none"}).commit("m", 3, "raw"), kerr.IllegalGeneration)
	want("simple commit to a group that does not exist", (&rawGroup{t: t, cl: g.cl, id: "g-simple"}).commit("", -1, "raw"), noError)

	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{g.id, "g-never"}
	resp, err := del.RequestWith(ctx(t), g.cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resp.Groups {
		switch r.Group {
		case g.id:
			want("delete a group with members", r.ErrorCode, kerr.NonEmptyGroup)
		case "g-never":
			want("delete a group that does not exist", r.ErrorCode, kerr.GroupIDNotFound)
		}
	}
	want("heartbeat after all that", g.heartbeat(g.mid, g.gen), noError)
}
