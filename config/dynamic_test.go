package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Kafka: KIP-226's precedence. A node's own dynamic setting beats the
// cluster default, which beats the static file, which beats the
// default; synonyms derive across levels as at start-up (a dynamic
// log.retention.minutes beats a static log.retention.hours).
func TestWithDynamicPrecedence(t *testing.T) {
	static, err := Parse(map[string]string{"log.retention.hours": "1", "log.segment.bytes": "2000000", "num.partitions": "3"})
	if err != nil {
		t.Fatal(err)
	}
	eff, err := static.WithDynamic(
		map[string]string{"log.retention.minutes": "5", "log.segment.bytes": "3000000", "num.partitions": "9"},
		map[string]string{"log.segment.bytes": "4000000"})
	if err != nil {
		t.Fatal(err)
	}
	if eff.LogRetentionMs != 5*60*1000 || eff.LogSegmentBytes != 4000000 {
		t.Errorf("retention %d, segment bytes %d", eff.LogRetentionMs, eff.LogSegmentBytes)
	}
	if eff.NumPartitions != 3 {
		t.Errorf("num.partitions %d: a stored setting that is not dynamic was applied", eff.NumPartitions)
	}
	if static.LogSegmentBytes != 2000000 {
		t.Error("WithDynamic changed its receiver")
	}
	if got := eff.TopicDefaults(); fmt.Sprint(got.SegmentConfig().SegmentBytes) != "4000000" {
		t.Errorf("topic default segment.bytes %d", got.SegmentConfig().SegmentBytes)
	}
	var got []string
	for _, s := range eff.Synonyms("log.retention.minutes", true) {
		got = append(got, fmt.Sprintf("%s=%s/%d", s.Name, *s.Value, s.Source))
	}
	// Kafka's ConfigHelper: levels outer, synonyms inner, from the first
	// entry for the name itself.
	if want := "log.retention.minutes=5/3 log.retention.hours=1/4 log.retention.hours=168/5"; strings.Join(got, " ") != want {
		t.Errorf("synonyms %v, want %s", got, want)
	}
	if eff.IsNull("log.retention.ms") || !eff.IsNull("broker.rack") || eff.IsNull("num.partitions") {
		t.Error("IsNull: want log.retention.ms derived, broker.rack null, num.partitions set")
	}
	if s := eff.Source("log.segment.bytes"); s != SourceDynamicBroker {
		t.Errorf("source %d", s)
	}
	if s := eff.Source("log.retention.ms"); s != SourceDefault {
		t.Errorf("log.retention.ms (derived, never set) source %d, want DEFAULT_CONFIG as Kafka reports it", s)
	}
	if _, err := static.WithDynamic(map[string]string{"log.cleaner.min.compaction.lag.ms": "10", "log.cleaner.max.compaction.lag.ms": "5"}, nil); err == nil {
		t.Error("a dynamic setting that contradicts another was accepted")
	}
}

// Kafka: DynamicBrokerConfig.validateConfigs, its checks in its order
// and its words.
func TestCheckDynamic(t *testing.T) {
	cases := []struct {
		props   map[string]string
		perNode bool
		want    string
	}{
		{map[string]string{"log.retention.ms": "1000", "message.max.bytes": "2000"}, false, ""},
		{map[string]string{"num.partitions": "1", "log.dirs": "/x"}, true, "Cannot update these configs dynamically: Set(log.dirs, num.partitions)"},
		{map[string]string{"a": "1", "b": "1", "c": "1", "d": "1", "e": "1"}, true, "Cannot update these configs dynamically: HashSet(a, b, c, d, e)"},
		{map[string]string{"ssl.keystore.location": "/k"}, true, "These security configs can be dynamically updated only per-listener using the listener prefix: Set(ssl.keystore.location)"},
		{map[string]string{"listener.name.external.ssl.keystore.location": "/k"}, false, "Cannot update these configs at default cluster level, broker id must be specified: Set(listener.name.external.ssl.keystore.location)"},
		{map[string]string{"advertised.listeners": "PLAINTEXT://h:1"}, false, "at default cluster level"},
		{map[string]string{"log.retention.bytes": "lots"}, true, "Invalid value lots for configuration log.retention.bytes"},
		{map[string]string{"background.threads": "4"}, false, "Cannot update these configs dynamically: Set(background.threads) (Varve applies them only at start-up)"},
		{map[string]string{"num.network.threads": "4", "num.io.threads": "16"}, false, ""},
		// KIP-73: both rates, per node and at the cluster default, a long >= 0.
		{map[string]string{"leader.replication.throttled.rate": "10000000", "follower.replication.throttled.rate": "0"}, false, ""},
		{map[string]string{"follower.replication.throttled.rate": "1048576"}, true, ""},
		{map[string]string{"leader.replication.throttled.rate": "-1"}, true, "Invalid value -1 for configuration leader.replication.throttled.rate"},
	}
	for _, c := range cases {
		err := CheckDynamic(c.props, c.perNode)
		var de *DynamicError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.props, err)
		case c.want != "" && (!errors.As(err, &de) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: %v, want %q", c.props, err, c.want)
		}
	}
}

// Every property the dynamic table names is one Varve knows, and every
// one it applies exists.
func TestDynamicTableNamesKnownProperties(t *testing.T) {
	for n := range dynamicDefs {
		if brokerIndex().byName[n] == nil {
			t.Errorf("dynamic table names %s, which is not a broker property", n)
		}
	}
	for _, n := range dynamicListenerProps {
		if brokerIndex().byName[n] == nil {
			t.Errorf("listener table names %s, which is not a broker property", n)
		}
	}
}

// Kafka: DynamicThreadPool.validateReconfiguration: at least 1, at
// least half the current value (integer division), at most twice it;
// an unchanged count is not checked.
func TestCheckThreadCounts(t *testing.T) {
	at := func(io, network int) *Broker {
		b, err := Parse(map[string]string{"num.io.threads": fmt.Sprint(io), "num.network.threads": fmt.Sprint(network)})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []struct {
		cur, next *Broker
		want      string
	}{
		{at(8, 3), at(16, 6), ""},
		{at(8, 3), at(4, 1), ""}, // 3/2 is 1
		{at(5, 3), at(2, 3), ""}, // 5/2 is 2
		{at(8, 3), at(17, 3), "Dynamic thread count update validation failed for num.io.threads=17, value should not be greater than double the current value 8"},
		{at(8, 3), at(3, 3), "Dynamic thread count update validation failed for num.io.threads=3, value should be at least half the current value 8"},
		{at(8, 3), at(8, 7), "Dynamic thread count update validation failed for num.network.threads=7, value should not be greater than double the current value 3"},
		{at(8, 3), &Broker{NumIoThreads: 0, NumNetworkThreads: 3}, "Dynamic thread count update validation failed for num.io.threads=0, value should be at least 1"},
	}
	for _, c := range cases {
		err := CheckThreadCounts(c.cur, c.next)
		var de *DynamicError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%d/%d -> %d/%d: %v", c.cur.NumIoThreads, c.cur.NumNetworkThreads, c.next.NumIoThreads, c.next.NumNetworkThreads, err)
		case c.want != "" && (!errors.As(err, &de) || err.Error() != c.want):
			t.Errorf("%d -> %d: %v, want %q", c.cur.NumIoThreads, c.next.NumIoThreads, err, c.want)
		}
	}
}
