package main

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
)

// startVarveFast is startVarve with consumer group members told to
// heartbeat every 300 ms, so that a KIP-848 reconciliation takes a
// moment rather than several heartbeat intervals of 5 s.
func startVarveFast(t *testing.T) string {
	t.Helper()
	cfg, err := config.Parse(map[string]string{
		"log.dirs": t.TempDir(), "listeners": "PLAINTEXT://127.0.0.1:0", "varve.metrics.listener": "",
		"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "3",
		"group.consumer.heartbeat.interval.ms": "300",
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := cluster.New(cfg, slog.New(slog.DiscardHandler))
	if err == nil {
		err = b.Start()
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b.Shutdown(ctx)
	})
	return b.Addr().String()
}

// staticGroupMember starts a franz-go member of group "sd" consuming
// topic "sd" from the start.
func staticGroupMember(t *testing.T, addr string, extra ...kgo.Opt) *kgo.Client {
	t.Helper()
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumerGroup("sd"), kgo.ConsumeTopics("sd"),
		kgo.HeartbeatInterval(200 * time.Millisecond), kgo.FetchMaxWait(200 * time.Millisecond),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
	cl, err := kgo.NewClient(append(opts, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// eventually polls cond every 50 ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Kafka: KIP-848 online downgrade when a static classic member replaces
// the last member of the consumer protocol (GroupMetadataManager's
// validateOnlineDowngradeWithReplacedMemberId). A franz-go consumer of
// the consumer protocol with group.instance.id i1 and a classic one
// share a topic in a consumer group; the first stops (a static leave,
// epoch -2: it keeps its partitions) and comes back as a classic
// consumer with the same instance id. The group is a classic group at
// once, Stable, and the returning consumer holds the partitions it had
// and reads them; the other keeps its own.
func TestStaticClassicConsumerReplacingLastConsumerMemberDowngrades(t *testing.T) {
	addr := startVarveFast(t)
	mustGroupCLI(t, "", "topic", "create", "sd", "-p", "4", "-b", addr)
	admCl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admCl.Close)
	adm := kadm.NewClient(admCl)
	cx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	groupType := func() (string, string) {
		listed, err := adm.ListGroups(cx)
		if err != nil {
			return "", ""
		}
		return listed["sd"].GroupType, listed["sd"].State
	}
	partitionsOf := func(instance string) []int32 { // in the consumer group, by ConsumerGroupDescribe
		d, err := adm.DescribeConsumerGroups(cx, "sd")
		if err != nil {
			return nil
		}
		for _, m := range d["sd"].Members {
			if (m.InstanceID != nil) == (instance != "") && (instance == "" || *m.InstanceID == instance) {
				return slices.Sorted(maps.Keys(m.Assignment["sd"]))
			}
		}
		return nil
	}

	consumer := staticGroupMember(t, addr, kgo.ServerSideBalancer(), kgo.Balancers(kgo.StickyBalancer()), kgo.InstanceID("i1"))
	eventually(t, 30*time.Second, "the consumer member to hold all four partitions", func() bool {
		typ, _ := groupType()
		return typ == "consumer" && len(partitionsOf("i1")) == 4
	})
	staticGroupMember(t, addr) // classic, dynamic
	eventually(t, 60*time.Second, "two partitions each", func() bool {
		return len(partitionsOf("i1")) == 2 && len(partitionsOf("")) == 2
	})
	held := partitionsOf("i1")
	consumer.Close() // leaves with epoch -2, keeping its partitions
	if typ, _ := groupType(); typ != "consumer" {
		t.Fatalf("after the static leave the group is %q, want still a consumer group", typ)
	}

	back := staticGroupMember(t, addr, kgo.InstanceID("i1")) // classic now
	eventually(t, 30*time.Second, "the group to be a classic group, Stable", func() bool {
		typ, state := groupType()
		return typ == "classic" && state == "Stable"
	})
	members := mustGroupCLI(t, "", "group", "describe", "sd", "--members", "-b", addr)
	var rows []string // instance id and partition count of each member
	for _, l := range strings.Split(strings.TrimSpace(members), "\n")[1:] {
		f := strings.Fields(l)
		rows = append(rows, f[2]+"="+f[len(f)-1])
	}
	slices.Sort(rows)
	if !slices.Equal(rows, []string{"-=2", "i1=2"}) {
		t.Fatalf("describe --members after the downgrade: %v, want i1 and a dynamic member with two partitions each:\n%s", rows, members)
	}

	var in strings.Builder
	for i := 0; i < 8; i++ {
		in.WriteString("r\n")
	}
	for p := 0; p < 4; p++ {
		mustGroupCLI(t, in.String(), "produce", "sd", "-p", string(rune('0'+p)), "-b", addr)
	}
	read := map[int32]bool{}
	eventually(t, 30*time.Second, "the returning consumer to read its partitions", func() bool {
		pc, pcancel := context.WithTimeout(cx, 500*time.Millisecond)
		defer pcancel()
		back.PollFetches(pc).EachRecord(func(r *kgo.Record) { read[r.Partition] = true })
		return len(read) >= len(held)
	})
	got := slices.Sorted(maps.Keys(read))
	if !slices.Equal(got, held) {
		t.Fatalf("the returning consumer read partitions %v, want the ones it held, %v", got, held)
	}
}
