package cluster_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"
)

// produceSpread writes n records round-robin over partitions 0..parts-1,
// value "p/i".
func produceSpread(t *testing.T, addr, topic string, parts, n int) {
	t.Helper()
	p := client(t, addr, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for i := 0; i < n; i++ {
		part := int32(i % parts)
		recs = append(recs, &kgo.Record{Partition: part, Value: []byte(fmt.Sprintf("%d/%d", part, i))})
	}
	produceSync(t, p, recs...)
}

// Kafka: the classic protocol shares a topic's partitions among the
// members; when one leaves (LeaveGroup), the group rebalances and the
// other takes every partition.
func TestGroupMembersSplitThenOneTakesAll(t *testing.T) {
	b := startBroker(t, t.TempDir(), groupProps(nil))
	createTopic(t, b.addr, "split", 4, nil)
	va, vb := newView(), newView()
	groupMember(t, b.addr, "g-split", "split", va)
	mb := groupMember(t, b.addr, "g-split", "split", vb)
	waitFor(t, 15*time.Second, "two members with two partitions each", func() bool {
		pa, pb := va.partitions(), vb.partitions()
		return len(pa) == 2 && len(pb) == 2 && !slices.ContainsFunc(pa, func(p int32) bool { return slices.Contains(pb, p) })
	})
	mb.Close() // sends LeaveGroup
	waitFor(t, 15*time.Second, "the remaining member to own all four partitions", func() bool {
		return slices.Equal(va.partitions(), []int32{0, 1, 2, 3})
	})
}

// Kafka: committed offsets are where a group resumes. A member processes
// some records and commits exactly those; a member started later in the
// same group reads every other record once: nothing skipped, nothing
// committed read again.
func TestGroupResumesAfterLastCommit(t *testing.T) {
	b := startBroker(t, t.TempDir(), groupProps(nil))
	createTopic(t, b.addr, "resume", 4, nil)
	const total = 200
	produceSpread(t, b.addr, "resume", 4, total)

	seen := map[string]int{}
	first := groupMember(t, b.addr, "g-resume", "resume", nil, kgo.DisableAutoCommit())
	var processed []*kgo.Record
	pollUntil(t, first, 20*time.Second, func(r *kgo.Record) bool {
		processed = append(processed, r)
		seen[string(r.Value)]++
		return len(processed) == 70
	})
	if err := first.CommitRecords(ctx(t), processed...); err != nil {
		t.Fatalf("commit: %v", err)
	}
	first.Close()

	committed := map[int32]int64{}
	for _, r := range processed {
		committed[r.Partition] = max(committed[r.Partition], r.Offset+1)
	}
	offs, err := kadm.NewClient(client(t, b.addr)).FetchOffsets(ctx(t), "g-resume")
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range committed {
		if o, ok := offs.Lookup("resume", p); !ok || o.At != want {
			t.Fatalf("partition %d committed at %d, want %d", p, o.At, want)
		}
	}

	second := groupMember(t, b.addr, "g-resume", "resume", nil, kgo.DisableAutoCommit())
	rest := 0
	pollUntil(t, second, 20*time.Second, func(r *kgo.Record) bool {
		if r.Offset < committed[r.Partition] {
			t.Fatalf("record %s at %d/%d was committed and is read again", r.Value, r.Partition, r.Offset)
		}
		seen[string(r.Value)]++
		rest++
		return len(processed)+rest == total
	})
	for v, n := range seen {
		if n != 1 {
			t.Fatalf("record %s read %d times", v, n)
		}
	}
	if len(seen) != total {
		t.Fatalf("%d distinct records read, want %d", len(seen), total)
	}
}

// Kafka: session.timeout.ms. A member that stops heartbeating (its
// connections cut, no LeaveGroup) is removed once its session expires,
// and the other member takes its partitions.
func TestGroupSilentMemberRemovedAfterSessionTimeout(t *testing.T) {
	b := startBroker(t, t.TempDir(), groupProps(nil))
	createTopic(t, b.addr, "silent", 4, nil)
	va, vb := newView(), newView()
	groupMember(t, b.addr, "g-silent", "silent", va)
	var f freezer
	groupMember(t, b.addr, "g-silent", "silent", vb, kgo.Dialer(f.dial), kgo.RetryTimeout(time.Second))
	waitFor(t, 15*time.Second, "two members with two partitions each", func() bool {
		return len(va.partitions()) == 2 && len(vb.partitions()) == 2
	})
	frozen := time.Now()
	f.freeze()
	waitFor(t, 15*time.Second, "the live member to own all four partitions", func() bool {
		return len(va.partitions()) == 4
	})
	// The session timeout is 1 s: an earlier takeover would mean the
	// member was removed for something other than its silence.
	if took := time.Since(frozen); took < 900*time.Millisecond {
		t.Fatalf("the silent member was replaced after %v, before its 1 s session expired", took)
	}
}

// Kafka: KIP-345. A static member (group.instance.id) that restarts
// within its session timeout gets its partitions back without a
// rebalance: the group's generation does not move.
func TestGroupStaticMemberRestartsWithoutRebalance(t *testing.T) {
	b := startBroker(t, t.TempDir(), groupProps(nil))
	createTopic(t, b.addr, "static", 4, nil)
	vb := newView()
	mb := groupMember(t, b.addr, "g-static", "static", vb) // joins first: the leader
	waitFor(t, 15*time.Second, "the first member to own all partitions", func() bool { return len(vb.partitions()) == 4 })
	va := newView()
	ma := groupMember(t, b.addr, "g-static", "static", va, kgo.InstanceID("static-a"))
	waitFor(t, 15*time.Second, "two members with two partitions each", func() bool {
		return len(va.partitions()) == 2 && len(vb.partitions()) == 2
	})
	time.Sleep(300 * time.Millisecond) // let the cooperative follow-up rebalance settle
	_, genBefore := mb.GroupMetadata()
	owned := va.partitions()
	ma.Close() // a static member does not leave
	va2 := newView()
	ma2 := groupMember(t, b.addr, "g-static", "static", va2, kgo.InstanceID("static-a"))
	waitFor(t, 15*time.Second, "the restarted static member to get its partitions", func() bool {
		return slices.Equal(va2.partitions(), owned)
	})
	time.Sleep(500 * time.Millisecond) // several heartbeats: a rebalance would show
	_, genAfter := mb.GroupMetadata()
	_, genRestarted := ma2.GroupMetadata()
	if genAfter != genBefore || genRestarted != genBefore {
		t.Fatalf("generation %d before the static restart, %d (other member) and %d (restarted) after", genBefore, genAfter, genRestarted)
	}
	if len(vb.partitions()) != 2 {
		t.Fatalf("the other member owns %v", vb.partitions())
	}
}

// Kafka serves every version of the group APIs it ever shipped (within
// the ranges of KIP-896): clients pinned to old versions (Kafka 0.11:
// JoinGroup v2, SyncGroup v1, OffsetCommit v3, OffsetFetch v3, no
// MEMBER_ID_REQUIRED; Kafka 2.3: static membership's first versions)
// consume and commit as a group too.
func TestGroupOldProtocolVersions(t *testing.T) {
	b := startBroker(t, t.TempDir(), groupProps(nil))
	createTopic(t, b.addr, "old-group", 2, nil)
	produceSpread(t, b.addr, "old-group", 2, 40)
	for name, v := range map[string]*kversion.Versions{"0.11": kversion.V0_11_0(), "2.3": kversion.V2_3_0()} {
		t.Run(name, func(t *testing.T) {
			g := "g-old-" + name
			cl := groupMember(t, b.addr, g, "old-group", nil, kgo.MaxVersions(v), kgo.DisableAutoCommit())
			var recs []*kgo.Record
			pollUntil(t, cl, 20*time.Second, func(r *kgo.Record) bool {
				recs = append(recs, r)
				return len(recs) == 40
			})
			if err := cl.CommitRecords(ctx(t), recs...); err != nil {
				t.Fatalf("commit at %s versions: %v", name, err)
			}
			offs, err := kadm.NewClient(client(t, b.addr, kgo.MaxVersions(v))).FetchOffsets(ctx(t), g)
			if err != nil {
				t.Fatal(err)
			}
			for p := int32(0); p < 2; p++ {
				if o, ok := offs.Lookup("old-group", p); !ok || o.At != 20 {
					t.Fatalf("partition %d committed at %d, want 20", p, o.At)
				}
			}
		})
	}
}
