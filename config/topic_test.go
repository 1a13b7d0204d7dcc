package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptr(s string) *string { return &s }

// topicValues is every property of t as Get shows it.
func topicValues(t Topic) map[string]string {
	out := map[string]string{}
	for _, n := range TopicNames() {
		v, _, _ := t.Get(n)
		out[n] = v
	}
	return out
}

// Kafka: a topic's overrides are persisted and re-read; re-reading them
// gives the same configuration (CreateTopics configs, then
// DescribeConfigs).
func TestTopicOverrideRoundTrip(t *testing.T) {
	b := Default()
	in := map[string]string{
		"cleanup.policy":                        "compact,delete",
		"retention.ms":                          "-1",
		"segment.bytes":                         " 1048576 ",
		"min.cleanable.dirty.ratio":             "0.1",
		"message.timestamp.type":                "LogAppendTime",
		"unclean.leader.election.enable":        "true",
		"local.retention.ms":                    "1000",
		"leader.replication.throttled.replicas": "0:1,1:2",
	}
	t1, err := b.ParseTopic(in)
	if err != nil {
		t.Fatal(err)
	}
	over := t1.Overrides()
	if over["segment.bytes"] != "1048576" || len(over) != len(in) {
		t.Errorf("Overrides = %v, want the %d given, trimmed", over, len(in))
	}
	t2, err := b.ParseTopic(over)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(topicValues(t1), topicValues(t2)); d != "" {
		t.Errorf("round trip changed values (-first +second)\n%s", d)
	}
	for name := range in {
		if _, isDefault, _ := t2.Get(name); isDefault {
			t.Errorf("%s reported as default after an override", name)
		}
	}
	if _, isDefault, _ := t2.Get("segment.ms"); !isDefault {
		t.Error("segment.ms reported as overridden")
	}
	over["segment.bytes"] = "1"
	if again := t1.Overrides(); again["segment.bytes"] != "1048576" {
		t.Error("Overrides returns the Topic's own map")
	}
}

// Kafka: IncrementalAlterConfigs DELETE returns a property to the broker
// default; SET replaces it; the old Topic is unchanged.
func TestTopicWith(t *testing.T) {
	b := mustParse(t, map[string]string{"log.retention.hours": "24", "log.segment.bytes": "2000000"})
	t0, err := b.ParseTopic(map[string]string{"retention.ms": "1000", "segment.bytes": "3000000"})
	if err != nil {
		t.Fatal(err)
	}
	t1, err := t0.With(map[string]*string{"retention.ms": nil, "segment.bytes": ptr("4000000"), "cleanup.policy": ptr("compact")})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{ // value, isDefault
		"retention.ms":   {"86400000", "true"},
		"segment.bytes":  {"4000000", "false"},
		"cleanup.policy": {"compact", "false"},
	}
	for name, w := range want {
		v, isDefault, _ := t1.Get(name)
		if v != w[0] || (w[1] == "true") != isDefault {
			t.Errorf("%s = %q (default %v), want %q (default %s)", name, v, isDefault, w[0], w[1])
		}
	}
	if v, _, _ := t0.Get("retention.ms"); v != "1000" {
		t.Errorf("With changed the original: retention.ms = %q", v)
	}
	if d := cmp.Diff(map[string]string{"segment.bytes": "4000000", "cleanup.policy": "compact"}, t1.Overrides()); d != "" {
		t.Errorf("Overrides (-want +got)\n%s", d)
	}
	// Deleting what is not set is allowed, as in Kafka.
	if _, err := t1.With(map[string]*string{"flush.ms": nil}); err != nil {
		t.Errorf("delete of an unset property: %v", err)
	}
	// The zero Topic starts from Kafka's defaults.
	var zero Topic
	z, err := zero.With(map[string]*string{"retention.ms": ptr("5")})
	if v, _, _ := z.Get("segment.bytes"); err != nil || v != "1073741824" {
		t.Errorf("zero Topic With: %v, segment.bytes %q", err, v)
	}
}

