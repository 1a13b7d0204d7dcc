package migrate

import (
	"maps"
	"slices"
	"strconv"

	"github.com/varve/varve/config"
	"github.com/varve/varve/metadata"
)

// carryBrokerConfigs moves into the image the dynamic broker configs of
// Kafka's metadata log that a Varve node applies live: the cluster
// default's (Kafka's format writes min.insync.replicas there) and this
// node's own, whose id the node keeps. Kafka's order of precedence
// holds on the node as it did in Kafka (KIP-226: the node's own setting,
// then the cluster default, then server.properties). What Varve refuses
// to change at run time (config.CheckDynamic), and another node's
// settings, stay in BrokerConfigs: left behind, printed, for
// server.properties.
func (p *Plan) carryBrokerConfigs() error {
	self := strconv.Itoa(int(p.NodeID))
	var recs []metadata.Record
	for _, name := range slices.Sorted(maps.Keys(p.BrokerConfigs)) {
		if name != "" && name != self {
			continue
		}
		props := p.BrokerConfigs[name]
		for _, k := range slices.Sorted(maps.Keys(props)) {
			v := props[k]
			if config.CheckDynamic(map[string]string{k: v}, name != "") != nil {
				continue
			}
			recs = append(recs, metadata.ConfigRecord{ResourceType: metadata.ConfigResourceBroker, ResourceName: name, Name: k, Value: &v})
			delete(props, k)
		}
		if len(props) == 0 {
			delete(p.BrokerConfigs, name)
		}
	}
	if len(recs) == 0 {
		return nil
	}
	next, err := metadata.Apply(p.Image, recs...)
	if err != nil {
		return err
	}
	p.Image = next
	return nil
}
