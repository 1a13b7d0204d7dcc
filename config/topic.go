package config

import (
	"errors"
	"reflect"
	"strings"
	"sync"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// Topic is a topic's configuration: Kafka's topic-level properties, each
// either overridden for this topic or taken from the broker property that
// is its default (segment.bytes from log.segment.bytes, ...).
//
// A Topic is an immutable value: change it with With, which returns a new
// one, and persist Overrides. Get it from Broker.TopicDefaults or
// Broker.ParseTopic; the zero Topic behaves as Kafka's defaults with no
// override. Any number of goroutines may use a Topic.
type Topic struct {
	cleanupPolicy               segment.CleanupPolicy
	compressionType             string
	deleteRetentionMs           Millis
	fileDeleteDelayMs           Millis
	flushMessages               int64
	flushMs                     Millis
	indexIntervalBytes          int
	maxCompactionLagMs          Millis
	maxMessageBytes             int
	messageTimestampType        record.TimestampType
	messageTimestampBeforeMaxMs Millis
	messageTimestampAfterMaxMs  Millis
	minCleanableDirtyRatio      float64
	minCompactionLagMs          Millis
	minInsyncReplicas           int
	preallocate                 bool
	retentionBytes              int64
	retentionMs                 Millis
	segmentBytes                int
	segmentIndexBytes           int
	segmentJitterMs             Millis
	segmentMs                   Millis
	uncleanLeaderElectionEnable bool
	leaderThrottledReplicas     []string
	followerThrottledReplicas   []string

	other     map[string]any    // accepted properties without a field
	defaults  map[string]string // the broker's values by topic name; shared, never written
	overrides map[string]string // explicit settings; owned, copied by With
}

var topicIndex = sync.OnceValue(func() index[topicDef] {
	return newIndex(topicDefs, func(d *topicDef) string { return d.name })
})

// TopicNames lists every topic-level property Varve knows, sorted.
func TopicNames() []string { return append([]string(nil), topicIndex().names...) }

// TopicDefaults is the configuration of a topic with no overrides: every
// property from its broker default. It reflects the Broker's current
// fields, which Parse validated.
func (b *Broker) TopicDefaults() Topic {
	t, _ := buildTopic(b.topicBase(), nil)
	return t
}

// buildTopicDefaults is TopicDefaults with the errors, for Parse: a broker
// whose defaults make an invalid topic (min.compaction.lag.ms above
// max.compaction.lag.ms) must not start.
func (b *Broker) buildTopicDefaults() (Topic, error) { return buildTopic(b.topicBase(), nil) }

// ParseTopic applies a topic's overrides (from CreateTopics or from what
// was persisted) to the broker's defaults. An unknown name or a bad value
// is an error naming it; the broker answers INVALID_CONFIG.
func (b *Broker) ParseTopic(overrides map[string]string) (Topic, error) {
	if err := unknownNames(overrides, topicIndex().names, "topic"); err != nil {
		return Topic{}, err
	}
	return buildTopic(b.topicBase(), trimmed(overrides))
}

// With is IncrementalAlterConfigs: a non-nil value sets the property, nil
// deletes the override so the broker default applies again. t is not
// changed; on error the result is the zero Topic.
func (t Topic) With(changes map[string]*string) (Topic, error) {
	next := make(map[string]string, len(t.overrides)+len(changes))
	for k, v := range t.overrides {
		next[k] = v
	}
	var errs []error
	for name, v := range changes {
		if topicIndex().byName[name] == nil {
			errs = append(errs, unknownError(name, topicIndex().names, "topic"))
			continue
		}
		if v == nil {
			delete(next, name)
		} else {
			next[name] = strings.TrimSpace(*v)
		}
	}
	if len(errs) > 0 {
		return Topic{}, errors.Join(errs...)
	}
	return buildTopic(t.base(), next)
}

// Overrides returns the explicitly set properties, as given: what a
// broker persists for the topic and shows as DescribeConfigs'
// TOPIC_CONFIG entries.
func (t Topic) Overrides() map[string]string {
	out := make(map[string]string, len(t.overrides))
	for k, v := range t.overrides {
		out[k] = v
	}
	return out
}

// Get returns a property's effective value as DescribeConfigs shows it,
// whether it is the broker default (not overridden), and ok=false for an
// unknown name.
func (t Topic) Get(name string) (value string, isDefault bool, ok bool) {
	d := topicIndex().byName[name]
	if d == nil {
		return "", false, false
	}
	t = t.resolved()
	_, over := t.overrides[name]
	if d.field != nil {
		return d.typ.format(reflect.ValueOf(d.field(&t)).Elem()), !over, true
	}
	return formatValue(d.typ, t.other[name]), !over, true
}

// base is the broker defaults t was built on.
func (t Topic) base() map[string]string { return t.resolved().defaults }

// resolved is t, or Kafka's defaults for the zero Topic.
func (t Topic) resolved() Topic {
	if t.defaults == nil {
		return kafkaTopicDefaults()
	}
	return t
}

var kafkaTopicDefaults = sync.OnceValue(func() Topic { return Default().TopicDefaults() })

// topicBase renders the broker's value of each topic property's synonym.
func (b *Broker) topicBase() map[string]string {
	base := make(map[string]string, len(topicDefs))
	for i := range topicDefs {
		d := &topicDefs[i]
		if d.synonym == "" {
			base[d.name] = d.fixed
			continue
		}
		base[d.name], _ = b.Get(d.synonym)
	}
	return base
}

// buildTopic parses every topic property from overrides or defaults.
func buildTopic(defaults, overrides map[string]string) (Topic, error) {
	t := Topic{other: map[string]any{}, defaults: defaults, overrides: overrides}
	if t.overrides == nil {
		t.overrides = map[string]string{}
	}
	var errs []error
	for i := range topicDefs {
		d := &topicDefs[i]
		raw, over := t.overrides[d.name]
		if !over {
			raw = defaults[d.name]
		}
		v, err := d.value(raw)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if d.field != nil {
			setField(d.field(&t), v)
		} else {
			t.other[d.name] = v
		}
	}
	if len(errs) == 0 {
		errs = append(errs, t.validate())
	}
	if err := errors.Join(errs...); err != nil {
		return Topic{}, err
	}
	return t, nil
}

// validate is Kafka's LogConfig.validateValues.
func (t Topic) validate() error {
	if t.minCompactionLagMs > t.maxCompactionLagMs {
		return invalid("min.compaction.lag.ms", t.minCompactionLagMs.String(),
			"must not exceed max.compaction.lag.ms (%d)", t.maxCompactionLagMs)
	}
	return nil
}
