package controller

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/varve/varve/metadata"
)

// TestScripts runs the scenarios under testdata/. Every command prints
// the records the controller produced, its answer, and the cluster's
// state after the records. Time is the script's: t=N on any command
// sets the clock (ms) before it runs.
//
//	config [unclean] [no-rebalance] [settings]
//	                                      cluster settings, before anything else; settings
//	                                      knows three topic settings (scriptSettings)
//	register id= [rack=] [incarnation=] [previous-epoch=]
//	heartbeat id= [epoch=] [offset=N|behind] [shutdown] [fence]
//	                                      offset defaults to the log's last record (caught up)
//	tick
//	restart                               a new controller over the same image (a failover)
//	create-topic name= partitions= rf= [unclean]
//	create-topic name= assign=1/2/3,2/3/1 [partitions=] [rf=]
//	                                      manual assignments (partition 0's replicas, 1's, ...);
//	                                      partitions and rf default to -1; p0=N renumbers the first
//	create-partitions name= count= [assign=1/2,2/3]
//	delete-topics [names=a,b] [ids=1,2]  by name, or by the script's topic id number
//	alter-configs [type=topic|broker] name= ops=op:name[:value],... [validate-only]
//	                                      op is set, delete, append or subtract; several
//	                                      resources: name=a,b with the same ops
//	alter-partition broker= topic= p= isr= [broker-epoch=] [leader-epoch=] [partition-epoch=] [recovered]
//	                                      epochs default to the current ones
//	elect type=preferred|unclean [topic= p=]
//	reassign topic= p= (replicas= | cancel)
//	list-reassignments
//	alloc-pids broker= [epoch=]
//	bootstrap                             the bootstrap features of a first active controller
//	update-features set=name:level[:upgrade|safe|unsafe|bogus],... [validate-only]
//	state
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		if strings.Contains(path, "rapid") {
			t.Skip("rapid's record of a failed property run, not a script")
		}
		h := newHarness(DefaultConfig())
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			a := args(d)
			if v, ok := a["t"]; ok {
				h.now = num(v)
			}
			out, err := h.run(d.Cmd, a)
			if err != nil {
				d.Fatalf(t, "%s: %v", d.Cmd, err)
			}
			return out
		})
	})
}

type harness struct {
	c    *Controller
	now  int64
	next byte // the last topic id handed out
}

func newHarness(cfg Config) *harness {
	h := &harness{}
	cfg.NewTopicID = func() metadata.TopicID {
		h.next++
		var id metadata.TopicID
		id[15] = h.next
		return id
	}
	h.c = New(cfg, metadata.New("test"), 0, 0)
	return h
}

func (h *harness) run(cmd string, a map[string]string) (string, error) {
	var recs []metadata.Record
	var answer string
	var err error
	switch cmd {
	case "config":
		h.c.cfg.UncleanLeaderElection = has(a, "unclean")
		h.c.cfg.AutoLeaderRebalance = !has(a, "no-rebalance")
		if has(a, "settings") {
			h.c.cfg.TopicSettings = scriptSettings
		}
		return "ok\n", nil
	case "state":
		return h.state(), nil
	case "restart":
		h.c = New(h.c.cfg, h.c.Image(), h.c.EndOffset(), h.now)
		return "a new controller over the same image\n", nil
	case "list-reassignments":
		for _, r := range h.c.ListPartitionReassignments() {
			answer += fmt.Sprintf("%s-%d replicas=%v adding=%v removing=%v\n", r.Topic, r.Partition, r.Replicas, r.AddingReplicas, r.RemovingReplicas)
		}
		if answer == "" {
			answer = "none\n"
		}
		return answer, nil
	default:
		recs, answer, err = h.op(cmd, a)
	}
	if err != nil {
		return "", err
	}
	return h.show(recs) + answer + h.state(), nil
}

