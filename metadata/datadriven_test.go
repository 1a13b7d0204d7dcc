package metadata

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestScripts replays the scripts under testdata/. Commands:
//
//	apply              one record per input line; prints the outcome
//	describe [name=S]  prints the current image (or the one saved as S)
//	lookup topic=N | id=N [partition=P]
//	save name=S        remembers the current image as S
//	shared name=S topic=N   whether S and the current image share topic N
//
// Record lines: register-broker id= host= port= [epoch=] [rack=] [fenced] [shutdown];
// broker-change id= epoch= [fenced=1|-1] [shutdown]; fence id= epoch=;
// unfence id= epoch=;
// topic name= id=; partition id= p= replicas= isr= leader= ;
// change id= p= [leader=] [isr=] [replicas=] [adding=] [removing=]
// [recovery=0|1]; remove-topic id=;
// config topic= name= [value=]; producer-ids broker= next=;
// feature name= level=.
// Topic ids are written as small numbers: id=7 is the UUID 00..07.
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		img := New("test-cluster")
		saved := map[string]*Image{}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			args := cmdArgs(d)
			switch d.Cmd {
			case "apply":
				var recs []Record
				for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
					r, err := parseRecord(line)
					if err != nil {
						d.Fatalf(t, "%s: %v", line, err)
					}
					recs = append(recs, r)
				}
				next, err := Apply(img, recs...)
				if err != nil {
					return fmt.Sprintf("error: %v\n", err)
				}
				img = next
				return fmt.Sprintf("ok, version %d\n", img.Version())
			case "describe":
				if name, ok := args["name"]; ok {
					return describe(saved[name])
				}
				return describe(img)
			case "lookup":
				return lookup(img, args)
			case "save":
				saved[args["name"]] = img
				return "ok\n"
			case "shared":
				old := saved[args["name"]]
				a, _ := old.Topic(args["topic"])
				b, _ := img.Topic(args["topic"])
				return fmt.Sprintf("%v\n", a != nil && a == b)
			}
			d.Fatalf(t, "unknown command %s", d.Cmd)
			return ""
		})
	})
}

func cmdArgs(d *datadriven.TestData) map[string]string {
	out := map[string]string{}
	for _, a := range d.CmdArgs {
		out[a.Key] = strings.Join(a.Vals, ",")
	}
	return out
}

func parseRecord(line string) (Record, error) {
	f := strings.Fields(line)
	a := map[string]string{}
	for _, kv := range f[1:] {
		k, v, _ := strings.Cut(kv, "=")
		a[k] = v
	}
	id := topicID(a["id"])
	switch f[0] {
	case "register-broker":
		n, _ := strconv.ParseInt(a["epoch"], 10, 64)
		return RegisterBrokerRecord{BrokerID: num32(a["id"]), BrokerEpoch: n, Rack: a["rack"], Fenced: has(a, "fenced"),
			InControlledShutdown: has(a, "shutdown"),
			Endpoints:            []Endpoint{{Listener: "PLAINTEXT", Host: a["host"], Port: num32(a["port"]), SecurityProtocol: "PLAINTEXT"}}}, nil
	case "broker-change":
		n, _ := strconv.ParseInt(a["epoch"], 10, 64)
		return BrokerRegistrationChangeRecord{BrokerID: num32(a["id"]), BrokerEpoch: n,
			Fenced: FenceChange(num32(a["fenced"])), InControlledShutdown: has(a, "shutdown")}, nil
	case "fence":
		n, _ := strconv.ParseInt(a["epoch"], 10, 64)
		return FenceBrokerRecord{BrokerID: num32(a["id"]), BrokerEpoch: n}, nil
	case "unfence":
		n, _ := strconv.ParseInt(a["epoch"], 10, 64)
		return UnfenceBrokerRecord{BrokerID: num32(a["id"]), BrokerEpoch: n}, nil
	case "topic":
		return TopicRecord{Name: a["name"], TopicID: id}, nil
	case "partition":
		return PartitionRecord{TopicID: id, PartitionID: num32(a["p"]), Replicas: ids(a["replicas"]), ISR: ids(a["isr"]), Leader: num32(a["leader"])}, nil
	case "change":
		r := PartitionChangeRecord{TopicID: id, PartitionID: num32(a["p"]), Leader: NoLeaderChange}
		if has(a, "leader") {
			r.Leader = num32(a["leader"])
		}
		if has(a, "isr") {
			r.ISR = ids(a["isr"])
		}
		if has(a, "replicas") {
			r.Replicas = ids(a["replicas"])
		}
		if has(a, "adding") {
			r.AddingReplicas = ids(a["adding"])
		}
		if has(a, "removing") {
			r.RemovingReplicas = ids(a["removing"])
		}
		if has(a, "recovery") {
			lrs := LeaderRecoveryState(num32(a["recovery"]))
			r.LeaderRecovery = &lrs
		}
		return r, nil
	case "remove-topic":
		return RemoveTopicRecord{TopicID: id}, nil
	case "config":
		r := ConfigRecord{ResourceType: ConfigResourceTopic, ResourceName: a["topic"], Name: a["name"]}
		if v, ok := a["value"]; ok {
			r.Value = &v
		}
		return r, nil
	case "feature":
		return FeatureLevelRecord{Name: a["name"], FeatureLevel: int16(num32(a["level"]))}, nil
	case "producer-ids":
		n, _ := strconv.ParseInt(a["next"], 10, 64)
		return ProducerIdsRecord{BrokerID: num32(a["broker"]), NextProducerID: n}, nil
	}
	return nil, fmt.Errorf("unknown record %q", f[0])
}

