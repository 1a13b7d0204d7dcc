package group

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// staticConsumerWithClassic brings consumer group g to a static member
// s1 (instance i1) of the consumer protocol and a classic member, both
// Stable at group epoch 2 with topic t's four partitions split between
// them; it returns the classic member's id and s1's partitions.
func staticConsumerWithClassic(t *testing.T, h *harness) (string, []int32) {
	t.Helper()
	beat := func(epoch int32, owned []int32) *kmsg.ConsumerGroupHeartbeatResponse {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Version, req.Group, req.MemberID, req.MemberEpoch = 1, "g", "s1", epoch
		inst := "i1"
		req.InstanceID, req.RebalanceTimeoutMillis = &inst, 30000
		req.SubscribedTopicNames = []string{"t"}
		if epoch == 0 {
			req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		}
		if owned != nil {
			rt := kmsg.NewConsumerGroupHeartbeatRequestTopic()
			rt.TopicID, rt.Partitions = topicIDOf("t"), owned
			req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{rt}
		}
		r := h.c.ConsumerHeartbeat(h.now, req, Client{ID: "s1"})
		if r.ErrorCode != 0 {
			t.Fatalf("s1 heartbeat at epoch %d: %d", epoch, r.ErrorCode)
		}
		return r
	}
	beat(0, nil)
	j := h.join(joinSpec{group: "g", version: 3, session: 60000})
	if !j.done() || j.resp.ErrorCode != 0 || j.resp.Generation != 2 {
		t.Fatalf("classic join: %+v", j.resp)
	}
	classic := j.resp.MemberID
	r := beat(1, nil) // told what to keep
	kept := r.Assignment.Topics[0].Partitions
	if r = beat(1, kept); r.MemberEpoch != 2 {
		t.Fatalf("s1 after revoking: epoch %d, want 2", r.MemberEpoch)
	}
	if code := h.heartbeat("g", classic, 2); code != kerr.RebalanceInProgress.Code {
		t.Fatalf("classic heartbeat: %d, want REBALANCE_IN_PROGRESS", code)
	}
	if j = h.join(joinSpec{group: "g", member: classic, version: 3, session: 60000}); j.resp.Generation != 2 {
		t.Fatalf("classic rejoin: %+v", j.resp)
	}
	return classic, kept
}

// syncedPartitions is what SyncGroup hands member of generation gen, as
// partitions of topic t.
func syncedPartitions(t *testing.T, h *harness, member string, gen int32) []int32 {
	t.Helper()
	s := h.sync("g", member, gen, nil)
	if !s.done() || s.resp.ErrorCode != 0 {
		t.Fatalf("SyncGroup of %s: %+v", member, s.resp)
	}
	var a kmsg.ConsumerMemberAssignment
	if err := a.ReadFrom(s.resp.MemberAssignment); err != nil {
		t.Fatalf("assignment of %s: %v", member, err)
	}
	var out []int32
	for _, at := range a.Topics {
		if at.Topic == "t" {
			out = append(out, at.Partitions...)
		}
	}
	slices.Sort(out)
	return out
}

func groupType(t *testing.T, h *harness) (typ, state string) {
	t.Helper()
	_, gs := h.c.ListGroups(h.now, nil, nil)
	if len(gs) != 1 {
		t.Fatalf("groups: %+v", gs)
	}
	return gs[0].GroupType, gs[0].GroupState
}

