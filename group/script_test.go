package group

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/internal/scripttest"
)

// Scripted interaction tests: each file under testdata/script drives one
// coordinator step by step (the commands are listed in scriptCommands)
// and shows what it answers, what state its groups are in and what it
// writes to __consumer_offsets. A behaviour change shows up as a diff of
// the script; `go test ./group -run TestScripts -rewrite` rewrites the
// expected output, to be reviewed like documentation.
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata/script", func(t *testing.T, path string) {
		s := &script{}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			return s.run(t, td)
		})
	})
}

// scriptStart is the scripts' clock origin; times print as offsets from it.
var scriptStart = time.UnixMilli(1_700_000_000_000)

// script is one script's coordinator, clock, log and the replies its
// requests got.
type script struct {
	cfg    Config
	c      *Coordinator
	log    *MemoryLog
	now    time.Time
	uuid   int
	shown  int      // records of the log already shown by "log"
	out    []string // lines the current command produced
	parked map[string]int
}

// scriptCommands is the scripts' language.
var scriptCommands scripttest.Commands[*script]

func init() {
	scriptCommands = scripttest.Commands[*script]{
		"new":            (*script).cmdNew,
		"join":           (*script).cmdJoin,
		"sync":           (*script).cmdSync,
		"heartbeat":      (*script).cmdHeartbeat,
		"leave":          (*script).cmdLeave,
		"commit":         (*script).cmdCommit,
		"fetch":          (*script).cmdFetch,
		"delete-groups":  (*script).cmdDeleteGroups,
		"tick":           (*script).cmdTick,
		"deadline":       (*script).cmdDeadline,
		"describe":       (*script).cmdDescribe,
		"list":           (*script).cmdList,
		"bytes":          (*script).cmdBytes,
		"log":            (*script).cmdLog,
		"fail-log":       (*script).cmdFailLog,
		"unload":         (*script).cmdUnload,
		"crash":          (*script).cmdCrash,
		"begin-load":     (*script).cmdBeginLoad,
		"finish-load":    (*script).cmdFinishLoad,
		"load":           (*script).cmdLoad,
		"cg-topics":      (*script).cmdCGTopics,
		"cg-config":      (*script).cmdCGConfig,
		"cg-fetch-check": (*script).cmdCGFetchCheck,
		"cg-heartbeat":   (*script).cmdCGHeartbeat,
		"cg-describe":    (*script).cmdCGDescribe,
	}
}

func (s *script) run(t *testing.T, td *datadriven.TestData) string {
	return scripttest.Dispatch(t, td, s, scriptCommands, s.c != nil, &s.out)
}

func (s *script) printf(format string, args ...any) {
	s.out = append(s.out, fmt.Sprintf(format, args...))
}

// cmdNew starts a coordinator over an empty log:
//
//	new [initial-delay=0s] [min-session=100ms] [max-session=1m] [max-size=N]
//	    [retention=168h] [retention-check=10m] [metadata-max=4096]
//	    [topics=(t,...): the topics that exist; default all]
//	    [group-bytes=N] [broker-bytes=N]: the member metadata bounds
func (s *script) cmdNew(t *testing.T, td *datadriven.TestData) {
	cfg := Config{
		MinSessionTimeout: 100 * time.Millisecond,
		MaxSessionTimeout: time.Minute,
		Logger:            slog.New(slog.NewTextHandler(io.Discard, nil)),
		NewUUID:           func() string { s.uuid++; return strconv.Itoa(s.uuid) },
	}
	cfg.InitialRebalanceDelay = durArg(t, td, "initial-delay", 0)
	cfg.MinSessionTimeout = durArg(t, td, "min-session", cfg.MinSessionTimeout)
	cfg.MaxSessionTimeout = durArg(t, td, "max-session", cfg.MaxSessionTimeout)
	cfg.OffsetsRetention = durArg(t, td, "retention", 0)
	cfg.RetentionCheckInterval = durArg(t, td, "retention-check", 0)
	td.MaybeScanArgs(t, "max-size", &cfg.MaxSize)
	td.MaybeScanArgs(t, "metadata-max", &cfg.OffsetMetadataMaxBytes)
	td.MaybeScanArgs(t, "group-bytes", &cfg.MaxGroupMetadataBytes)
	var brokerBytes int64
	td.MaybeScanArgs(t, "broker-bytes", &brokerBytes)
	cfg.MetadataBudget = NewMetadataBudget(brokerBytes)
	if td.HasArg("topics") {
		var topics []string
		td.ScanArgs(t, "topics", &topics)
		cfg.KnownPartition = func(topic string, _ int32) bool { return slices.Contains(topics, topic) }
	}
	*s = script{cfg: cfg, log: &MemoryLog{}, now: scriptStart, parked: map[string]int{}}
	s.c = New(7, cfg, s.log)
	s.c.BeginLoad()
	s.c.FinishLoad(s.now)
}