func (h *harness) op(cmd string, a map[string]string) ([]metadata.Record, string, error) {
	c := h.c
	switch cmd {
	case "register":
		var inc [16]byte
		inc[15] = byte(num(a["incarnation"]))
		prev := int64(-1)
		if has(a, "previous-epoch") {
			prev = num(a["previous-epoch"])
		}
		r, err := c.Register(h.now, RegisterRequest{BrokerID: int32(num(a["id"])), Rack: a["rack"], IncarnationID: inc, PreviousBrokerEpoch: prev,
			ProducerIDFloor: num(a["pid-floor"])})
		return r.Records, fmt.Sprintf("answer: err=%v epoch=%d\n", errName(r.Err), r.BrokerEpoch), err
	case "heartbeat":
		return h.heartbeat(a)
	case "tick":
		recs, err := c.Tick(h.now)
		return recs, "", err
	case "create-topic":
		ct := CreatableTopic{Name: a["name"], NumPartitions: int32(num(a["partitions"])), ReplicationFactor: int16(num(a["rf"]))}
		if has(a, "assign") {
			ct.NumPartitions, ct.ReplicationFactor = -1, -1
			if has(a, "partitions") {
				ct.NumPartitions = int32(num(a["partitions"]))
			}
			if has(a, "rf") {
				ct.ReplicationFactor = int16(num(a["rf"]))
			}
			for i, r := range assignments(a["assign"]) {
				ct.Assignments = append(ct.Assignments, ReplicaAssignment{Partition: int32(i) + int32(num(a["p0"])), Replicas: r})
			}
		}
		if has(a, "unclean") {
			ct.Configs = map[string]string{"unclean.leader.election.enable": "true"}
		}
		recs, res, err := c.CreateTopics([]CreatableTopic{ct})
		if err != nil {
			return nil, "", err
		}
		return recs, answerWithMessage(res[0].Err), nil
	case "delete-topics":
		return h.deleteTopics(a)
	case "alter-configs":
		return h.alterConfigs(a)
	case "create-partitions":
		var as [][]int32
		if has(a, "assign") {
			as = assignments(a["assign"])
		}
		r, err := c.CreatePartitions(a["name"], int32(num(a["count"])), as)
		return r.Records, answerWithMessage(r.Err), err
	case "alter-partition":
		return h.alterPartition(a)
	case "elect":
		return h.elect(a)
	case "reassign":
		r := Reassignment{Topic: a["topic"], Partition: int32(num(a["p"]))}
		if !has(a, "cancel") {
			r.Replicas = ids(a["replicas"])
		}
		resp, err := c.AlterPartitionReassignments([]Reassignment{r})
		return resp.Records, fmt.Sprintf("answer: err=%v\n", errName(resp.Results[TopicPartition{r.Topic, r.Partition}])), err
	case "alloc-pids":
		id := int32(num(a["broker"]))
		resp, err := c.AllocateProducerIds(id, h.epochOr(id, a["epoch"]))
		return resp.Records, fmt.Sprintf("answer: err=%v start=%d len=%d\n", errName(resp.Err), resp.Start, resp.Len), err
	case "bootstrap":
		recs, err := c.Bootstrap()
		return recs, "", err
	case "update-features":
		return h.updateFeatures(a)
	}
	return nil, "", fmt.Errorf("unknown command")
}

func (h *harness) updateFeatures(a map[string]string) ([]metadata.Record, string, error) {
	var ups []FeatureUpdate
	for _, f := range strings.Split(a["set"], ",") {
		parts := strings.Split(f, ":")
		u := FeatureUpdate{Name: parts[0], Level: int16(num(parts[1])), Type: Upgrade}
		if len(parts) == 3 {
			u.Type = map[string]UpgradeType{"upgrade": Upgrade, "safe": SafeDowngrade, "unsafe": UnsafeDowngrade}[parts[2]]
		}
		ups = append(ups, u)
	}
	recs, refused, err := h.c.UpdateFeatures(ups, has(a, "validate-only"))
	return recs, answerWithMessage(refused), err
}

// answerWithMessage prints an answer's error by name, and its message
// when it has one of its own.
func answerWithMessage(e error) string {
	var code *kerr.Error
	if !errors.As(e, &code) {
		return "answer: err=none\n"
	}
	if e == error(code) {
		return fmt.Sprintf("answer: err=%v\n", errName(code))
	}
	return fmt.Sprintf("answer: err=%v\n  %s\n", errName(code), e)
}

