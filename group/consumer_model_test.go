package group

import (
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"pgregory.net/rapid"
)

// modelClient is a well-behaved KIP-848 consumer: it owns what the
// coordinator last assigned it, and reports that in its heartbeats.
type modelClient struct {
	id     string
	epoch  int32 // 0: not in the group
	owned  partSet
	topics []string
	regex  string // "" none
}

// Kafka: KIP-848's safety and liveness. Random joins, heartbeats,
// subscription changes (topic names and regular expressions), a topic
// created and deleted, leaves and clock ticks (some past the session
// timeout) never give a partition to two consumers at once, neither in
// what the coordinator holds nor in what the clients own; replaying the
// log rebuilds the same groups; and once every member heartbeats a few
// rounds the group is Stable with each subscribed partition assigned
// exactly once, evenly under the uniform assignor.
func TestConsumerGroupRandomSequences(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		topics := scriptTopics{"a": 4, "b": 3}
		cfg := Config{Topics: topics, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			ConsumerAssignors: []string{rapid.SampledFrom([]string{"uniform", "range"}).Draw(rt, "assignor")}}
		log := &MemoryLog{}
		c := New(0, cfg, log)
		c.BeginLoad()
		now := time.UnixMilli(1_700_000_000_000)
		c.FinishLoad(now)
		clients := make([]*modelClient, 4)
		for i := range clients {
			clients[i] = &modelClient{id: "m" + strconv.Itoa(i), owned: partSet{}}
		}
		steps := rapid.IntRange(1, 60).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			cl := clients[rapid.IntRange(0, len(clients)-1).Draw(rt, "client")]
			switch rapid.IntRange(0, 9).Draw(rt, "action") {
			case 0:
				now = now.Add(time.Duration(rapid.IntRange(1, 50).Draw(rt, "seconds")) * time.Second)
				c.Tick(now)
			case 1:
				if cl.epoch > 0 {
					modelBeat(c, now, cl, leaveEpoch)
				}
			case 2:
				cl.topics = rapid.SampledFrom([][]string{{"a"}, {"b"}, {"a", "b"}, {}}).Draw(rt, "topics")
				cl.regex = rapid.SampledFrom([]string{"", "", "a.*", "b|c"}).Draw(rt, "regex")
				modelBeat(c, now, cl, cl.epoch)
			case 3:
				if _, ok := topics["ax"]; ok {
					delete(topics, "ax")
				} else {
					topics["ax"] = 2
				}
			default:
				modelBeat(c, now, cl, cl.epoch)
			}
			checkConsumerSafety(rt, c, clients)
		}
		checkReplay(rt, c, log, now)
		for round := 0; round < 6; round++ {
			for _, cl := range clients {
				if cl.epoch > 0 {
					modelBeat(c, now, cl, cl.epoch)
				}
			}
		}
		checkConverged(rt, c, clients, cfg.ConsumerAssignors[0])
	})
}

// modelBeat sends one heartbeat as the client would and applies the
// answer; a fenced or unknown member rejoins from scratch next time.
func modelBeat(c *Coordinator, now time.Time, cl *modelClient, epoch int32) {
	if cl.topics == nil {
		cl.topics = []string{"a"}
	}
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = 1, "g", cl.id, epoch, -1
	req.SubscribedTopicNames, req.SubscribedTopicRegex = cl.topics, &cl.regex
	req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if epoch == joinEpoch {
		req.RebalanceTimeoutMillis = 30000
		cl.owned = partSet{}
	}
	for _, t := range cl.owned.byTopic() {
		rt2 := kmsg.NewConsumerGroupHeartbeatRequestTopic()
		rt2.TopicID, rt2.Partitions = t.id, t.partitions
		req.Topics = append(req.Topics, rt2)
	}
	resp := c.ConsumerHeartbeat(now, req, Client{ID: cl.id})
	switch {
	case resp.ErrorCode != 0:
		cl.epoch, cl.owned = 0, partSet{} // lost its partitions: rejoin
	case epoch == leaveEpoch:
		cl.epoch, cl.owned = 0, partSet{}
	default:
		cl.epoch = resp.MemberEpoch
		if resp.Assignment != nil {
			cl.owned = partSet{}
			for _, t := range resp.Assignment.Topics {
				for _, p := range t.Partitions {
					cl.owned.add(t.TopicID, p)
				}
			}
		}
	}
}

