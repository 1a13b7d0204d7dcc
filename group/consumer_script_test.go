package group

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/varve/varve/record"
)

// scriptTopics is the scripts' topic metadata: a topic's id is its name.
type scriptTopics map[string]int32

func topicIDOf(name string) TopicID {
	var id TopicID
	copy(id[:], name)
	return id
}

func topicNameOf(id TopicID) string { return strings.TrimRight(string(id[:]), "\x00") }

func (t scriptTopics) TopicByName(name string) (TopicInfo, bool) {
	n, ok := t[name]
	return TopicInfo{Name: name, ID: topicIDOf(name), Partitions: n}, ok
}

func (t scriptTopics) TopicByID(id TopicID) (TopicInfo, bool) { return t.TopicByName(topicNameOf(id)) }

func (t scriptTopics) TopicNames() ([]string, int64) {
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, t.TopicsVersion()
}

// TopicsVersion is a hash of the topic names: it changes when a topic
// is created or deleted.
func (t scriptTopics) TopicsVersion() int64 {
	h := fnv.New64a()
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		h.Write([]byte(n))
		h.Write([]byte{0})
	}
	return int64(h.Sum64())
}

// cmdCGTopics sets the topics the consumer group assignors see:
//
//	cg-topics a=3 b=2
func (s *script) cmdCGTopics(t *testing.T, td *datadriven.TestData) {
	topics := scriptTopics{}
	for _, a := range td.CmdArgs {
		n, err := strconv.Atoi(a.Vals[0])
		if err != nil {
			td.Fatalf(t, "cg-topics: %v", err)
		}
		topics[a.Key] = int32(n)
	}
	s.cfg.Topics, s.c.cfg.Topics = topics, topics
	s.printf("ok")
}

// cmdCGConfig sets consumer group settings:
//
//	cg-config [max-size=N] [migration=bidirectional|upgrade|downgrade|disabled]
func (s *script) cmdCGConfig(t *testing.T, td *datadriven.TestData) {
	if td.HasArg("max-size") {
		td.ScanArgs(t, "max-size", &s.cfg.ConsumerMaxSize)
		s.c.cfg.ConsumerMaxSize = s.cfg.ConsumerMaxSize
	}
	if td.HasArg("migration") {
		td.ScanArgs(t, "migration", &s.cfg.MigrationPolicy)
		s.c.cfg.MigrationPolicy = s.cfg.MigrationPolicy
	}
	s.printf("ok")
}

// cmdCGFetchCheck checks an OffsetFetch v9 member id and epoch:
//
//	cg-fetch-check group=g [member=m] [epoch=N]
func (s *script) cmdCGFetchCheck(t *testing.T, td *datadriven.TestData) {
	var id string
	var member *string
	epoch := int32(-1)
	td.ScanArgs(t, "group", &id)
	if td.HasArg("member") {
		member = new(string)
		td.ScanArgs(t, "member", member)
	}
	td.MaybeScanArgs(t, "epoch", &epoch)
	s.printf("OffsetFetch member check: %s", codeName(s.c.CheckFetchMember(s.now, id, member, epoch)))
}

// cmdCGHeartbeat sends a ConsumerGroupHeartbeat:
//
//	cg-heartbeat group=g member=m epoch=0 [topics=(a,b)] [owned=(a/0,b/1)]
//	             [assignor=range] [instance=i] [regex=R] [rebalance=ms] [version=1]
//	             [deny=(t1,t2)]
//
// deny names topics the client may not DESCRIBE.
func (s *script) cmdCGHeartbeat(t *testing.T, td *datadriven.TestData) {
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version, req.RebalanceTimeoutMillis = 1, -1
	td.ScanArgs(t, "group", &req.Group)
	td.MaybeScanArgs(t, "member", &req.MemberID)
	td.ScanArgs(t, "epoch", &req.MemberEpoch)
	td.MaybeScanArgs(t, "version", &req.Version)
	td.MaybeScanArgs(t, "rebalance", &req.RebalanceTimeoutMillis)
	if req.MemberEpoch == 0 && !td.HasArg("rebalance") {
		req.RebalanceTimeoutMillis = 30000
	}
	if td.HasArg("topics") {
		req.SubscribedTopicNames = []string{}
		td.ScanArgs(t, "topics", &req.SubscribedTopicNames)
	}
	if td.HasArg("owned") || req.MemberEpoch == 0 {
		var owned []string
		td.MaybeScanArgs(t, "owned", &owned)
		req.Topics = ownedTopics(t, owned)
	}
	for _, k := range []string{"assignor", "instance", "regex"} {
		if td.HasArg(k) {
			var v string
			td.ScanArgs(t, k, &v)
			switch k {
			case "assignor":
				req.ServerAssignor = &v
			case "instance":
				req.InstanceID = &v
			default:
				req.SubscribedTopicRegex = &v
			}
		}
	}
	client := Client{ID: req.MemberID, Host: "/127.0.0.1"}
	if td.HasArg("deny") {
		var deny []string
		td.ScanArgs(t, "deny", &deny)
		client.MayDescribe = func(topic string) bool { return !slices.Contains(deny, topic) }
	}
	resp := s.c.ConsumerHeartbeat(s.now, req, client)
	if resp.ErrorCode != 0 {
		s.printf("%s CGHeartbeat: %s", req.MemberID, kerr.ErrorForCode(resp.ErrorCode).(*kerr.Error).Message)
		return
	}
	line := fmt.Sprintf("%s CGHeartbeat: epoch=%d interval=%dms", deref(resp.MemberID), resp.MemberEpoch, resp.HeartbeatIntervalMillis)
	if resp.Assignment != nil {
		ps := partSet{}
		for _, at := range resp.Assignment.Topics {
			for _, p := range at.Partitions {
				ps.add(at.TopicID, p)
			}
		}
		line += " assigned=" + showParts(ps)
	}
	s.printf("%s", line)
}