// cmdJoin sends a JoinGroup; the reply shows now or when it comes:
//
//	join group=g client=c1 [member=ID] [instance=I] [version=9] [session=1s]
//	     [rebalance=2s] [type=consumer] [protocols=(range,...)] [topics=(t,...)]
//	     [userdata=BYTES]
func (s *script) cmdJoin(t *testing.T, td *datadriven.TestData) {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = 9
	td.MaybeScanArgs(t, "version", &req.Version)
	td.ScanArgs(t, "group", &req.Group)
	td.MaybeScanArgs(t, "member", &req.MemberID)
	client := "client"
	td.MaybeScanArgs(t, "client", &client)
	if td.HasArg("instance") {
		var inst string
		td.ScanArgs(t, "instance", &inst)
		req.InstanceID = &inst
	}
	req.SessionTimeoutMillis = int32(durArg(t, td, "session", time.Second).Milliseconds())
	req.RebalanceTimeoutMillis = int32(durArg(t, td, "rebalance", 2*time.Second).Milliseconds())
	req.ProtocolType = "consumer"
	td.MaybeScanArgs(t, "type", &req.ProtocolType)
	protocols, topics := []string{"range"}, []string{"t"}
	td.MaybeScanArgs(t, "protocols", &protocols)
	td.MaybeScanArgs(t, "topics", &topics)
	userdata := 0
	td.MaybeScanArgs(t, "userdata", &userdata)
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Topics, meta.UserData = topics, make([]byte, userdata)
	for _, p := range protocols {
		jp := kmsg.NewJoinGroupRequestProtocol()
		jp.Name, jp.Metadata = p, meta.AppendTo(nil)
		req.Protocols = append(req.Protocols, jp)
	}
	label := client + " JoinGroup"
	done := s.expect(label)
	s.c.Join(s.now, req, Client{ID: client, Host: "/127.0.0.1"}, func(r *kmsg.JoinGroupResponse) {
		done()
		s.printf("%s: %s", label, formatJoin(r))
	})
	s.waiting(label)
}

// cmdSync sends a SyncGroup; the leader's carries the assignment:
//
//	sync group=g member=ID gen=N [instance=I] [assign=(ID=text|ID=*BYTES,...)]
func (s *script) cmdSync(t *testing.T, td *datadriven.TestData) {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version = 5
	td.ScanArgs(t, "group", &req.Group)
	td.ScanArgs(t, "member", &req.MemberID)
	td.ScanArgs(t, "gen", &req.Generation)
	if td.HasArg("instance") {
		var inst string
		td.ScanArgs(t, "instance", &inst)
		req.InstanceID = &inst
	}
	var assign []string
	td.MaybeScanArgs(t, "assign", &assign)
	for _, a := range assign {
		id, text, _ := strings.Cut(a, "=")
		ga := kmsg.NewSyncGroupRequestGroupAssignment()
		ga.MemberID, ga.MemberAssignment = id, []byte(text)
		if n, ok := strings.CutPrefix(text, "*"); ok { // *N: N bytes
			ga.MemberAssignment = make([]byte, mustInt(t, td, n))
		}
		req.GroupAssignment = append(req.GroupAssignment, ga)
	}
	label := req.MemberID + " SyncGroup"
	done := s.expect(label)
	s.c.Sync(s.now, req, func(r *kmsg.SyncGroupResponse) {
		done()
		if r.ErrorCode != 0 {
			s.printf("%s: %s", label, codeName(r.ErrorCode))
			return
		}
		s.printf("%s: assignment=%s", label, showBytes(r.MemberAssignment))
	})
	s.waiting(label)
}

// expect counts a request as parked until its reply comes, and fails
// the script if a reply comes twice.
func (s *script) expect(label string) func() {
	s.parked[label]++
	answered := false
	return func() {
		if answered {
			s.printf("BUG: %s answered twice", label)
		}
		answered = true
		s.parked[label]--
	}
}