// assignments reads 1/2/3,2/3/1: partition 0 on 1, 2, 3; partition 1 on
// 2, 3, 1; "-" is an empty list.
func assignments(s string) [][]int32 {
	var out [][]int32
	for _, p := range strings.Split(s, ",") {
		out = append(out, ids(strings.ReplaceAll(strings.Trim(p, "-"), "/", ",")))
	}
	return out
}

func (h *harness) deleteTopics(a map[string]string) ([]metadata.Record, string, error) {
	var refs []TopicRef
	for _, name := range strings.Split(a["names"], ",") {
		if name != "" {
			refs = append(refs, TopicRef{Name: name})
		}
	}
	for _, id := range ids(a["ids"]) {
		var tid metadata.TopicID
		tid[15] = byte(id)
		refs = append(refs, TopicRef{ID: tid})
	}
	resp, err := h.c.DeleteTopics(refs)
	var b strings.Builder
	for _, r := range resp.Results {
		fmt.Fprintf(&b, "answer: %s id=%d err=%v\n", r.Name, r.ID[15], errName(r.Err))
	}
	return resp.Records, b.String(), err
}

func (h *harness) alterConfigs(a map[string]string) ([]metadata.Record, string, error) {
	typ := metadata.ConfigResourceTopic
	if a["type"] == "broker" {
		typ = metadata.ConfigResourceBroker
	}
	var changes []ConfigChange
	for _, f := range strings.Split(a["ops"], ",") {
		parts := strings.SplitN(f, ":", 3)
		ch := ConfigChange{Name: parts[1], Op: map[string]ConfigOp{"set": ConfigSet, "delete": ConfigDelete,
			"append": ConfigAppend, "subtract": ConfigSubtract}[parts[0]]}
		if parts[0] == "bogus" {
			ch.Op = 9
		}
		if len(parts) == 3 {
			v := strings.ReplaceAll(parts[2], ";", ",")
			ch.Value = &v
		}
		changes = append(changes, ch)
	}
	var res []ConfigResource
	for _, name := range strings.Split(a["name"], ",") {
		res = append(res, ConfigResource{Type: typ, Name: name, Changes: changes})
	}
	resp, err := h.c.IncrementalAlterConfigs(res, has(a, "validate-only"))
	var b strings.Builder
	for _, r := range resp.Results {
		fmt.Fprintf(&b, "answer: %s err=%v\n", r.Name, errName(r.Err))
	}
	if t, ok := h.c.Image().Topic(a["name"]); ok {
		for _, k := range slices.Sorted(maps.Keys(t.Configs)) {
			fmt.Fprintf(&b, "  %s=%s\n", k, t.Configs[k])
		}
	}
	return resp.Records, b.String(), err
}

// scriptSettings knows three topic settings and their defaults, as
// package config's Topic would: retention.ms (an integer),
// cleanup.policy (delete or compact, a list), segment.ms.
func scriptSettings(overrides map[string]string) (TopicSettings, error) {
	s := fakeSettings{"retention.ms": "604800000", "cleanup.policy": "delete", "segment.ms": "604800000"}
	for k, v := range overrides {
		if _, ok := s[k]; !ok {
			return nil, fmt.Errorf("unknown setting %s", k)
		}
		s[k] = v
	}
	if _, err := strconv.ParseInt(s["retention.ms"], 10, 64); err != nil {
		return nil, fmt.Errorf("retention.ms: %v", err)
	}
	for _, p := range strings.Split(s["cleanup.policy"], ",") {
		if p != "delete" && p != "compact" {
			return nil, fmt.Errorf("cleanup.policy: %q", p)
		}
	}
	return s, nil
}

type fakeSettings map[string]string

func (f fakeSettings) Get(name string) (string, bool, bool) {
	v, ok := f[name]
	return v, false, ok
}

func (h *harness) heartbeat(a map[string]string) ([]metadata.Record, string, error) {
	id := int32(num(a["id"]))
	req := HeartbeatRequest{BrokerID: id, BrokerEpoch: h.epochOr(id, a["epoch"]), MetadataOffset: h.c.EndOffset() - 1,
		WantShutDown: has(a, "shutdown"), WantFence: has(a, "fence")}
	if v, ok := a["offset"]; ok {
		req.MetadataOffset = num(v)
	}
	if has(a, "behind") {
		req.MetadataOffset = req.BrokerEpoch - 1
	}
	r, err := h.c.Heartbeat(h.now, req)
	return r.Records, fmt.Sprintf("answer: err=%v caught-up=%v fenced=%v shutdown=%v\n",
		errName(r.Err), r.IsCaughtUp, r.IsFenced, r.ShouldShutDown), err
}