func ownedTopics(t *testing.T, owned []string) []kmsg.ConsumerGroupHeartbeatRequestTopic {
	byTopic := map[string][]int32{}
	var names []string
	for _, o := range owned {
		if o == "" {
			continue
		}
		name, p, ok := strings.Cut(o, "/")
		n, err := strconv.Atoi(p)
		if !ok || err != nil {
			t.Fatalf("owned partition %q: want topic/partition", o)
		}
		if byTopic[name] == nil {
			names = append(names, name)
		}
		byTopic[name] = append(byTopic[name], int32(n))
	}
	out := []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	for _, name := range names {
		rt := kmsg.NewConsumerGroupHeartbeatRequestTopic()
		rt.TopicID, rt.Partitions = topicIDOf(name), byTopic[name]
		out = append(out, rt)
	}
	return out
}

// showParts prints a partition set as (topic/partition, ...).
func showParts(ps partSet) string {
	var out []string
	for _, p := range ps.sorted() {
		out = append(out, fmt.Sprintf("%s/%d", topicNameOf(p.id), p.p))
	}
	return "(" + strings.Join(out, ",") + ")"
}

// cmdCGDescribe shows a consumer group as ConsumerGroupDescribe does,
// with each member's reconciliation state.
func (s *script) cmdCGDescribe(t *testing.T, td *datadriven.TestData) {
	var id string
	td.ScanArgs(t, "group", &id)
	d := s.c.ConsumerDescribe(s.now, id)
	if d.ErrorCode != 0 {
		s.printf("%s: %s", id, kerr.ErrorForCode(d.ErrorCode).(*kerr.Error).Message)
		return
	}
	s.printf("%s: state=%s epoch=%d assignment-epoch=%d assignor=%s", id, d.State, d.Epoch, d.AssignmentEpoch, d.AssignorName)
	cs := s.c.groups[id].cons
	for _, mid := range cs.memberIDs() {
		m := cs.members[mid]
		sub := strings.Join(m.topics, ",")
		if m.classic != nil {
			sub += fmt.Sprintf(") classic(session=%dms", m.classic.sessionTimeout)
		}
		if m.regex != "" {
			sub += fmt.Sprintf(") regex=%q resolved=(%s", m.regex, strings.Join(cs.memberTopics(m), ","))
		}
		s.printf("  %s epoch=%d prev=%d %s topics=(%s) assigned=%s revoking=%s target=%s", m.id, m.epoch, m.prevEpoch,
			m.state, sub, showParts(m.assigned), showParts(m.revoking), showParts(cs.target[mid]))
	}
}

// describeCGRecord decodes one consumer group record for the scripts.
func describeCGRecord(r record.Record) string {
	k, err := readCGKey(r.Key)
	if err != nil {
		return "bad consumer group key: " + err.Error()
	}
	names := map[int16]string{cgMetadataKey: "cg-metadata", cgMemberKey: "cg-member", cgTargetMetadataKey: "cg-target-epoch",
		cgTargetMemberKey: "cg-target", cgCurrentKey: "cg-current", cgRegexKey: "cg-regex"}
	head := names[k.typ] + " " + k.group
	if k.memberID != "" {
		head += " " + k.memberID
	}
	if k.typ == cgRegexKey {
		head += " " + strconv.Quote(k.regex)
	}
	if r.Value == nil {
		return head + ": tombstone"
	}
	switch k.typ {
	case cgMetadataKey:
		e, _, err := readCGMetadata(r.Value)
		return fmt.Sprintf("%s: epoch=%d%s", head, e, errSuffix(err))
	case cgTargetMetadataKey:
		e, err := readCGEpoch(r.Value)
		return fmt.Sprintf("%s: epoch=%d%s", head, e, errSuffix(err))
	case cgMemberKey:
		m, err := readCGMember(k.memberID, r.Value)
		line := fmt.Sprintf("%s: topics=(%s) assignor=%q instance=%q", head, strings.Join(m.topics, ","), m.assignor, m.instanceID)
		if m.regex != "" {
			line += fmt.Sprintf(" regex=%q", m.regex)
		}
		if m.classic != nil {
			var names []string
			for _, p := range m.classic.protocols {
				names = append(names, p.name)
			}
			line += fmt.Sprintf(" classic(session=%dms protocols=%s)", m.classic.sessionTimeout, strings.Join(names, ","))
		}
		return line + errSuffix(err)
	case cgRegexKey:
		re, err := readCGRegex(r.Value)
		return fmt.Sprintf("%s: topics=(%s) at=%s%s", head, strings.Join(re.topics, ","), since(time.UnixMilli(re.timestamp)), errSuffix(err))
	case cgTargetMemberKey:
		ps, err := readCGTargetMember(r.Value)
		return fmt.Sprintf("%s: %s%s", head, showParts(ps), errSuffix(err))
	}
	m := &cmember{}
	err = readCGCurrent(m, r.Value)
	return fmt.Sprintf("%s: epoch=%d prev=%d %s assigned=%s revoking=%s%s", head, m.epoch, m.prevEpoch, m.state,
		showParts(m.assigned), showParts(m.revoking), errSuffix(err))
}

func errSuffix(err error) string {
	if err != nil {
		return " error: " + err.Error()
	}
	return ""
}