func has(a map[string]string, k string) bool { _, ok := a[k]; return ok }

func num32(s string) int32 {
	n, _ := strconv.ParseInt(s, 10, 32)
	return int32(n)
}

func ids(s string) []int32 {
	out := []int32{}
	for _, f := range strings.Split(s, ",") {
		if f != "" {
			out = append(out, num32(f))
		}
	}
	return out
}

func topicID(s string) TopicID {
	var id TopicID
	n, _ := strconv.Atoi(s)
	id[15] = byte(n)
	return id
}

func showID(id TopicID) string {
	if id[15] != 0 && id == topicID(strconv.Itoa(int(id[15]))) {
		return strconv.Itoa(int(id[15]))
	}
	return fmt.Sprintf("%x", id[:])
}

func describe(img *Image) string {
	var b strings.Builder
	fmt.Fprintf(&b, "cluster %s version %d\n", img.ClusterID(), img.Version())
	for _, br := range img.Brokers() {
		fmt.Fprintf(&b, "broker %d epoch=%d rack=%q fenced=%v endpoints=%v", br.ID, br.Epoch, br.Rack, br.Fenced, br.Endpoints)
		if br.InControlledShutdown {
			b.WriteString(" in-controlled-shutdown")
		}
		b.WriteString("\n")
	}
	for t := range img.Topics() {
		fmt.Fprintf(&b, "topic %s id=%s", t.Name, showID(t.ID))
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range t.Configs {
				if !yield(k) {
					return
				}
			}
		}) {
			fmt.Fprintf(&b, " %s=%s", k, t.Configs[k])
		}
		b.WriteString("\n")
		for i, p := range t.Partitions {
			fmt.Fprintf(&b, "  %d: %s\n", i, describePartition(&p))
		}
	}
	for _, f := range img.Features() {
		fmt.Fprintf(&b, "feature %s=%d\n", f, img.FeatureLevel(f))
	}
	fmt.Fprintf(&b, "producer-ids broker=%d next=%d\n", img.ProducerIDs().BrokerID, img.ProducerIDs().NextProducerID)
	return b.String()
}

func describePartition(p *Partition) string {
	s := fmt.Sprintf("leader=%d leader-epoch=%d partition-epoch=%d replicas=%v isr=%v",
		p.Leader, p.LeaderEpoch, p.PartitionEpoch, p.Replicas, p.ISR)
	if p.Reassigning() {
		s += fmt.Sprintf(" adding=%v removing=%v", p.AddingReplicas, p.RemovingReplicas)
	}
	if p.LeaderRecovery == Recovering {
		s += " recovering"
	}
	return s
}

func lookup(img *Image, a map[string]string) string {
	var t *Topic
	var ok bool
	if name, byName := a["topic"]; byName {
		t, ok = img.Topic(name)
	} else {
		t, ok = img.TopicByID(topicID(a["id"]))
	}
	if !ok {
		return "not found\n"
	}
	p, isPart := a["partition"]
	if !isPart {
		return fmt.Sprintf("topic %s id=%s partitions=%d\n", t.Name, showID(t.ID), len(t.Partitions))
	}
	part, ok := img.Partition(t.Name, num32(p))
	if !ok {
		return "partition not found\n"
	}
	return describePartition(part) + "\n"
}