func (h *harness) alterPartition(a map[string]string) ([]metadata.Record, string, error) {
	b := int32(num(a["broker"]))
	it := AlterPartitionItem{Topic: a["topic"], Partition: int32(num(a["p"])), NewISR: ids(a["isr"])}
	if p, ok := h.c.Image().Partition(it.Topic, it.Partition); ok {
		it.LeaderEpoch, it.PartitionEpoch, it.LeaderRecovery = p.LeaderEpoch, p.PartitionEpoch, p.LeaderRecovery
	}
	if v, ok := a["leader-epoch"]; ok {
		it.LeaderEpoch = int32(num(v))
	}
	if v, ok := a["partition-epoch"]; ok {
		it.PartitionEpoch = int32(num(v))
	}
	if has(a, "recovered") {
		it.LeaderRecovery = metadata.Recovered
	}
	resp, err := h.c.AlterPartition(AlterPartitionRequest{BrokerID: b, BrokerEpoch: h.epochOr(b, a["broker-epoch"]), Partitions: []AlterPartitionItem{it}})
	if err != nil || resp.Err != nil {
		return nil, fmt.Sprintf("answer: err=%v\n", errName(resp.Err)), err
	}
	r := resp.Partitions[0]
	if r.Err != nil && r.Err != kerr.NewLeaderElected {
		return nil, fmt.Sprintf("answer: err=%v\n", errName(r.Err)), nil
	}
	return resp.Records, fmt.Sprintf("answer: err=%v leader=%d leader-epoch=%d partition-epoch=%d isr=%v\n",
		errName(r.Err), r.Leader, r.LeaderEpoch, r.PartitionEpoch, r.ISR), nil
}

func (h *harness) elect(a map[string]string) ([]metadata.Record, string, error) {
	typ := ElectPreferred
	if a["type"] == "unclean" {
		typ = ElectUnclean
	}
	var parts []TopicPartition
	if has(a, "topic") {
		parts = []TopicPartition{{a["topic"], int32(num(a["p"]))}}
	}
	resp, err := h.c.ElectLeaders(typ, parts)
	var lines []string
	for tp, e := range resp.Results {
		lines = append(lines, fmt.Sprintf("answer: %s-%d err=%v\n", tp.Topic, tp.Partition, errName(e)))
	}
	sort.Strings(lines)
	return resp.Records, strings.Join(lines, ""), err
}

// epochOr is the epoch written in the script, else the broker's own.
func (h *harness) epochOr(id int32, v string) int64 {
	if v != "" {
		return num(v)
	}
	if b, ok := h.c.Image().Broker(id); ok {
		return b.Epoch
	}
	return 0
}

func (h *harness) show(recs []metadata.Record) string {
	if len(recs) == 0 {
		return "no records\n"
	}
	var b strings.Builder
	for _, r := range recs {
		b.WriteString("  " + h.showRecord(r) + "\n")
	}
	return b.String()
}

