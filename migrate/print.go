package migrate

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/metadata"
)

// Print writes the plan for a person: what was read, what the node
// will serve, what is left behind, and the refusals.
func (p *Plan) Print(w io.Writer) {
	fmt.Fprintf(w, "Kafka log dir      %s\n", p.LogDir)
	fmt.Fprintf(w, "metadata log       %s (snapshot %s, %d segment(s))\n", p.MetadataDir, orNone(p.Snapshot), len(p.Segments))
	if p.TornBytes > 0 {
		fmt.Fprintf(w, "                   %d bytes of a torn tail not replayed, as Kafka truncates them\n", p.TornBytes)
	}
	fmt.Fprintf(w, "cluster.id         %s\nnode.id            %d\n", p.ClusterID, p.NodeID)
	fmt.Fprintf(w, "producer ids       from %d (Kafka's blocks end at %d, partition snapshots need %d)\n",
		p.Image.ProducerIDs().NextProducerID, p.KafkaNextProducerID, p.SnapshotProducerIDFloor)
	fmt.Fprintf(w, "topics             %d, %d partition directories\n", p.Image.NumTopics(), p.Partitions)
	for t := range p.Image.Topics() {
		fmt.Fprintf(w, "  %s  id %s  partitions %d\n", t.Name, logdir.TopicID(t.ID), len(t.Partitions))
		for _, k := range slices.Sorted(maps.Keys(t.Configs)) {
			fmt.Fprintf(w, "      %s=%s\n", k, t.Configs[k])
		}
	}
	p.printBrokerConfigs(w)
	p.printFeatures(w)
	p.printLeftBehind(w)
	if len(p.Refusals) == 0 {
		return
	}
	fmt.Fprintf(w, "REFUSED: nothing will be written, because:\n")
	for _, r := range p.Refusals {
		fmt.Fprintf(w, "  - %s\n", r)
	}
}

func (p *Plan) printFeatures(w io.Writer) {
	fmt.Fprintf(w, "features\n")
	for _, f := range p.Features {
		switch {
		case !f.Known:
			fmt.Fprintf(w, "  %s %d: not a feature Varve knows; dropped\n", f.Name, f.Kafka)
		case f.Name == metadata.MetadataVersionFeature:
			fmt.Fprintf(w, "  %s %s -> %s\n", f.Name, metadata.MetadataVersionName(f.Kafka), metadata.MetadataVersionName(f.Varve))
		default:
			fmt.Fprintf(w, "  %s %d -> %d\n", f.Name, f.Kafka, f.Varve)
		}
	}
}

// printBrokerConfigs prints the dynamic broker configs carried over.
func (p *Plan) printBrokerConfigs(w io.Writer) {
	for _, name := range p.Image.BrokerConfigResources() {
		who := "broker " + name
		if name == "" {
			who = "cluster default"
		}
		c := p.Image.BrokerConfigs(name)
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(c)) {
			kv = append(kv, k+"="+c[k])
		}
		fmt.Fprintf(w, "broker configs     %s: %s\n", who, strings.Join(kv, " "))
	}
}

func (p *Plan) printLeftBehind(w io.Writer) {
	for _, name := range slices.Sorted(maps.Keys(p.BrokerConfigs)) {
		who := "broker " + name
		if name == "" {
			who = "cluster default"
		}
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(p.BrokerConfigs[name])) {
			kv = append(kv, k+"="+p.BrokerConfigs[name][k])
		}
		if len(kv) > 0 {
			fmt.Fprintf(w, "dynamic broker configs (%s) not carried over (Varve sets them only at start-up); put them in server.properties: %s\n", who, strings.Join(kv, " "))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(p.Ignored)) {
		fmt.Fprintf(w, "ignored            %d %s (Kafka's controllers and registrations: nothing clients see)\n", p.Ignored[name], name)
	}
	for _, d := range p.Removed {
		fmt.Fprintf(w, "deleted partition  %s (a topic Kafka deleted): the node removes it at start, as Kafka would\n", d)
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