// Kafka: unknown or invalid topic configs fail CreateTopics and
// AlterConfigs with INVALID_CONFIG.
func TestTopicBadConfigs(t *testing.T) {
	b := Default()
	cases := []struct {
		props    map[string]string
		sentinel error
		name     string
	}{
		{map[string]string{"retention.msec": "1"}, ErrUnknownProperty, "retention.msec"},
		{map[string]string{"log.retention.ms": "1"}, ErrUnknownProperty, "log.retention.ms"},
		{map[string]string{"retention.ms": "-2"}, ErrInvalidValue, "retention.ms"},
		{map[string]string{"segment.bytes": "13"}, ErrInvalidValue, "segment.bytes"},
		{map[string]string{"segment.ms": "0"}, ErrInvalidValue, "segment.ms"},
		{map[string]string{"min.cleanable.dirty.ratio": "-0.1"}, ErrInvalidValue, "min.cleanable.dirty.ratio"},
		{map[string]string{"cleanup.policy": "compact,archive"}, ErrInvalidValue, "cleanup.policy"},
		{map[string]string{"max.compaction.lag.ms": "0"}, ErrInvalidValue, "max.compaction.lag.ms"},
		{map[string]string{"min.insync.replicas": "0"}, ErrInvalidValue, "min.insync.replicas"},
		{map[string]string{"message.timestamp.type": "Now"}, ErrInvalidValue, "message.timestamp.type"},
		{map[string]string{"local.retention.bytes": "-3"}, ErrInvalidValue, "local.retention.bytes"},
		// Kafka LogConfig.validateValues.
		{map[string]string{"min.compaction.lag.ms": "100", "max.compaction.lag.ms": "10"}, ErrInvalidValue, "min.compaction.lag.ms"},
		// Varve has no tiered storage.
		{map[string]string{"remote.storage.enable": "true"}, ErrUnsupported, "remote.storage.enable"},
	}
	for _, c := range cases {
		_, err := b.ParseTopic(c.props)
		var pe *PropertyError
		if !errors.Is(err, c.sentinel) || !errors.As(err, &pe) || pe.Name != c.name {
			t.Errorf("ParseTopic(%v) = %v, want %v naming %s", c.props, err, c.sentinel, c.name)
		}
		changes := map[string]*string{}
		for k, v := range c.props {
			changes[k] = ptr(v)
		}
		if _, err := b.TopicDefaults().With(changes); !errors.Is(err, c.sentinel) {
			t.Errorf("With(%v) = %v, want %v", c.props, err, c.sentinel)
		}
	}
	if _, err := b.TopicDefaults().With(map[string]*string{"no.such": nil}); !errors.Is(err, ErrUnknownProperty) {
		t.Errorf("delete of an unknown name: %v", err)
	}
	_, err := b.ParseTopic(map[string]string{"remote.storage.enable": "true"})
	if err == nil || !strings.Contains(err.Error(), "tiered storage") {
		t.Errorf("remote.storage.enable error %v does not say why", err)
	}
	if _, err := b.ParseTopic(map[string]string{"remote.storage.enable": "false", "message.downconversion.enable": "false"}); err != nil {
		t.Errorf("accepted-and-ignored settings refused: %v", err)
	}
}

// Kafka: a topic without an override follows the broker's log.* value.
func TestTopicDefaultsFollowBroker(t *testing.T) {
	b := mustParse(t, map[string]string{
		"log.cleanup.policy":                 "compact",
		"message.max.bytes":                  "2000000",
		"log.cleaner.min.cleanable.ratio":    "0.25",
		"min.insync.replicas":                "2",
		"log.message.timestamp.type":         "LogAppendTime",
		"log.segment.delete.delay.ms":        "5",
		"unclean.leader.election.enable":     "true",
		"log.message.timestamp.after.max.ms": "10",
	})
	td := b.TopicDefaults()
	want := map[string]string{
		"cleanup.policy": "compact", "max.message.bytes": "2000000", "min.cleanable.dirty.ratio": "0.25",
		"min.insync.replicas": "2", "message.timestamp.type": "LogAppendTime", "file.delete.delay.ms": "5",
		"unclean.leader.election.enable": "true", "message.timestamp.after.max.ms": "10",
	}
	for name, w := range want {
		if v, isDefault, _ := td.Get(name); v != w || !isDefault {
			t.Errorf("%s = %q (default %v), want %q from the broker", name, v, isDefault, w)
		}
	}
	if td.MinInsyncReplicas() != 2 || td.MaxMessageBytes() != 2000000 || !td.UncleanLeaderElectionEnable() {
		t.Error("accessors disagree with Get")
	}
	if del, compact := td.CleanupPolicy(); del || !compact {
		t.Errorf("CleanupPolicy = %v, %v, want compact only", del, compact)
	}
}