// waiting prints that a request is parked, if it is.
func (s *script) waiting(label string) {
	if s.parked[label] > 0 {
		s.printf("%s: waiting", label)
	}
}

// cmdHeartbeat sends a Heartbeat:
//
//	heartbeat group=g member=ID gen=N [instance=I]
func (s *script) cmdHeartbeat(t *testing.T, td *datadriven.TestData) {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version = 4
	td.ScanArgs(t, "group", &req.Group)
	td.ScanArgs(t, "member", &req.MemberID)
	td.ScanArgs(t, "gen", &req.Generation)
	if td.HasArg("instance") {
		var inst string
		td.ScanArgs(t, "instance", &inst)
		req.InstanceID = &inst
	}
	s.printf("%s Heartbeat: %s", req.MemberID, codeName(s.c.Heartbeat(s.now, req).ErrorCode))
}

// cmdLeave sends a LeaveGroup v5 for members and/or instance ids:
//
//	leave group=g [members=(ID,...)] [instances=(I,...)]
func (s *script) cmdLeave(t *testing.T, td *datadriven.TestData) {
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version = 5
	td.ScanArgs(t, "group", &req.Group)
	var members, instances []string
	td.MaybeScanArgs(t, "members", &members)
	td.MaybeScanArgs(t, "instances", &instances)
	for _, id := range members {
		lm := kmsg.NewLeaveGroupRequestMember()
		lm.MemberID = id
		req.Members = append(req.Members, lm)
	}
	for _, inst := range instances {
		lm := kmsg.NewLeaveGroupRequestMember()
		lm.InstanceID = &inst
		req.Members = append(req.Members, lm)
	}
	resp := s.c.Leave(s.now, req)
	if resp.ErrorCode != 0 {
		s.printf("LeaveGroup: %s", codeName(resp.ErrorCode))
		return
	}
	for _, m := range resp.Members {
		who := m.MemberID
		if m.InstanceID != nil {
			who = "instance " + *m.InstanceID
		}
		s.printf("%s LeaveGroup: %s", who, codeName(m.ErrorCode))
	}
}

// cmdCommit sends an OffsetCommit (v9; v2-v4 take a retention time):
//
//	commit group=g [member=ID] [gen=-1] offsets=(topic/partition=offset,...)
//	       [metadata=text] [version=9] [retention=1h]
func (s *script) cmdCommit(t *testing.T, td *datadriven.TestData) {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Generation = 9, -1
	td.MaybeScanArgs(t, "version", &req.Version)
	td.ScanArgs(t, "group", &req.Group)
	td.MaybeScanArgs(t, "member", &req.MemberID)
	td.MaybeScanArgs(t, "gen", &req.Generation)
	if td.HasArg("retention") {
		req.RetentionTimeMillis = durArg(t, td, "retention", 0).Milliseconds()
	}
	var md *string
	if td.HasArg("metadata") {
		md = new(string)
		td.ScanArgs(t, "metadata", md)
	}
	var offsets []string
	td.ScanArgs(t, "offsets", &offsets)
	for _, o := range offsets {
		tp, off, _ := strings.Cut(o, "=")
		topic, p := parseTP(t, td, tp)
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Metadata = p, md
		rp.Offset = mustInt(t, td, off)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	resp := s.c.CommitOffsets(s.now, req)
	var parts []string
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			parts = append(parts, fmt.Sprintf("%s/%d=%s", rt.Topic, rp.Partition, codeName(rp.ErrorCode)))
		}
	}
	s.printf("OffsetCommit: %s", strings.Join(parts, " "))
}

