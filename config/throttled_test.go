package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// Kafka: ThrottledReplicaListValidator. "*" alone, or partition:broker
// pairs (each optional, so an empty item passes); anything else is
// refused with Kafka's words.
func TestThrottledReplicasValidation(t *testing.T) {
	for _, name := range []string{"leader.replication.throttled.replicas", "follower.replication.throttled.replicas"} {
		for _, ok := range []string{"", "*", " * ", "0:1", "0:1,1:2", "0:1, 1:2 ,2:3", "0:1,,1:2"} {
			if _, err := Default().ParseTopic(map[string]string{name: ok}); err != nil {
				t.Errorf("%s=%q refused: %v", name, ok, err)
			}
		}
		for _, bad := range []string{"0", "a:1", "0:b", "0:1:2", "*,0:1", "*,*", "-1:2", "0 :1x", "1:99999999999"} {
			_, err := Default().ParseTopic(map[string]string{name: bad})
			want := name + " must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."
			var pe *PropertyError
			if !errors.As(err, &pe) || pe.Reason != want {
				t.Errorf("%s=%q: %v, want %q", name, bad, err, want)
			}
		}
	}
}

// Kafka: TopicConfigHandler.parseThrottledPartitions. A broker takes
// the partitions listed with its own id, or every one for "*".
func TestThrottledReplicasParse(t *testing.T) {
	cases := []struct {
		value  string
		broker int32
		all    bool
		parts  []int32
	}{
		{"", 1, false, nil},
		{"*", 7, true, nil},
		{"0:1,1:2,2:1", 1, false, []int32{0, 2}},
		{"0:1,1:2,2:1", 2, false, []int32{1}},
		{"0:1,1:2,2:1", 3, false, nil},
		{" 3:101 , 4:101", 101, false, []int32{3, 4}},
	}
	for _, c := range cases {
		tc, err := Default().ParseTopic(map[string]string{"follower.replication.throttled.replicas": c.value})
		if err != nil {
			t.Fatal(err)
		}
		all, parts := tc.ThrottledReplicas("follower.replication.throttled.replicas", c.broker)
		if all != c.all || !slices.Equal(parts, c.parts) {
			t.Errorf("%q on broker %d: all=%v %v, want all=%v %v", c.value, c.broker, all, parts, c.all, c.parts)
		}
		if all, parts := tc.ThrottledReplicas("leader.replication.throttled.replicas", c.broker); all || parts != nil {
			t.Errorf("%q: the leader list (unset) reads all=%v %v", c.value, all, parts)
		}
	}
	// The zero Topic is Kafka's defaults: nothing throttled.
	if all, parts := (Topic{}).ThrottledReplicas("leader.replication.throttled.replicas", 1); all || parts != nil {
		t.Errorf("zero Topic: all=%v %v", all, parts)
	}
	if v, _, _ := Default().TopicDefaults().Get("leader.replication.throttled.replicas"); !strings.EqualFold(v, "") {
		t.Errorf("default leader.replication.throttled.replicas %q, want empty", v)
	}
}