// checkConsumerSafety: no partition held by two members, in the
// coordinator (assigned or pending revocation) or by the clients that
// are members; the group keeps a resolution for exactly the regular
// expressions its members subscribe to.
func checkConsumerSafety(rt *rapid.T, c *Coordinator, clients []*modelClient) {
	g := c.groups["g"]
	if g == nil || g.cons == nil {
		return
	}
	inUse := g.cons.regexesInUse()
	for _, expr := range inUse {
		if g.cons.regexes[expr] == nil {
			rt.Fatalf("regular expression %q subscribed to but not resolved", expr)
		}
	}
	if len(g.cons.regexes) != len(inUse) {
		rt.Fatalf("%d resolutions kept for %d regular expressions in use", len(g.cons.regexes), len(inUse))
	}
	held := map[tidp]string{}
	for id, m := range g.cons.members {
		for p := range m.assigned {
			if other, ok := held[p]; ok {
				rt.Fatalf("partition %v held by %s and %s", p, other, id)
			}
			held[p] = id
		}
		for p := range m.revoking {
			if other, ok := held[p]; ok {
				rt.Fatalf("partition %v held by %s and %s (revoking)", p, other, id)
			}
			held[p] = id
		}
	}
	// A client fenced by a timeout believes it owns its partitions until
	// its next heartbeat (Kafka fences its commits instead); the clients
	// the coordinator still counts as members never share one.
	owned := map[tidp]string{}
	for _, cl := range clients {
		if cl.epoch <= 0 || g.cons.members[cl.id] == nil {
			continue
		}
		for p := range cl.owned {
			if other, ok := owned[p]; ok {
				rt.Fatalf("partition %v owned by clients %s and %s", p, other, cl.id)
			}
			owned[p] = cl.id
		}
	}
}

// checkReplay loads the log into a new coordinator and compares.
func checkReplay(rt *rapid.T, c *Coordinator, log *MemoryLog, now time.Time) {
	re := New(0, c.cfg, &MemoryLog{})
	re.BeginLoad()
	if _, err := re.Load(log.Bytes()); err != nil {
		rt.Fatalf("replay: %v", err)
	}
	re.FinishLoad(now)
	if got, want := dumpConsumer(re), dumpConsumer(c); got != want {
		rt.Fatalf("replayed state differs:\n%s\nwant\n%s", got, want)
	}
}

func dumpConsumer(c *Coordinator) string {
	g := c.groups["g"]
	if g == nil || g.cons == nil {
		return "none"
	}
	s := g.cons
	out := fmt.Sprintf("epoch=%d assignment=%d\n", s.epoch, s.assignmentEpoch)
	for _, id := range s.memberIDs() {
		m := s.members[id]
		out += fmt.Sprintf("%s e=%d p=%d %s %v %q %s %s t=%s\n", id, m.epoch, m.prevEpoch, m.state, m.topics, m.regex,
			showParts(m.assigned), showParts(m.revoking), showParts(s.target[id]))
	}
	for _, expr := range s.regexesInUse() {
		if r := s.regexes[expr]; r != nil {
			out += fmt.Sprintf("regex %q %v v=%d at=%d\n", expr, r.topics, r.version, r.timestamp)
		}
	}
	if len(s.regexes) != len(s.regexesInUse()) {
		out += fmt.Sprintf("resolutions %d for %d regular expressions\n", len(s.regexes), len(s.regexesInUse()))
	}
	return out
}

// checkConverged: after rounds of heartbeats the group is Stable, the
// clients own exactly the subscribed partitions once each, and the
// uniform assignor balances members of one subscription.
func checkConverged(rt *rapid.T, c *Coordinator, clients []*modelClient, assignor string) {
	g := c.groups["g"]
	if g == nil || g.cons == nil || len(g.cons.members) == 0 {
		return
	}
	if st := g.cons.stateName(); st != "Stable" {
		rt.Fatalf("after heartbeats the group is %s:\n%s", st, dumpConsumer(c))
	}
	want := partSet{}
	for _, name := range g.cons.subscribedTopics() {
		info, _ := c.cfg.Topics.TopicByName(name)
		for p := int32(0); p < info.Partitions; p++ {
			want.add(info.ID, p)
		}
	}
	got, sizes, same := partSet{}, []int{}, true
	for _, cl := range clients {
		if cl.epoch > 0 {
			for p := range cl.owned {
				got[p] = struct{}{}
			}
			sizes = append(sizes, len(cl.owned))
			same = same && fmt.Sprint(cl.topics) == fmt.Sprint(clients[0].topics) && cl.regex == clients[0].regex
		}
	}
	if !got.equal(want) {
		rt.Fatalf("clients own %s, want %s", showParts(got), showParts(want))
	}
	if assignor == "uniform" && same && len(sizes) > 0 {
		lo, hi := sizes[0], sizes[0]
		for _, n := range sizes {
			lo, hi = min(lo, n), max(hi, n)
		}
		if hi-lo > 1 {
			rt.Fatalf("uniform assignment unbalanced: %v", sizes)
		}
	}
}