// cmdFetch sends an OffsetFetch for some partitions, or all of them:
//
//	fetch group=g [partitions=(topic/partition,...)]
func (s *script) cmdFetch(t *testing.T, td *datadriven.TestData) {
	var group string
	td.ScanArgs(t, "group", &group)
	var topics []kmsg.OffsetFetchRequestGroupTopic
	if td.HasArg("partitions") {
		var tps []string
		td.ScanArgs(t, "partitions", &tps)
		topics = []kmsg.OffsetFetchRequestGroupTopic{}
		for _, tp := range tps {
			topic, p := parseTP(t, td, tp)
			ft := kmsg.NewOffsetFetchRequestGroupTopic()
			ft.Topic, ft.Partitions = topic, []int32{p}
			topics = append(topics, ft)
		}
	}
	code, got := s.c.FetchOffsets(s.now, group, topics)
	if code != 0 {
		s.printf("OffsetFetch: %s", codeName(code))
		return
	}
	parts := []string{}
	for _, rt := range got {
		for _, rp := range rt.Partitions {
			p := fmt.Sprintf("%s/%d=%d", rt.Topic, rp.Partition, rp.Offset)
			if rp.LeaderEpoch >= 0 {
				p += fmt.Sprintf("@%d", rp.LeaderEpoch)
			}
			if rp.Metadata != nil && *rp.Metadata != "" {
				p += fmt.Sprintf("(%q)", *rp.Metadata)
			}
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "none")
	}
	s.printf("OffsetFetch: %s", strings.Join(parts, " "))
}

// cmdDeleteGroups sends a DeleteGroups:
//
//	delete-groups groups=(g,...)
func (s *script) cmdDeleteGroups(t *testing.T, td *datadriven.TestData) {
	var groups []string
	td.ScanArgs(t, "groups", &groups)
	for _, r := range s.c.DeleteGroups(s.now, groups) {
		s.printf("%s DeleteGroups: %s", r.Group, codeName(r.ErrorCode))
	}
}

// cmdTick moves the injected clock and fires what is due:
//
//	tick DURATION
func (s *script) cmdTick(t *testing.T, td *datadriven.TestData) {
	if len(td.CmdArgs) != 1 {
		td.Fatalf(t, "tick takes one duration")
	}
	d, err := time.ParseDuration(td.CmdArgs[0].Key)
	if err != nil {
		td.Fatalf(t, "tick: %v", err)
	}
	s.now = s.now.Add(d)
	s.printf("time %s", since(s.now))
	s.c.Tick(s.now)
}

// cmdDeadline shows when the coordinator next wants a Tick.
func (s *script) cmdDeadline(t *testing.T, td *datadriven.TestData) {
	if at, ok := s.c.NextDeadline(); ok {
		s.printf("next deadline %s", since(at))
		return
	}
	s.printf("no deadline")
}

// since prints a time as an offset from the script's start.
func since(at time.Time) string { return scripttest.Since(scriptStart, at) }

func durArg(t *testing.T, td *datadriven.TestData, key string, def time.Duration) time.Duration {
	return scripttest.DurArg(t, td, key, def)
}

func parseTP(t *testing.T, td *datadriven.TestData, s string) (string, int32) {
	topic, p, ok := strings.Cut(s, "/")
	if !ok {
		td.Fatalf(t, "%q is not topic/partition", s)
	}
	return topic, int32(mustInt(t, td, p))
}

func mustInt(t *testing.T, td *datadriven.TestData, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		td.Fatalf(t, "%q: %v", s, err)
	}
	return n
}

// codeName is a Kafka error code's name, "ok" for none.
func codeName(code int16) string { return scripttest.CodeName(code) }

// showBytes prints short printable bytes as a string, others by size.
func showBytes(b []byte) string {
	if len(b) <= 32 && strconv.CanBackquote(string(b)) {
		return strconv.Quote(string(b))
	}
	return fmt.Sprintf("<%d bytes>", len(b))
}

func formatJoin(r *kmsg.JoinGroupResponse) string {
	if r.ErrorCode != 0 {
		out := codeName(r.ErrorCode)
		if r.MemberID != "" {
			out += " member=" + r.MemberID
		}
		return out
	}
	out := fmt.Sprintf("gen=%d member=%s leader=%s", r.Generation, r.MemberID, r.LeaderID)
	if r.Protocol != nil {
		out += " protocol=" + *r.Protocol
	}
	if r.SkipAssignment {
		out += " skip-assignment"
	}
	if len(r.Members) > 0 {
		ids := make([]string, 0, len(r.Members))
		for _, m := range r.Members {
			ids = append(ids, m.MemberID)
		}
		out += " members=(" + strings.Join(ids, ", ") + ")"
	}
	return out
}

// lostParked forgets the requests still parked, as a crash loses them
// with their connections, and says how many there were.
func (s *script) lostParked() int {
	n := 0
	for _, k := range s.parked {
		n += k
	}
	s.parked = map[string]int{}
	return n
}
