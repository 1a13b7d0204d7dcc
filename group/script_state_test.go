package group

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/varve/varve/record"
)

// The scripts' commands that show state, and that load, unload and
// crash the coordinator.

// cmdDescribe shows a group as the coordinator holds it:
//
//	describe group=g
func (s *script) cmdDescribe(t *testing.T, td *datadriven.TestData) {
	var id string
	td.ScanArgs(t, "group", &id)
	g := s.c.groups[id]
	if g == nil {
		s.printf("group %s: none (DescribeGroups: %s)", id, s.c.DescribeGroup(s.now, id, false).State)
		return
	}
	line := fmt.Sprintf("group %s: %s gen=%d", id, g.state, g.generation)
	for _, f := range []struct{ k, v string }{{"type", g.protocolType}, {"protocol", g.protocol}, {"leader", g.leader}} {
		if f.v != "" {
			line += " " + f.k + "=" + f.v
		}
	}
	if g.metaBytes != 0 {
		line += fmt.Sprintf(" metadata-bytes=%d", g.metaBytes)
	}
	s.printf("%s", line)
	for _, mid := range g.order {
		s.printf("  %s", describeMember(g, g.members[mid]))
	}
	if len(g.pending) > 0 {
		s.printf("  pending: %s", strings.Join(slices.Sorted(keys(g.pending)), ", "))
	}
	if len(g.offsets) > 0 {
		tps := slices.SortedFunc(keys(g.offsets), compareTP)
		parts := make([]string, 0, len(tps))
		for _, tp := range tps {
			parts = append(parts, fmt.Sprintf("%s/%d=%d", tp.topic, tp.partition, g.offsets[tp].offset))
		}
		s.printf("  offsets: %s", strings.Join(parts, " "))
	}
}

func describeMember(g *group, m *member) string {
	out := "member " + m.id
	if m.static() {
		out += " instance=" + m.instanceID
	}
	out += fmt.Sprintf(" session=%s rebalance=%s", ms(m.sessionTimeout), ms(m.rebalanceTimeout))
	if m.assignment != nil {
		out += " assignment=" + showBytes(m.assignment)
	}
	for _, f := range []struct {
		on   bool
		name string
	}{{m.awaitingJoin(), "joining"}, {m.awaitingSync(), "syncing"}, {g.toSync[m.id], "to-sync"}, {m.isNew, "new"}} {
		if f.on {
			out += " " + f.name
		}
	}
	return out
}

func ms(v int32) string { return (time.Duration(v) * time.Millisecond).String() }

func keys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// cmdBytes shows what the coordinator holds against the metadata
// bounds, and checks the accounting: each group's count is what its
// members cost, and the budget is what the groups hold.
func (s *script) cmdBytes(t *testing.T, td *datadriven.TestData) {
	for _, id := range s.c.sortedGroupIDs() {
		g := s.c.groups[id]
		var sum int64
		for _, m := range g.members {
			sum += m.cost()
		}
		if sum != g.metaBytes {
			s.printf("BUG: group %s counts %d bytes, its members cost %d", id, g.metaBytes, sum)
		}
	}
	b := s.cfg.MetadataBudget
	s.printf("coordinator holds %d bytes; broker budget %d of %d", s.c.MetadataBytes(), b.Used(), b.Limit())
	if b.Used() != s.c.MetadataBytes() {
		s.printf("BUG: the budget counts %d bytes", b.Used())
	}
}

// cmdList shows ListGroups.
func (s *script) cmdList(t *testing.T, td *datadriven.TestData) {
	code, groups := s.c.ListGroups(s.now, nil, nil)
	if code != 0 {
		s.printf("ListGroups: %s", codeName(code))
	}
	for _, g := range groups {
		s.printf("%s %s type=%q", g.Group, g.GroupState, g.ProtocolType)
	}
	if code == 0 && len(groups) == 0 {
		s.printf("no groups")
	}
}

// cmdLog shows the records written to __consumer_offsets since the last
// "log" (or all of them with "log all"), decoded.
func (s *script) cmdLog(t *testing.T, td *datadriven.TestData) {
	i := 0
	for r, err := range record.Records(s.log.Bytes()) {
		if err != nil {
			td.Fatalf(t, "log: %v", err)
		}
		if i >= s.shown || td.HasArg("all") {
			s.printf("%d %s", r.Offset, describeRecord(r))
		}
		i++
	}
	if i == s.shown && !td.HasArg("all") {
		s.printf("no new records")
	}
	s.shown = i
}

