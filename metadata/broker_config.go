package metadata

import (
	"fmt"
	"maps"
	"slices"
)

// Dynamic broker configuration: ConfigRecords of resource type BROKER,
// as Kafka's ConfigurationControlManager keeps them. The resource name
// is a broker id in decimal for one broker's settings, or "" for the
// cluster-wide default every broker takes when it has no setting of its
// own.

// BrokerConfigs returns the dynamic settings of resource name ("" for
// the cluster default, else a broker id), nil when none. The map is
// shared with the image and must not be modified.
func (img *Image) BrokerConfigs(name string) map[string]string {
	return img.brokerConfigs[name]
}

// BrokerConfigResources returns the names of the broker resources with
// dynamic settings, in order ("" first).
func (img *Image) BrokerConfigResources() []string {
	return slices.Sorted(maps.Keys(img.brokerConfigs))
}

// brokerConfig replays a ConfigRecord of a broker resource: a value
// replaces the setting, a null one removes it.
func (d *delta) brokerConfig(r ConfigRecord) error {
	if r.Name == "" {
		return fmt.Errorf("%w: broker %q config without a name", ErrInvalidRecord, r.ResourceName)
	}
	if !d.brokerConfigsOwned {
		d.next.brokerConfigs, d.brokerConfigsOwned = maps.Clone(d.base.brokerConfigs), true
		if d.next.brokerConfigs == nil {
			d.next.brokerConfigs = map[string]map[string]string{}
		}
	}
	c := maps.Clone(d.next.brokerConfigs[r.ResourceName])
	if r.Value != nil {
		if c == nil {
			c = map[string]string{}
		}
		c[r.Name] = *r.Value
	} else {
		delete(c, r.Name)
	}
	if len(c) == 0 {
		delete(d.next.brokerConfigs, r.ResourceName)
	} else {
		d.next.brokerConfigs[r.ResourceName] = c
	}
	return nil
}

// appendBrokerConfigRecords writes the image's dynamic broker settings,
// by resource then name.
func appendBrokerConfigRecords(recs []Record, img *Image) []Record {
	for _, res := range img.BrokerConfigResources() {
		c := img.brokerConfigs[res]
		for _, k := range slices.Sorted(maps.Keys(c)) {
			v := c[k]
			recs = append(recs, ConfigRecord{ResourceType: ConfigResourceBroker, ResourceName: res, Name: k, Value: &v})
		}
	}
	return recs
}

// BrokerConfigRecords returns the ConfigRecords that turn broker
// resource name's dynamic settings old into next: a null value for each
// setting removed, then each one added or changed, by name.
func BrokerConfigRecords(name string, old, next map[string]string) []Record {
	var recs []Record
	for _, k := range slices.Sorted(maps.Keys(old)) {
		if _, kept := next[k]; !kept {
			recs = append(recs, ConfigRecord{ResourceType: ConfigResourceBroker, ResourceName: name, Name: k})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(next)) {
		if v, had := old[k]; !had || v != next[k] {
			v := next[k]
			recs = append(recs, ConfigRecord{ResourceType: ConfigResourceBroker, ResourceName: name, Name: k, Value: &v})
		}
	}
	return recs
}
