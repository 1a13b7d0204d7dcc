package controller

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/varve/varve/metadata"
)

// IncrementalAlterConfigs (api key 44, KIP-339) as the controller
// decides it, for topic resources: SET, DELETE (back to the default),
// and APPEND and SUBTRACT of list settings, written as ConfigRecords
// (value nil for a delete). Kafka: ConfigurationControlManager.
// incrementalAlterConfigs. Broker resources (dynamic broker
// configuration, KIP-226) are kept the same way, per node or as the
// cluster default; see alterBrokerConfigs.

// ConfigOp is an IncrementalAlterConfigs operation, Kafka's codes.
type ConfigOp int8

// Kafka's operations (AlterConfigOp.OpType).
const (
	ConfigSet      ConfigOp = 0
	ConfigDelete   ConfigOp = 1
	ConfigAppend   ConfigOp = 2
	ConfigSubtract ConfigOp = 3
)

// ConfigChange is one operation on one setting.
type ConfigChange struct {
	Name  string
	Op    ConfigOp
	Value *string
}

// ConfigResource is a resource whose settings change.
type ConfigResource struct {
	Type    metadata.ConfigResourceType
	Name    string
	Changes []ConfigChange
}

// AlterConfigsResult is one resource's outcome, in request order.
type AlterConfigsResult struct {
	Type metadata.ConfigResourceType
	Name string
	Err  error
}

// AlterConfigsResponse answers IncrementalAlterConfigs.
type AlterConfigsResponse struct {
	Records []metadata.Record
	Results []AlterConfigsResult
}

// TopicSettings resolves a topic's settings: its overrides over the
// cluster's defaults. Package config's Topic is one.
type TopicSettings interface {
	// Get returns a setting's value; ok is false for a name that is not
	// a topic-level setting.
	Get(name string) (value string, isDefault bool, ok bool)
}

// listConfigs are Kafka's topic-level settings of type LIST, the only
// ones APPEND and SUBTRACT apply to (TopicConfig's ConfigDef).
var listConfigs = map[string]bool{
	"cleanup.policy":                          true,
	"leader.replication.throttled.replicas":   true,
	"follower.replication.throttled.replicas": true,
}

// IncrementalAlterConfigs changes the settings of topics. Errors, per
// resource as Kafka's: INVALID_REQUEST for a resource named twice, a
// setting named twice in one resource, a SET without a value, an
// unknown operation, or a resource that is not a topic;
// UNKNOWN_TOPIC_OR_PARTITION for an unknown topic; INVALID_CONFIG for
// an unknown setting, APPEND or SUBTRACT of a setting that is not a
// list, or values Config.TopicSettings refuses. validateOnly checks and
// writes nothing.
func (c *Controller) IncrementalAlterConfigs(resources []ConfigResource, validateOnly bool) (AlterConfigsResponse, error) {
	var resp AlterConfigsResponse
	seen := map[string]int{}
	for _, r := range resources {
		seen[fmt.Sprint(r.Type, "/", r.Name)]++
	}
	for _, r := range resources {
		res := AlterConfigsResult{Type: r.Type, Name: r.Name}
		var recs []metadata.Record
		if seen[fmt.Sprint(r.Type, "/", r.Name)] > 1 {
			res.Err = fmt.Errorf("%w: resource %s named twice", kerr.InvalidRequest, r.Name)
		} else {
			recs, res.Err = c.alterTopicConfigs(r)
		}
		resp.Results = append(resp.Results, res)
		if res.Err != nil || validateOnly || len(recs) == 0 {
			continue
		}
		if err := c.propose(recs); err != nil {
			return AlterConfigsResponse{}, err
		}
		resp.Records = append(resp.Records, recs...)
	}
	return resp, nil
}

// alterBrokerConfigs returns the records of a change to broker
// resource r.Name (a node id, or "" for the cluster-wide default), as
// Kafka's ConfigurationControlManager writes them: one ConfigRecord per
// setting that changes, a null value for a deletion. Deleting a setting
// that is not set writes nothing and succeeds (kafka-reassign-partitions
// --verify deletes the throttle rates of every broker so). A name that
// is not a node id is INVALID_REQUEST (ControllerConfigurationValidator.
// validateBrokerName); Config.BrokerSettings, when set, checks the
// settings being set (the node that received the request checked them
// against its own configuration already, as Kafka's ConfigAdminManager
// does).
func (c *Controller) alterBrokerConfigs(r ConfigResource) ([]metadata.Record, error) {
	if err := checkBrokerName(r.Name); err != nil {
		return nil, err
	}
	current := c.img.BrokerConfigs(r.Name)
	next := maps.Clone(current)
	if next == nil {
		next = map[string]string{}
	}
	set := map[string]string{}
	for _, ch := range r.Changes {
		if err := editBrokerConfig(current, next, ch); err != nil {
			return nil, err
		}
		if v, ok := next[ch.Name]; ok {
			set[ch.Name] = v
		}
	}
	if c.cfg.BrokerSettings != nil {
		if err := c.cfg.BrokerSettings(set, r.Name != ""); err != nil {
			return nil, fmt.Errorf("%w: %v", kerr.InvalidRequest, err)
		}
	}
	return metadata.BrokerConfigRecords(r.Name, current, next), nil
}

