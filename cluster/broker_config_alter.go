package cluster

import (
	"maps"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/config"
	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
)

// alterBrokerConfigs changes broker resource name's dynamic settings
// (name: a node id, or "" for the cluster default), as Kafka 4 does it:
// the node that receives the request checks the change
// (ConfigAdminManager.preprocess: DynamicBrokerConfig.validate, and for
// its own resource or the default, the configuration that would result),
// then the controller writes it as ConfigRecords, and every node applies
// it when its image shows it. Refusals are INVALID_REQUEST with Kafka's
// message (KAFKA-13609). A DELETE of a setting that is not set changes
// nothing and succeeds. On a single node the records go to its metadata
// file.
func (b *Broker) alterBrokerConfigs(name string, ops []controller.ConfigChange, validateOnly bool) error {
	if err := checkBrokerResource(name); err != nil {
		return err
	}
	img := b.meta.image()
	current := img.BrokerConfigs(name)
	next, err := editBrokerConfigs(current, ops, b.effectiveConfig())
	if err != nil {
		return err
	}
	if err := b.checkBrokerConfigs(name, next, img); err != nil {
		return err
	}
	changes := brokerConfigDiff(current, next)
	if validateOnly || len(changes) == 0 {
		return nil
	}
	if b.ctrl != nil {
		return b.forwardBrokerConfigs(name, changes)
	}
	_, err = b.meta.change(func(cur *metadata.Image) ([]metadata.Record, error) {
		return metadata.BrokerConfigRecords(name, cur.BrokerConfigs(name), next), nil
	})
	if err != nil {
		return err
	}
	b.applyDynamicConfig()
	b.log.Info("dynamic broker config altered", "resource", name, "settings", next)
	return nil
}

// checkBrokerResource is Kafka's validateBrokerName.
func checkBrokerResource(name string) error {
	if name == "" {
		return nil
	}
	if id, err := strconv.ParseInt(name, 10, 32); err != nil || id < 0 {
		return &kafkaError{kerr.InvalidRequest, "Unable to parse broker name " + name}
	}
	return nil
}

// editBrokerConfigs applies ops to a copy of current. APPEND and
// SUBTRACT edit the list the node has in effect.
func editBrokerConfigs(current map[string]string, ops []controller.ConfigChange, eff *config.Broker) (map[string]string, error) {
	next := maps.Clone(current)
	if next == nil {
		next = map[string]string{}
	}
	seen := map[string]bool{}
	for _, op := range ops {
		if seen[op.Name] {
			return nil, &kafkaError{kerr.InvalidRequest, "Error due to duplicate config keys"}
		}
		seen[op.Name] = true
		kop := kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: op.Name, Op: kmsg.IncrementalAlterConfigOp(op.Op), Value: op.Value}
		v, err := applyConfigOp(brokerValues{eff, current}, kop)
		if err != nil {
			return nil, err
		}
		if v == nil {
			delete(next, op.Name)
		} else {
			next[op.Name] = *v
		}
	}
	return next, nil
}

// brokerValues gives APPEND and SUBTRACT the value in effect.
type brokerValues struct {
	eff     *config.Broker
	current map[string]string
}

func (v brokerValues) Get(name string) (string, bool, bool) {
	if s, ok := v.current[name]; ok {
		return s, false, true
	}
	s, ok := v.eff.Get(name)
	return s, true, ok
}

// checkBrokerConfigs is DynamicBrokerConfig.validate: the settings next
// holds must be dynamic (at this level), parse, and, when they apply to
// this node, leave it a valid configuration.
func (b *Broker) checkBrokerConfigs(name string, next map[string]string, img *metadata.Image) error {
	if err := config.CheckDynamic(next, name != ""); err != nil {
		return &kafkaError{kerr.InvalidRequest, err.Error()}
	}
	own := strconv.Itoa(int(b.nodeID))
	def, mine := img.BrokerConfigs(""), img.BrokerConfigs(own)
	switch name {
	case "":
		def = next
	case own:
		mine = next
	default:
		return nil // another node checks its own configuration when it applies
	}
	cfg, err := b.cfg.WithDynamic(def, mine)
	if err != nil {
		return &kafkaError{kerr.InvalidRequest, err.Error()}
	}
	if err := config.CheckThreadCounts(b.effectiveConfig(), cfg); err != nil {
		return &kafkaError{kerr.InvalidRequest, err.Error()}
	}
	return nil
}

// brokerConfigDiff is what turns current into next: a value to set, or
// nil to delete.
func brokerConfigDiff(current, next map[string]string) map[string]*string {
	out := map[string]*string{}
	for k := range current {
		if _, ok := next[k]; !ok {
			out[k] = nil
		}
	}
	for k, v := range next {
		if cur, ok := current[k]; !ok || cur != v {
			out[k] = &v
		}
	}
	return out
}

// forwardBrokerConfigs sends the change to the controller and waits
// until this node's image shows it.
func (b *Broker) forwardBrokerConfigs(name string, changes map[string]*string) error {
	ctx, cancel := b.controllerContext()
	defer cancel()
	if err := b.sendConfigChanges(ctx, kmsg.ConfigResourceTypeBroker, name, changes); err != nil {
		return err
	}
	_, err := b.awaitImage(ctx, func(img *metadata.Image) bool {
		cur := img.BrokerConfigs(name)
		for k, v := range changes {
			got, set := cur[k]
			if (v == nil && set) || (v != nil && (!set || got != *v)) {
				return false
			}
		}
		return true
	})
	if err == nil {
		b.applyDynamicConfig()
	}
	return err
}

// kafkaError is an error code with the message Kafka sends with it, in
// place of the code's description.
type kafkaError struct {
	code *kerr.Error
	msg  string
}

func (e *kafkaError) Error() string { return e.msg }
func (e *kafkaError) Unwrap() error { return e.code }