func (h *harness) showRecord(r metadata.Record) string {
	switch r := r.(type) {
	case metadata.RegisterBrokerRecord:
		return fmt.Sprintf("RegisterBroker id=%d epoch=%d rack=%q fenced=%v", r.BrokerID, r.BrokerEpoch, r.Rack, r.Fenced)
	case metadata.BrokerRegistrationChangeRecord:
		s := fmt.Sprintf("BrokerRegistrationChange id=%d epoch=%d", r.BrokerID, r.BrokerEpoch)
		switch r.Fenced {
		case metadata.FenceBroker:
			s += " fence"
		case metadata.UnfenceBroker:
			s += " unfence"
		}
		if r.InControlledShutdown {
			s += " in-controlled-shutdown"
		}
		return s
	case metadata.TopicRecord:
		return fmt.Sprintf("Topic %s id=%d", r.Name, r.TopicID[15])
	case metadata.ConfigRecord:
		if r.Value == nil {
			return fmt.Sprintf("Config %s %s deleted", r.ResourceName, r.Name)
		}
		return fmt.Sprintf("Config %s %s=%s", r.ResourceName, r.Name, *r.Value)
	case metadata.PartitionRecord:
		return fmt.Sprintf("Partition %s-%d replicas=%v isr=%v leader=%d", h.topicName(r.TopicID), r.PartitionID, r.Replicas, r.ISR, r.Leader)
	case metadata.PartitionChangeRecord:
		return h.showChange(r)
	case metadata.RemoveTopicRecord:
		return fmt.Sprintf("RemoveTopic id=%d", r.TopicID[15])
	case metadata.FeatureLevelRecord:
		return fmt.Sprintf("FeatureLevel %s=%d", r.Name, r.FeatureLevel)
	case metadata.ProducerIdsRecord:
		return fmt.Sprintf("ProducerIds broker=%d epoch=%d next=%d", r.BrokerID, r.BrokerEpoch, r.NextProducerID)
	}
	return fmt.Sprintf("%T", r)
}

func (h *harness) showChange(r metadata.PartitionChangeRecord) string {
	s := fmt.Sprintf("PartitionChange %s-%d", h.topicName(r.TopicID), r.PartitionID)
	if r.Leader != metadata.NoLeaderChange {
		s += fmt.Sprintf(" leader=%d", r.Leader)
	}
	for _, f := range []struct {
		name string
		v    []int32
	}{{"isr", r.ISR}, {"replicas", r.Replicas}, {"adding", r.AddingReplicas}, {"removing", r.RemovingReplicas}} {
		if f.v != nil {
			s += fmt.Sprintf(" %s=%v", f.name, f.v)
		}
	}
	if r.LeaderRecovery != nil {
		s += fmt.Sprintf(" recovery=%s", recoveryName(*r.LeaderRecovery))
	}
	return s
}

func (h *harness) topicName(id metadata.TopicID) string {
	if t, ok := h.c.Image().TopicByID(id); ok {
		return t.Name
	}
	return fmt.Sprintf("%x", id)
}

func (h *harness) state() string { return describeImage(h.c.Image()) }

func describeImage(img *metadata.Image) string {
	var b strings.Builder
	b.WriteString("state:\n")
	for _, f := range img.Features() {
		fmt.Fprintf(&b, "  feature %s=%d\n", f, img.FeatureLevel(f))
	}
	for _, br := range img.Brokers() {
		fmt.Fprintf(&b, "  broker %d epoch=%d rack=%q", br.ID, br.Epoch, br.Rack)
		if br.Fenced {
			b.WriteString(" fenced")
		}
		if br.InControlledShutdown {
			b.WriteString(" in-controlled-shutdown")
		}
		b.WriteString("\n")
	}
	for t := range img.Topics() {
		for i, p := range t.Partitions {
			fmt.Fprintf(&b, "  %s-%d leader=%d leader-epoch=%d partition-epoch=%d replicas=%v isr=%v",
				t.Name, i, p.Leader, p.LeaderEpoch, p.PartitionEpoch, p.Replicas, p.ISR)
			if p.Reassigning() {
				fmt.Fprintf(&b, " adding=%v removing=%v", p.AddingReplicas, p.RemovingReplicas)
			}
			if p.LeaderRecovery == metadata.Recovering {
				b.WriteString(" recovering")
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func recoveryName(s metadata.LeaderRecoveryState) string {
	if s == metadata.Recovering {
		return "RECOVERING"
	}
	return "RECOVERED"
}

// errName prints a Kafka error by its protocol name.
func errName(err error) string {
	if err == nil {
		return "none"
	}
	s := err.Error()
	if name, _, ok := strings.Cut(s, ":"); ok {
		return name
	}
	return s
}

func args(d *datadriven.TestData) map[string]string {
	out := map[string]string{}
	for _, a := range d.CmdArgs {
		out[a.Key] = strings.Join(a.Vals, ",")
	}
	return out
}

func has(a map[string]string, k string) bool { _, ok := a[k]; return ok }

func num(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

func ids(s string) []int32 {
	out := []int32{}
	for _, f := range strings.Split(s, ",") {
		if f != "" {
			out = append(out, int32(num(f)))
		}
	}
	return out
}
