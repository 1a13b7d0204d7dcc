package config

import (
	"errors"
	"testing"
)

// Kafka: KIP-392's replica.selector.class names a class; the one Varve
// has is Kafka's RackAwareReplicaSelector, and null (the default) keeps
// consumers on leaders. Any other class is refused at start, as Kafka
// refuses a class it cannot load.
func TestReplicaSelectorClass(t *testing.T) {
	b, err := Parse(map[string]string{"replica.selector.class": RackAwareReplicaSelector, "broker.rack": "r1"})
	if err != nil || b.ReplicaSelectorClass != RackAwareReplicaSelector || b.BrokerRack != "r1" {
		t.Fatalf("rack-aware selector: %v, %q", err, b.ReplicaSelectorClass)
	}
	if b, err := Parse(nil); err != nil || b.ReplicaSelectorClass != "" {
		t.Fatalf("default: %v, %q", err, b.ReplicaSelectorClass)
	}
	if _, err := Parse(map[string]string{"replica.selector.class": "com.example.Nearest"}); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("unknown selector: %v, want ErrInvalidValue", err)
	}
}

// Kafka: KIP-227's cache bounds, whose defaults the defaults test checks.
func TestFetchSessionCacheProperties(t *testing.T) {
	b, err := Parse(map[string]string{"max.incremental.fetch.session.cache.slots": "0", "min.incremental.fetch.session.eviction.ms": "5"})
	if err != nil || b.MaxIncrementalFetchSessionCacheSlots != 0 || b.MinIncrementalFetchSessionEvictionMs != 5 {
		t.Fatalf("%v %+v", err, b)
	}
	if _, err := Parse(map[string]string{"max.incremental.fetch.session.cache.slots": "-1"}); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("negative slots: %v", err)
	}
}
