package group

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"pgregory.net/rapid"
)

// checkInvariants checks what every group must satisfy between calls
// (doc.go, Invariants).
func checkInvariants(rt *rapid.T, c *Coordinator) {
	for id, g := range c.groups {
		awaiting, supported := 0, map[string]int{}
		for mid, m := range g.members {
			if mid != m.id {
				rt.Fatalf("group %s: member %s filed under %s", id, m.id, mid)
			}
			if m.awaitingJoin() {
				awaiting++
			}
			for _, p := range m.protocols {
				supported[p.name]++
			}
			if m.static() && g.static[m.instanceID] != mid {
				rt.Fatalf("group %s: static member %s not mapped from %s", id, mid, m.instanceID)
			}
		}
		switch {
		case awaiting != g.awaiting:
			rt.Fatalf("group %s: %d members parked in JoinGroup, counted %d", id, awaiting, g.awaiting)
		case !maps.Equal(supported, g.supported):
			rt.Fatalf("group %s: protocol counts %v, recounted %v", id, g.supported, supported)
		case len(g.order) != len(g.members):
			rt.Fatalf("group %s: order %v, members %d", id, g.order, len(g.members))
		case (g.leader == "") != (len(g.members) == 0), g.leader != "" && !g.has(g.leader):
			rt.Fatalf("group %s: leader %q with %d members", id, g.leader, len(g.members))
		case g.is(Empty) && len(g.members) > 0:
			rt.Fatalf("group %s: Empty with %d members", id, len(g.members))
		case (g.is(Stable) || g.is(CompletingRebalance)) && len(g.members) == 0:
			rt.Fatalf("group %s: %s without members", id, g.state)
		case g.is(Dead):
			rt.Fatalf("group %s: a Dead group is still held", id)
		}
		var cost int64
		for mid, m := range g.members {
			if m.charged != m.cost() {
				rt.Fatalf("group %s: member %s charged %d bytes, costs %d", id, mid, m.charged, m.cost())
			}
			cost += m.cost()
		}
		if cost != g.metaBytes {
			rt.Fatalf("group %s: counts %d metadata bytes, its members cost %d", id, g.metaBytes, cost)
		}
		for inst, mid := range g.static {
			if m := g.members[mid]; m == nil || m.instanceID != inst {
				rt.Fatalf("group %s: instance %s maps to %s, not its member", id, inst, mid)
			}
		}
		for mid := range g.toSync {
			if !g.has(mid) {
				rt.Fatalf("group %s: %s must sync but is no member", id, mid)
			}
		}
	}
}

// checkBudget: the coordinator's own budget counts exactly what its
// groups hold (bound.go).
func checkBudget(rt *rapid.T, c *Coordinator) {
	if used, held := c.cfg.MetadataBudget.Used(), c.MetadataBytes(); used != held {
		rt.Fatalf("the metadata budget counts %d bytes, the groups hold %d", used, held)
	}
}

// offsetsOf is every committed offset, by group.
func offsetsOf(c *Coordinator) map[string]map[topicPartition]committed {
	out := map[string]map[topicPartition]committed{}
	for id, g := range c.groups {
		if len(g.offsets) > 0 {
			out[id] = maps.Clone(g.offsets)
		}
	}
	return out
}

// A model-free property test: random sequences of joins, syncs,
// heartbeats, leaves, commits, deletions, clock steps and reloads keep
// the invariants, answer every parked request exactly once, and a reload
// always rebuilds exactly the offsets held in memory (the log is the
// truth).
func TestCoordinatorRandomSequences(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cfg := testConfig()
		cfg.InitialRebalanceDelay = time.Duration(rapid.IntRange(0, 2).Draw(rt, "delay_s")) * time.Second
		cfg.OffsetsRetention = time.Duration(rapid.IntRange(1, 20).Draw(rt, "retention_s")) * time.Second
		cfg.RetentionCheckInterval = time.Second
		// Member metadata bounds that refuse some joins and assignments
		// (a member of the harness costs about 45 bytes).
		cfg.MaxGroupMetadataBytes = rapid.SampledFrom([]int64{0, 100, 200}).Draw(rt, "group_bytes")
		h := newHarness(t, cfg)
		var ids []string
		var joins []*parked[*kmsg.JoinGroupResponse]
		var syncs []*parked[*kmsg.SyncGroupResponse]
		learn := func(p *parked[*kmsg.JoinGroupResponse]) {
			joins = append(joins, p)
			if p.resp != nil && p.resp.MemberID != "" && !slices.Contains(ids, p.resp.MemberID) {
				ids = append(ids, p.resp.MemberID)
			}
		}
		member := func(label string) string {
			if len(ids) == 0 || rapid.Bool().Draw(rt, label+"_made_up") && rapid.IntRange(0, 9).Draw(rt, label+"_odds") == 0 {
				return "made-up"
			}
			return rapid.SampledFrom(ids).Draw(rt, label)
		}
		gen := func() int32 { return int32(rapid.IntRange(-1, 4).Draw(rt, "generation")) }
		groupID := func() string { return rapid.SampledFrom([]string{"g", "h"}).Draw(rt, "group") }
		steps := rapid.IntRange(1, 60).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			switch rapid.IntRange(0, 10).Draw(rt, "op") {
			case 0:
				learn(h.join(joinSpec{group: groupID()}))
			case 1:
				learn(h.join(joinSpec{group: groupID(), member: member("rejoin"),
					protocols: rapid.SampledFrom([][]string{{"range"}, {"range", "sticky"}}).Draw(rt, "protocols")}))
			case 2:
				learn(h.join(joinSpec{group: groupID(), instance: rapid.SampledFrom([]string{"i1", "i2"}).Draw(rt, "instance")}))
			case 3:
				a := map[string][]byte{}
				for _, id := range ids {
					a[id] = []byte(id)
				}
				syncs = append(syncs, h.sync(groupID(), member("sync"), gen(), a))
			case 4:
				h.heartbeat(groupID(), member("heartbeat"), gen())
			case 5:
				h.leave(groupID(), member("leave"))
			case 6:
				mid := member("commit")
				if rapid.Bool().Draw(rt, "simple") {
					mid = ""
				}
				h.commit(groupID(), mid, gen(), "t", map[int32]int64{int32(rapid.IntRange(0, 2).Draw(rt, "partition")): int64(i)})
			case 7, 8:
				h.advance(time.Duration(rapid.IntRange(0, 1500).Draw(rt, "advance_ms")) * time.Millisecond)
			case 9:
				h.c.DeleteGroups(h.now, []string{groupID()})
			case 10:
				before, old := offsetsOf(h.c), h.c
				h.reload()
				if n := old.cfg.MetadataBudget.Used(); n != 0 {
					rt.Fatalf("a stopped coordinator still holds %d metadata bytes", n)
				}
				if after := offsetsOf(h.c); fmt.Sprint(after) != fmt.Sprint(before) {
					rt.Fatalf("reload changed offsets:\nbefore %v\nafter  %v", before, after)
				}
			}
			checkInvariants(rt, h.c)
			checkBudget(rt, h.c)
		}
		h.c.Stop()
		if n := h.c.cfg.MetadataBudget.Used(); n != 0 {
			rt.Fatalf("a stopped coordinator still holds %d metadata bytes", n)
		}
		for _, j := range joins {
			if j.calls != 1 {
				rt.Fatalf("a JoinGroup was answered %d times", j.calls)
			}
		}
		for _, s := range syncs {
			if s.calls != 1 {
				rt.Fatalf("a SyncGroup was answered %d times", s.calls)
			}
		}
	})
}