// describeRecord decodes one __consumer_offsets record.
func describeRecord(r record.Record) string {
	v, _ := keyVersion(r.Key)
	switch v {
	case 0, 1:
		var k kmsg.OffsetCommitKey
		if err := k.ReadFrom(r.Key); err != nil {
			return "bad offset key: " + err.Error()
		}
		head := fmt.Sprintf("offset %s %s/%d", k.Group, k.Topic, k.Partition)
		if r.Value == nil {
			return head + ": tombstone"
		}
		var val kmsg.OffsetCommitValue
		if err := val.ReadFrom(r.Value); err != nil {
			return head + ": bad value: " + err.Error()
		}
		out := fmt.Sprintf("%s: v%d offset=%d", head, val.Version, val.Offset)
		if val.Version >= 3 {
			out += fmt.Sprintf(" epoch=%d", val.LeaderEpoch)
		}
		out += fmt.Sprintf(" metadata=%q committed=%s", val.Metadata, since(time.UnixMilli(val.CommitTimestamp)))
		if val.Version == 1 {
			out += " expires=" + since(time.UnixMilli(val.ExpireTimestamp))
		}
		return out
	case 2:
		return describeGroupRecord(r)
	case cgMetadataKey, cgMemberKey, cgTargetMetadataKey, cgTargetMemberKey, cgCurrentKey, cgRegexKey:
		return describeCGRecord(r)
	}
	return fmt.Sprintf("key version %d", v)
}

func describeGroupRecord(r record.Record) string {
	var k kmsg.GroupMetadataKey
	if err := k.ReadFrom(r.Key); err != nil {
		return "bad group key: " + err.Error()
	}
	if r.Value == nil {
		return "group " + k.Group + ": tombstone"
	}
	var v kmsg.GroupMetadataValue
	if err := v.ReadFrom(r.Value); err != nil {
		return "group " + k.Group + ": bad value: " + err.Error()
	}
	out := fmt.Sprintf("group %s: v%d gen=%d type=%q protocol=%s leader=%s", k.Group, v.Version,
		v.Generation, v.ProtocolType, deref(v.Protocol), deref(v.Leader))
	for _, m := range v.Members {
		out += fmt.Sprintf("\n    member %s", m.MemberID)
		if m.InstanceID != nil {
			out += " instance=" + *m.InstanceID
		}
		out += fmt.Sprintf(" session=%s subscription=%s assignment=%s", ms(m.SessionTimeoutMillis),
			showSubscription(m.Subscription), showBytes(m.Assignment))
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// showSubscription prints consumer protocol metadata as its topics.
func showSubscription(b []byte) string {
	var m kmsg.ConsumerMemberMetadata
	if err := m.ReadFrom(b); err != nil {
		return showBytes(b)
	}
	out := "(" + strings.Join(m.Topics, ", ") + ")"
	if len(m.UserData) > 0 {
		out += fmt.Sprintf("+%d bytes", len(m.UserData))
	}
	return out
}

// cmdFailLog makes every append fail with a Kafka error, or a plain
// storage error; "fail-log off" heals it:
//
//	fail-log [err=KAFKA_ERROR_NAME|off]
func (s *script) cmdFailLog(t *testing.T, td *datadriven.TestData) {
	name := "storage"
	td.MaybeScanArgs(t, "err", &name)
	switch name {
	case "off":
		s.log.Fail = nil
	case "storage":
		s.log.Fail = errors.New("input/output error")
	default:
		for code := int16(-1); code < 200; code++ {
			if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok && e.Message == name {
				s.log.Fail = e
				return
			}
		}
		td.Fatalf(t, "unknown Kafka error %q", name)
	}
}

// cmdUnload stops the coordinator (Kafka's onGroupUnloaded): parked
// requests are answered NOT_COORDINATOR.
func (s *script) cmdUnload(t *testing.T, td *datadriven.TestData) {
	s.c.Stop()
}

// cmdCrash drops the coordinator without a word: parked requests die
// with their connections; only what reached the log survives.
func (s *script) cmdCrash(t *testing.T, td *datadriven.TestData) {
	s.printf("crashed; parked requests lost: %d", s.lostParked())
	s.cfg.MetadataBudget = NewMetadataBudget(s.cfg.MetadataBudget.Limit()) // the process is gone
	s.c = New(s.c.partition, s.cfg, s.log)
}

// cmdBeginLoad starts replaying the whole log into a new coordinator,
// which answers COORDINATOR_LOAD_IN_PROGRESS until finish-load.
func (s *script) cmdBeginLoad(t *testing.T, td *datadriven.TestData) {
	s.c.Stop()
	s.c = New(s.c.partition, s.cfg, s.log)
	s.c.BeginLoad()
	next, err := s.c.Load(s.log.Bytes())
	if err != nil {
		td.Fatalf(t, "load: %v", err)
	}
	s.printf("loading; read up to offset %d", next)
}

// cmdFinishLoad finishes a load and shows what it read.
func (s *script) cmdFinishLoad(t *testing.T, td *datadriven.TestData) {
	rep := s.c.FinishLoad(s.now)
	s.printf("loaded: %d records (%d skipped), %d groups, %d offsets", rep.Records, rep.Skipped, rep.Groups, rep.Offsets)
}

// cmdLoad is begin-load then finish-load: a restart from the log.
func (s *script) cmdLoad(t *testing.T, td *datadriven.TestData) {
	s.cmdBeginLoad(t, td)
	s.cmdFinishLoad(t, td)
}
