package cluster_test

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumerMember is a kgo consumer using the KIP-848 protocol
// (ServerSideBalancer with the sticky balancer: the server's uniform
// assignor).
func consumerMember(t *testing.T, addr, groupID, topic string, v *memberView, extra ...kgo.Opt) *kgo.Client {
	t.Helper()
	opts := append([]kgo.Opt{kgo.ServerSideBalancer(), kgo.Balancers(kgo.StickyBalancer())}, extra...)
	return groupMember(t, addr, groupID, topic, v, opts...)
}

// Kafka: KIP-848. ApiVersions lists ConsumerGroupHeartbeat and
// ConsumerGroupDescribe with group.version 1 finalized (a new cluster's
// default); two consumers with group.protocol=consumer share a topic's
// partitions, assigned by the broker; when one leaves (epoch -1) the
// other takes every partition; ConsumerGroupDescribe and ListGroups
// show the group as a consumer group.
func TestConsumerGroupMembersSplitThenOneTakesAll(t *testing.T) {
	b := startBroker(t, t.TempDir(), groupProps(nil))
	createTopic(t, b.addr, "cg-split", 4, nil)
	va, vb := newView(), newView()
	consumerMember(t, b.addr, "cg", "cg-split", va)
	mb := consumerMember(t, b.addr, "cg", "cg-split", vb)
	waitFor(t, 20*time.Second, "two members with two partitions each", func() bool {
		pa, pb := va.partitions(), vb.partitions()
		return len(pa) == 2 && len(pb) == 2 && !slices.ContainsFunc(pa, func(p int32) bool { return slices.Contains(pb, p) })
	})

	cl := client(t, b.addr)
	adm := kadm.NewClient(cl)
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = []string{"cg"}
	resp, err := req.RequestWith(ctx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	g := resp.Groups[0]
	if g.ErrorCode != 0 || g.State != "Stable" || len(g.Members) != 2 || g.AssignorName != "uniform" {
		t.Fatalf("ConsumerGroupDescribe: error %d state %q members %d assignor %q", g.ErrorCode, g.State, len(g.Members), g.AssignorName)
	}
	for _, m := range g.Members {
		if len(m.Assignment.TopicPartitions) != 1 || m.Assignment.TopicPartitions[0].Topic != "cg-split" ||
			len(m.Assignment.TopicPartitions[0].Partitions) != 2 {
			t.Fatalf("member %s assignment %+v, want two partitions of cg-split", m.MemberID, m.Assignment)
		}
	}
	listed, err := adm.ListGroups(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if lg, ok := listed["cg"]; !ok || lg.GroupType != "consumer" || lg.ProtocolType != "consumer" || lg.State != "Stable" {
		t.Fatalf("ListGroups: %+v", listed)
	}

	mb.Close() // leaves with member epoch -1
	waitFor(t, 20*time.Second, "the remaining member to own all four partitions", func() bool {
		return slices.Equal(va.partitions(), []int32{0, 1, 2, 3})
	})
}

// Kafka: KIP-848 with OffsetCommit v9 (member id and member epoch). A
// consumer commits what it processed; a consumer started later in the
// same group resumes from there, reading every other record once; a
// broker restart keeps the group and its offsets.
func TestConsumerGroupResumesAfterLastCommit(t *testing.T) {
	dir := t.TempDir()
	b := startBroker(t, dir, groupProps(nil))
	createTopic(t, b.addr, "cg-resume", 4, nil)
	const total = 200
	produceSpread(t, b.addr, "cg-resume", 4, total)

	seen := map[string]int{}
	first := consumerMember(t, b.addr, "cg-r", "cg-resume", nil, kgo.DisableAutoCommit())
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

	b.stop(t)
	b = startBroker(t, dir, groupProps(nil))

	describeConsumerGroup(t, b.addr, "cg-r", "Empty")
	second := consumerMember(t, b.addr, "cg-r", "cg-resume", nil)
	pollUntil(t, second, 30*time.Second, func(r *kgo.Record) bool {
		seen[string(r.Value)]++
		return len(seen) == total
	})
	for v, n := range seen {
		if n != 1 {
			t.Fatalf("record %s read %d times", v, n)
		}
	}
}

// describeConsumerGroup checks that ConsumerGroupDescribe knows groupID
// as a consumer group in state.
func describeConsumerGroup(t *testing.T, addr, groupID, state string) {
	t.Helper()
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = []string{groupID}
	var g kmsg.ConsumerGroupDescribeResponseGroup
	waitFor(t, 10*time.Second, "the group to load", func() bool {
		resp, err := req.RequestWith(ctx(t), client(t, addr))
		if err != nil {
			t.Fatal(err)
		}
		g = resp.Groups[0]
		return g.ErrorCode != kerr.CoordinatorLoadInProgress.Code && g.ErrorCode != kerr.NotCoordinator.Code
	})
	if g.ErrorCode != 0 || g.State != state {
		t.Fatalf("ConsumerGroupDescribe %s: error %d state %q, want a consumer group in %s", groupID, g.ErrorCode, g.State, state)
	}
}

// advertises reports whether ApiVersions lists key.
func advertises(t *testing.T, addr string, key int16) bool {
	t.Helper()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx(t), client(t, addr))
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(resp.ApiKeys, func(k kmsg.ApiVersionsResponseApiKey) bool { return k.ApiKey == key })
}

// Kafka: KIP-848 is enabled by group.version 1. After a safe downgrade
// to 0 the broker no longer lists ConsumerGroupHeartbeat and
// ConsumerGroupDescribe, so a client asking for the server-side
// balancer runs the classic protocol; upgrading again brings them back.
func TestConsumerGroupProtocolFollowsGroupVersion(t *testing.T) {
	b := startBroker(t, t.TempDir(), groupProps(nil))
	adm := kadm.NewClient(client(t, b.addr))
	heartbeat, describe := kmsg.ConsumerGroupHeartbeat.Int16(), kmsg.ConsumerGroupDescribe.Int16()
	if !advertises(t, b.addr, heartbeat) || !advertises(t, b.addr, describe) {
		t.Fatal("a new node does not advertise ConsumerGroupHeartbeat and ConsumerGroupDescribe")
	}
	if err := updateFeature(t, adm, "group.version", 0, 2); err != nil {
		t.Fatalf("downgrade group.version to 0: %v", err)
	}
	if advertises(t, b.addr, heartbeat) || advertises(t, b.addr, describe) {
		t.Fatal("group.version 0 still advertises the consumer group APIs")
	}
	createTopic(t, b.addr, "gv", 2, nil)
	v := newView()
	consumerMember(t, b.addr, "gv-g", "gv", v)
	waitFor(t, 20*time.Second, "the member to own both partitions", func() bool { return len(v.partitions()) == 2 })
	listed, err := adm.ListGroups(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if lg := listed["gv-g"]; lg.GroupType != "classic" {
		t.Fatalf("with group.version 0 the group is %+v, want classic", lg)
	}
	if err := updateFeature(t, adm, "group.version", 1, 1); err != nil {
		t.Fatalf("upgrade group.version to 1: %v", err)
	}
	if !advertises(t, b.addr, heartbeat) {
		t.Fatal("group.version 1 again does not advertise ConsumerGroupHeartbeat")
	}
}