func checkBrokerName(name string) error {
	if name == "" {
		return nil
	}
	if id, err := strconv.ParseInt(name, 10, 32); err != nil || id < 0 {
		return fmt.Errorf("%w: unable to parse broker name %q", kerr.InvalidRequest, name)
	}
	return nil
}

// editBrokerConfig applies one operation to next.
func editBrokerConfig(current, next map[string]string, ch ConfigChange) error {
	switch ch.Op {
	case ConfigSet:
		if ch.Value == nil {
			return fmt.Errorf("%w: SET %s without a value", kerr.InvalidRequest, ch.Name)
		}
		next[ch.Name] = *ch.Value
	case ConfigDelete:
		delete(next, ch.Name)
	case ConfigAppend, ConfigSubtract:
		if ch.Value == nil {
			return fmt.Errorf("%w: %s without a value", kerr.InvalidRequest, ch.Name)
		}
		next[ch.Name] = strings.Join(editList(splitList(current[ch.Name]), splitList(*ch.Value), ch.Op == ConfigAppend), ",")
	default:
		return fmt.Errorf("%w: unknown operation %d", kerr.InvalidRequest, ch.Op)
	}
	return nil
}

// alterTopicConfigs returns the records of one resource's changes.
func (c *Controller) alterTopicConfigs(r ConfigResource) ([]metadata.Record, error) {
	switch r.Type {
	case metadata.ConfigResourceTopic:
	case metadata.ConfigResourceBroker:
		return c.alterBrokerConfigs(r)
	default:
		return nil, fmt.Errorf("%w: only topic and broker configurations can be altered", kerr.InvalidRequest)
	}
	t, ok := c.img.Topic(r.Name)
	if !ok {
		return nil, kerr.UnknownTopicOrPartition
	}
	next := maps.Clone(t.Configs)
	if next == nil {
		next = map[string]string{}
	}
	names := map[string]bool{}
	for _, ch := range r.Changes {
		if names[ch.Name] {
			return nil, fmt.Errorf("%w: %s named twice", kerr.InvalidRequest, ch.Name)
		}
		names[ch.Name] = true
		if err := c.applyConfigChange(t.Configs, next, ch); err != nil {
			return nil, err
		}
	}
	if _, err := c.topicSettings(next); err != nil {
		return nil, err
	}
	return metadata.TopicConfigRecords(r.Name, t.Configs, next), nil
}

// applyConfigChange applies ch to next, the overrides being built from
// current.
func (c *Controller) applyConfigChange(current, next map[string]string, ch ConfigChange) error {
	settings, err := c.topicSettings(current)
	if err != nil {
		return err
	}
	value, _, known := "", false, true
	if settings != nil {
		value, _, known = settings.Get(ch.Name)
	} else {
		value = current[ch.Name]
	}
	if !known {
		return fmt.Errorf("%w: unknown topic config name %s", kerr.InvalidConfig, ch.Name)
	}
	switch ch.Op {
	case ConfigSet:
		if ch.Value == nil {
			return fmt.Errorf("%w: SET %s without a value", kerr.InvalidRequest, ch.Name)
		}
		next[ch.Name] = *ch.Value
	case ConfigDelete:
		delete(next, ch.Name)
	case ConfigAppend, ConfigSubtract:
		if !listConfigs[ch.Name] || ch.Value == nil {
			return fmt.Errorf("%w: %s is not a list setting", kerr.InvalidConfig, ch.Name)
		}
		next[ch.Name] = strings.Join(editList(splitList(value), splitList(*ch.Value), ch.Op == ConfigAppend), ",")
	default:
		return fmt.Errorf("%w: unknown operation %d", kerr.InvalidRequest, ch.Op)
	}
	return nil
}

// topicSettings resolves overrides through Config.TopicSettings (nil
// when it is unset); its error is INVALID_CONFIG.
func (c *Controller) topicSettings(overrides map[string]string) (TopicSettings, error) {
	if c.cfg.TopicSettings == nil {
		return nil, nil
	}
	s, err := c.cfg.TopicSettings(overrides)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", kerr.InvalidConfig, err)
	}
	return s, nil
}

// editList appends the items not yet in list, or removes them.
func editList(list, items []string, add bool) []string {
	for _, it := range items {
		i := slices.Index(list, it)
		switch {
		case add && i < 0:
			list = append(list, it)
		case !add && i >= 0:
			list = slices.Delete(list, i, i+1)
		}
	}
	return list
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