// Kafka: KIP-848 online downgrade, GroupMetadataManager's
// validateOnlineDowngradeWithReplacedMemberId (tested there by
// testLastStaticConsumerProtocolMemberReplacedByClassicProtocolMember):
// a classic member that replaces, by its group.instance.id, the last
// static member of the consumer protocol turns the group into a classic
// group Stable at the group epoch, without a rebalance, in which it
// holds the replaced member's partitions and the other member keeps
// its own; only if group.consumer.migration.policy allows a downgrade.
func TestStaticClassicMemberReplacingLastConsumerMemberDowngrades(t *testing.T) {
	for _, tc := range []struct {
		policy    string
		downgrade bool
	}{
		{MigrationBidirectional, true},
		{MigrationDowngrade, true},
		{MigrationUpgrade, false},
		{MigrationDisabled, false},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			cfg := testConfig()
			cfg.Topics, cfg.MigrationPolicy = scriptTopics{"t": 4}, tc.policy
			h := newHarness(t, cfg)
			classic, replacedParts := staticConsumerWithClassic(t, h)

			j := h.join(joinSpec{group: "g", instance: "i1", version: 3, session: 30000})
			if !j.done() || j.resp.ErrorCode != 0 {
				t.Fatalf("static classic join: %+v", j.resp)
			}
			joined := j.resp.MemberID
			typ, state := groupType(t, h)
			if !tc.downgrade {
				if typ != ConsumerGroupType {
					t.Fatalf("policy %s: group is %s, want a consumer group", tc.policy, typ)
				}
				return
			}
			if typ != GroupType || state != "Stable" || j.resp.Generation != 2 || j.resp.LeaderID != "" {
				t.Fatalf("after the replacement: %s group %s, join %+v; want a Stable classic group, generation 2", typ, state, j.resp)
			}
			if got := syncedPartitions(t, h, joined, 2); !slices.Equal(got, replacedParts) {
				t.Fatalf("joining member holds %v, want the replaced member's %v", got, replacedParts)
			}
			other := syncedPartitions(t, h, classic, 2)
			if all := slices.Sorted(slices.Values(append(other, replacedParts...))); !slices.Equal(all, []int32{0, 1, 2, 3}) {
				t.Fatalf("the classic members hold %v and %v, want t/0-3 between them", other, replacedParts)
			}
			for _, id := range []string{classic, joined} {
				if code := h.heartbeat("g", id, 2); code != 0 {
					t.Fatalf("heartbeat of %s in the classic group: %d, want none (no rebalance)", id, code)
				}
			}
			h.reload()
			if typ, state = groupType(t, h); typ != GroupType || state != "Stable" {
				t.Fatalf("after a reload: %s group %s", typ, state)
			}
		})
	}
}

// Kafka: validateOnlineDowngradeWithReplacedMemberId needs the replaced
// member to be the only one of the consumer protocol and the group to
// fit group.max.size.
func TestStaticClassicReplacementKeepsConsumerGroup(t *testing.T) {
	t.Run("another consumer member", func(t *testing.T) {
		cfg := testConfig()
		cfg.Topics = scriptTopics{"t": 4}
		h := newHarness(t, cfg)
		staticConsumerWithClassic(t, h)
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Version, req.Group, req.MemberID, req.RebalanceTimeoutMillis = 1, "g", "m2", 30000
		req.SubscribedTopicNames, req.Topics = []string{"t"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		if r := h.c.ConsumerHeartbeat(h.now, req, Client{ID: "m2"}); r.ErrorCode != 0 {
			t.Fatalf("m2 joins: %d", r.ErrorCode)
		}
		h.join(joinSpec{group: "g", instance: "i1", version: 3, session: 30000})
		if typ, _ := groupType(t, h); typ != ConsumerGroupType {
			t.Fatalf("group is %s, want a consumer group: m2 uses the consumer protocol", typ)
		}
	})
	t.Run("group.max.size", func(t *testing.T) {
		cfg := testConfig()
		cfg.Topics, cfg.MaxSize = scriptTopics{"t": 4}, 1
		h := newHarness(t, cfg)
		staticConsumerWithClassic(t, h)
		h.join(joinSpec{group: "g", instance: "i1", version: 3, session: 30000})
		if typ, _ := groupType(t, h); typ != ConsumerGroupType {
			t.Fatalf("group is %s, want a consumer group: two members pass group.max.size=1", typ)
		}
	})
}
