package group

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// heapAlloc is the live heap after a full collection.
func heapAlloc() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// The probe that once held 1.7 GiB: 40 JoinGroups with 8 MiB of
// protocol metadata each, to two coordinators of one broker. Kafka
// bounds a group only by group.max.size and the request size; Varve's
// bounds (bound.go) keep what the coordinators hold under the
// per-group and broker-wide limits, refuse the rest with
// GROUP_MAX_SIZE_REACHED or COORDINATOR_NOT_AVAILABLE, and give every
// byte back once the members are gone: the heap returns to where it
// was, so nothing keeps a reference to a refused or removed member's
// metadata.
func TestMetadataProbeStaysUnderBound(t *testing.T) {
	const (
		metaBytes   = 8 << 20
		brokerBytes = 64 << 20
	)
	budget := NewMetadataBudget(brokerBytes)
	cfg := testConfig() // the default per-group bound, 32 MiB
	cfg.MetadataBudget = budget
	hs := []*harness{newHarness(t, cfg), newHarness(t, cfg)}
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Topics, meta.UserData = []string{"t"}, make([]byte, metaBytes)
	metadata := meta.AppendTo(nil)
	base := heapAlloc()

	codes := map[int16]int{}
	for i := 0; i < 40; i++ {
		// One coordinator's joins all go to one group, the other's each
		// to a group of its own.
		h, groupID := hs[0], "g"
		if i%2 == 1 {
			h, groupID = hs[1], fmt.Sprintf("h%d", i)
		}
		j := h.join(joinSpec{group: groupID, version: 3, metadata: metadata})
		if j.done() {
			codes[j.resp.ErrorCode]++
		}
	}
	held := hs[0].c.MetadataBytes() + hs[1].c.MetadataBytes()
	if held != budget.Used() || held > brokerBytes || held < brokerBytes-2*metaBytes {
		t.Fatalf("coordinators hold %d bytes, the budget counts %d of %d", held, budget.Used(), int64(brokerBytes))
	}
	for _, h := range hs {
		for id, g := range h.c.groups {
			if g.metaBytes > DefaultMaxGroupMetadataBytes {
				t.Fatalf("group %s holds %d bytes", id, g.metaBytes)
			}
		}
	}
	if codes[kerr.GroupMaxSizeReached.Code] == 0 || codes[kerr.CoordinatorNotAvailable.Code] == 0 {
		t.Fatalf("answers by code: %v; want refusals by both bounds", codes)
	}
	if grown := heapAlloc() - base; grown > brokerBytes+metaBytes {
		t.Fatalf("the heap grew by %d MiB with %d MiB admitted", grown>>20, held>>20)
	}

	// Nobody heartbeats: the joins complete, nobody syncs, every member
	// is removed and everything is released.
	for _, h := range hs {
		h.advance(0)
		h.advance(10 * time.Second)
	}
	if n := budget.Used(); n != 0 {
		t.Fatalf("%d bytes still counted after every member was removed", n)
	}
	if grown := heapAlloc() - base; grown > metaBytes/2 {
		t.Fatalf("the heap is still %d MiB above where it started: a reference is kept", grown>>20)
	}
}

// Every way out of a group gives its bytes back: a leave, a refused
// join, a static member replaced, a failed SyncGroup, a stop.
func TestMetadataAccountingReleases(t *testing.T) {
	cfg := testConfig()
	cfg.MaxGroupMetadataBytes = 4096
	h := newHarness(t, cfg)
	budget := h.c.cfg.MetadataBudget
	check := func(step string) {
		t.Helper()
		var cost int64
		for _, g := range h.c.groups {
			for _, m := range g.members {
				cost += m.cost()
			}
		}
		if cost != h.c.MetadataBytes() || cost != budget.Used() {
			t.Fatalf("%s: members cost %d, groups count %d, budget %d", step, cost, h.c.MetadataBytes(), budget.Used())
		}
	}
	ids := h.stableGroup("g", 2)
	check("stable")
	if r := h.join(joinSpec{group: "g", version: 3, metadata: make([]byte, 5000)}).resp; r.ErrorCode != kerr.GroupMaxSizeReached.Code {
		t.Fatalf("join over the group's bound: %+v", r)
	}
	check("refused join")
	h.leave("g", ids[1])
	check("leave")
	a := h.join(joinSpec{group: "s", instance: "i1", metadata: make([]byte, 1000)})
	h.advance(0)
	h.sync("s", a.resp.MemberID, 1, map[string][]byte{a.resp.MemberID: make([]byte, 1000)})
	check("static member")
	h.join(joinSpec{group: "s", instance: "i1", metadata: make([]byte, 10)}) // replaced, smaller
	check("static member replaced")
	h.join(joinSpec{group: "s", instance: "i1", metadata: make([]byte, 4000)}) // over: refused, old kept
	check("static replacement refused")
	h.stopAndCheck(t)
}

func (h *harness) stopAndCheck(t *testing.T) {
	t.Helper()
	h.c.Stop()
	if n := h.c.cfg.MetadataBudget.Used(); n != 0 || h.c.MetadataBytes() != 0 {
		t.Fatalf("after stop the budget counts %d bytes", n)
	}
}
