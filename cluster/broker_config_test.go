package cluster_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// setBroker sets (value non-nil) or deletes dynamic broker settings on
// the cluster default (no broker) or one node, and returns the error of
// the one resource.
func setBroker(t *testing.T, adm *kadm.Client, kv map[string]*string, brokers ...int32) (error, string) {
	t.Helper()
	var cfgs []kadm.AlterConfig
	for k, v := range kv {
		op := kadm.SetConfig
		if v == nil {
			op = kadm.DeleteConfig
		}
		cfgs = append(cfgs, kadm.AlterConfig{Op: op, Name: k, Value: v})
	}
	resps, err := adm.AlterBrokerConfigs(ctx(t), cfgs, brokers...)
	if err != nil {
		t.Fatal(err)
	}
	if len(resps) != 1 {
		t.Fatalf("%d responses, want 1", len(resps))
	}
	return resps[0].Err, resps[0].ErrMessage
}

func mustSetBroker(t *testing.T, adm *kadm.Client, kv map[string]*string, brokers ...int32) {
	t.Helper()
	if err, msg := setBroker(t, adm, kv, brokers...); err != nil {
		t.Fatalf("alter broker configs %v on %v: %v (%s)", kv, brokers, err, msg)
	}
}

func sp(s string) *string { return &s }

// brokerConfig describes one broker property of node (or, with no node,
// of the cluster default); ok is false when it is not listed.
func brokerConfig(t *testing.T, adm *kadm.Client, name string, brokers ...int32) (kadm.Config, bool) {
	t.Helper()
	rcs, err := adm.DescribeBrokerConfigs(ctx(t), brokers...)
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			t.Fatalf("describe broker %q: %v", rc.Name, rc.Err)
		}
		for _, c := range rc.Configs {
			if c.Key == name {
				return c, true
			}
		}
	}
	return kadm.Config{}, false
}

// Kafka: KIP-226. log.retention.ms lowered at the cluster default
// applies at once to a topic without its own retention.ms: its old
// segments are deleted by the next retention pass (LogConfig's synonym
// order: topic > dynamic per-broker > dynamic default > static >
// default).
func TestDynamicRetentionMsDeletesSegments(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{
		"log.segment.bytes": "1024",
	})
	cl := client(t, b.addr, kgo.DefaultProduceTopic("ret"), kgo.AllowAutoTopicCreation())
	adm := kadm.NewClient(cl)
	for i := 0; i < 40; i++ {
		if err := cl.ProduceSync(ctx(t), &kgo.Record{Value: make([]byte, 200)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	start := func() int64 {
		offs, err := adm.ListStartOffsets(ctx(t), "ret")
		if err != nil {
			t.Fatal(err)
		}
		o, _ := offs.Lookup("ret", 0)
		return o.Offset
	}
	if n := b.RunRetention(ctx(t)); n != 0 || start() != 0 {
		t.Fatalf("retention deleted %d segments under the 7-day default", n)
	}
	mustSetBroker(t, adm, map[string]*string{"log.retention.ms": sp("1")})
	time.Sleep(5 * time.Millisecond) // every record is now older than 1 ms
	if n := b.RunRetention(ctx(t)); n == 0 || start() == 0 {
		t.Fatalf("retention deleted %d segments after log.retention.ms was lowered dynamically; log start offset %d", n, start())
	}
	rc, err := adm.DescribeTopicConfigs(ctx(t), "ret")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rc[0].Configs {
		if c.Key == "retention.ms" && (c.MaybeValue() != "1" || c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig) {
			t.Errorf("topic retention.ms = %q from %v, want 1 from DYNAMIC_DEFAULT_BROKER_CONFIG", c.MaybeValue(), c.Source)
		}
	}
}

// Kafka: message.max.bytes is a dynamic default of max.message.bytes;
// a record batch above it is MESSAGE_TOO_LARGE, and deleting the
// setting restores the static value.
func TestDynamicMessageMaxBytes(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	cl := client(t, b.addr, kgo.DefaultProduceTopic("big"), kgo.AllowAutoTopicCreation(), kgo.ProducerBatchCompression(kgo.NoCompression()))
	adm := kadm.NewClient(cl)
	produce := func() error {
		return cl.ProduceSync(ctx(t), &kgo.Record{Value: make([]byte, 4000)}).FirstErr()
	}
	if err := produce(); err != nil {
		t.Fatal(err)
	}
	mustSetBroker(t, adm, map[string]*string{"message.max.bytes": sp("2000")}, 1)
	if err := produce(); !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("produce above a lowered message.max.bytes: %v, want MESSAGE_TOO_LARGE", err)
	}
	mustSetBroker(t, adm, map[string]*string{"message.max.bytes": nil}, 1)
	if err := produce(); err != nil {
		t.Fatalf("produce after the setting was deleted: %v", err)
	}
}

// Kafka: DynamicBrokerConfig.validateConfigs, answered INVALID_REQUEST
// with its message (ConfigAdminManager, KAFKA-13609): a property that is
// not dynamic, a per-broker one at the cluster default, a security
// property without a listener prefix, a value that does not parse.
// Varve also refuses the properties it reads only at start-up.
func TestDynamicBrokerConfigRefusals(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	adm := kadm.NewClient(client(t, b.addr))
	cases := []struct {
		name, value string
		brokers     []int32
		msg         string
	}{
		{"num.partitions", "3", []int32{1}, "Cannot update these configs dynamically: Set(num.partitions)"},
		{"listeners", "PLAINTEXT://:9093", nil, "Cannot update these configs at default cluster level, broker id must be specified: Set(listeners)"},
		{"ssl.keystore.location", "/k", []int32{1}, "These security configs can be dynamically updated only per-listener using the listener prefix: Set(ssl.keystore.location)"},
		{"log.retention.ms", "soon", []int32{1}, "Invalid value soon for configuration log.retention.ms"},
		{"num.replica.fetchers", "2", nil, "Cannot update these configs dynamically: Set(num.replica.fetchers)"},
		{"leader.replication.throttled.rate", "-1", []int32{1}, "Invalid value -1 for configuration leader.replication.throttled.rate"},
		{"no.such.property", "1", nil, "Cannot update these configs dynamically: Set(no.such.property)"},
	}
	for _, c := range cases {
		err, msg := setBroker(t, adm, map[string]*string{c.name: sp(c.value)}, c.brokers...)
		if !errors.Is(err, kerr.InvalidRequest) || !strings.Contains(msg, c.msg) {
			t.Errorf("set %s=%s on %v: %v %q, want INVALID_REQUEST %q", c.name, c.value, c.brokers, err, msg, c.msg)
		}
	}
	// validate_only checks and stores nothing.
	resps, err := adm.ValidateAlterBrokerConfigs(ctx(t), []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "log.retention.bytes", Value: sp("5")}}, 1)
	if err != nil || resps[0].Err != nil {
		t.Fatalf("validate only: %v %v", err, resps)
	}
	if c, _ := brokerConfig(t, adm, "log.retention.bytes", 1); c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("log.retention.bytes after validate_only: source %v, want DEFAULT_CONFIG", c.Source)
	}
}

// Kafka: ConfigHelper.createBrokerConfigEntry. A node's resource lists
// each property's effective value and source, and its synonyms in
// precedence order: this node's dynamic setting, the cluster default,
// the static file, the default. The cluster default resource "" lists
// only the dynamic defaults. read_only is false for dynamic properties.
func TestDescribeDynamicBrokerConfigs(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"log.segment.bytes": "2000000"})
	cl := client(t, b.addr)
	adm := kadm.NewClient(cl)
	mustSetBroker(t, adm, map[string]*string{"log.segment.bytes": sp("3000000"), "log.retention.bytes": sp("7000")})
	mustSetBroker(t, adm, map[string]*string{"log.segment.bytes": sp("4000000")}, 1)

	c, _ := brokerConfig(t, adm, "log.segment.bytes", 1)
	if c.MaybeValue() != "4000000" || c.Source != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Errorf("log.segment.bytes = %q from %v", c.MaybeValue(), c.Source)
	}
	var got []string
	for _, s := range c.Synonyms {
		got = append(got, s.Key+"="+*s.Value+"/"+s.Source.String())
	}
	want := "log.segment.bytes=4000000/DYNAMIC_BROKER_CONFIG log.segment.bytes=3000000/DYNAMIC_DEFAULT_BROKER_CONFIG " +
		"log.segment.bytes=2000000/STATIC_BROKER_CONFIG log.segment.bytes=1073741824/DEFAULT_CONFIG"
	if strings.Join(got, " ") != want {
		t.Errorf("synonyms:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if c, _ := brokerConfig(t, adm, "log.retention.bytes", 1); c.MaybeValue() != "7000" || c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Errorf("log.retention.bytes = %q from %v", c.MaybeValue(), c.Source)
	}
	rcs, err := adm.DescribeBrokerConfigs(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var defaults []string
	for _, c := range rcs[0].Configs {
		defaults = append(defaults, c.Key+"="+c.MaybeValue())
	}
	if strings.Join(defaults, " ") != "log.retention.bytes=7000 log.segment.bytes=3000000" {
		t.Errorf("cluster default resource lists %v", defaults)
	}
	// Topic synonyms: the broker property behind a topic setting.
	kcl := client(t, b.addr, kgo.AllowAutoTopicCreation())
	if _, err := kadm.NewClient(kcl).CreateTopic(ctx(t), 1, 1, nil, "syn"); err != nil {
		t.Fatal(err)
	}
	trc, err := adm.DescribeTopicConfigs(ctx(t), "syn")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range trc[0].Configs {
		if c.Key == "segment.bytes" {
			if len(c.Synonyms) == 0 || c.Synonyms[0].Key != "log.segment.bytes" || c.Source != kmsg.ConfigSourceDynamicBrokerConfig {
				t.Errorf("topic segment.bytes from %v, synonyms %+v", c.Source, c.Synonyms)
			}
		}
	}
	// Kafka: cluster.id is meta.properties', not a broker property; it
	// is listed only when the configuration names it.
	if _, ok := brokerConfig(t, adm, "cluster.id", 1); ok {
		t.Error("cluster.id listed though the configuration does not name it")
	}
	readOnly := describeReadOnly(t, cl)
	if readOnly["log.retention.ms"] || !readOnly["num.partitions"] {
		t.Errorf("read_only: log.retention.ms %v, num.partitions %v", readOnly["log.retention.ms"], readOnly["num.partitions"])
	}
}

func describeReadOnly(t *testing.T, cl *kgo.Client) map[string]bool {
	req := kmsg.NewPtrDescribeConfigsRequest()
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(ctx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, c := range resp.Resources[0].Configs {
		out[c.Name] = c.ReadOnly
	}
	return out
}

// Kafka: dynamic settings live in the cluster metadata and outlast a
// restart (here, the single node's metadata file).
func TestDynamicBrokerConfigSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	b := startBroker(t, dir, nil)
	adm := kadm.NewClient(client(t, b.addr))
	mustSetBroker(t, adm, map[string]*string{"log.retention.bytes": sp("12345")}, 1)
	b.stop(t)
	b = startBroker(t, dir, nil)
	adm = kadm.NewClient(client(t, b.addr))
	if c, _ := brokerConfig(t, adm, "log.retention.bytes", 1); c.MaybeValue() != "12345" || c.Source != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Errorf("after a restart log.retention.bytes = %q from %v", c.MaybeValue(), c.Source)
	}
}

// Kafka: the legacy AlterConfigs replaces a resource's dynamic
// settings as a whole (kadm's *State calls use it).
func TestLegacyAlterConfigsBroker(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	adm := kadm.NewClient(client(t, b.addr))
	mustSetBroker(t, adm, map[string]*string{"log.retention.bytes": sp("1000"), "log.segment.bytes": sp("2000000")}, 1)
	resps, err := adm.AlterBrokerConfigsState(ctx(t), []kadm.AlterConfig{{Name: "log.retention.bytes", Value: sp("3000")}}, 1)
	if err != nil || resps[0].Err != nil {
		t.Fatalf("AlterConfigs: %v %+v", err, resps)
	}
	if c, _ := brokerConfig(t, adm, "log.retention.bytes", 1); c.MaybeValue() != "3000" {
		t.Errorf("log.retention.bytes = %q, want 3000", c.MaybeValue())
	}
	if c, _ := brokerConfig(t, adm, "log.segment.bytes", 1); c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("log.segment.bytes source %v: AlterConfigs left a setting it did not name", c.Source)
	}
	resps, err = adm.AlterBrokerConfigsState(ctx(t), []kadm.AlterConfig{{Name: "num.partitions", Value: sp("3")}}, 1)
	if err != nil || !errors.Is(resps[0].Err, kerr.InvalidRequest) {
		t.Errorf("AlterConfigs num.partitions: %v %+v, want INVALID_REQUEST", err, resps)
	}
}

// Kafka: log.cleaner.threads is dynamic (LogCleaner.reconfigure restarts
// the cleaner threads). A node started without cleaner threads compacts
// nothing; raised dynamically, its cleaner starts and cleans a
// compacted topic. io.max.bytes.per.second restarts it again.
func TestDynamicCleanerThreads(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"log.cleaner.threads": "0", "log.cleaner.backoff.ms": "20"})
	cl := client(t, b.addr, kgo.DefaultProduceTopic("cmp"))
	adm := kadm.NewClient(cl)
	topicCfg := map[string]*string{"cleanup.policy": sp("compact"), "segment.bytes": sp("1024"), "min.cleanable.dirty.ratio": sp("0.01")}
	if r, err := adm.CreateTopic(ctx(t), 1, 1, topicCfg, "cmp"); err != nil || r.Err != nil {
		t.Fatalf("create topic: %v %v", err, r.Err)
	}
	for i := 0; i < 60; i++ {
		if err := cl.ProduceSync(ctx(t), &kgo.Record{Key: []byte("k"), Value: make([]byte, 200)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	size := func() int64 {
		dirs, err := adm.DescribeAllLogDirs(ctx(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		dirs.Each(func(d kadm.DescribedLogDir) {
			d.Topics.Each(func(p kadm.DescribedLogDirPartition) {
				if p.Topic == "cmp" {
					n += p.Size
				}
			})
		})
		return n
	}
	before := size()
	if b.RunningCleaner() != nil {
		t.Fatal("a cleaner runs with log.cleaner.threads=0")
	}
	mustSetBroker(t, adm, map[string]*string{"log.cleaner.threads": sp("2")})
	first := b.RunningCleaner()
	if first == nil {
		t.Fatal("no cleaner after log.cleaner.threads was raised")
	}
	deadline := time.Now().Add(10 * time.Second)
	for size() > before/2 {
		if time.Now().After(deadline) {
			t.Fatalf("compacted topic still %d bytes (was %d) after the cleaner was started dynamically", size(), before)
		}
		time.Sleep(50 * time.Millisecond)
	}
	mustSetBroker(t, adm, map[string]*string{"log.cleaner.io.max.bytes.per.second": sp("1048576")}, 1)
	if c := b.RunningCleaner(); c == nil || c == first {
		t.Error("the cleaner was not restarted with the new io.max.bytes.per.second")
	}
}

// Kafka: max.connections and max.connections.per.ip are dynamic
// (ConnectionQuotas): lowered, a new connection beyond them is closed at
// once while open ones stay; raised again, new ones are served.
func TestDynamicMaxConnectionsPerIP(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	adm := kadm.NewClient(client(t, b.addr))
	if _, err := adm.BrokerMetadata(ctx(t)); err != nil { // the admin client's one connection is open
		t.Fatal(err)
	}
	served := func() bool {
		cl, err := kgo.NewClient(kgo.SeedBrokers(b.addr), kgo.RequestRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		cx, cancel := context.WithTimeout(ctx(t), 2*time.Second)
		defer cancel()
		_, err = kmsg.NewPtrMetadataRequest().RequestWith(cx, cl)
		return err == nil
	}
	if !served() {
		t.Fatal("a second connection is not served under the defaults")
	}
	mustSetBroker(t, adm, map[string]*string{"max.connections.per.ip": sp("1")})
	if served() {
		t.Error("a second connection from 127.0.0.1 served after max.connections.per.ip=1")
	}
	if _, err := adm.BrokerMetadata(ctx(t)); err != nil {
		t.Errorf("the open connection stopped working: %v", err)
	}
	mustSetBroker(t, adm, map[string]*string{"max.connections.per.ip": nil})
	mustSetBroker(t, adm, map[string]*string{"max.connections": sp("1")}, 1)
	if served() {
		t.Error("a second connection served after max.connections=1")
	}
	mustSetBroker(t, adm, map[string]*string{"max.connections": nil}, 1)
	if !served() {
		t.Error("a second connection not served after the limits were deleted")
	}
}

// segmentFiles counts the .log files of a partition directory.
func segmentFiles(t *testing.T, dir string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// Kafka: KIP-226's DynamicLogConfig. The log.* defaults reach the live
// logs of topics without their own setting: log.segment.bytes and
// log.roll.ms roll the next segments, log.retention.bytes deletes,
// log.cleanup.policy=compact takes a topic out of time retention, and
// min.insync.replicas refuses an acks=all produce the node alone cannot
// satisfy.
func TestDynamicLogDefaultsReachLiveLogs(t *testing.T) {
	dir := t.TempDir()
	b := startBroker(t, dir, nil)
	cl := client(t, b.addr, kgo.DefaultProduceTopic("live"), kgo.AllowAutoTopicCreation(), kgo.ProducerBatchCompression(kgo.NoCompression()))
	adm := kadm.NewClient(cl)
	produce := func(n int) error {
		for i := 0; i < n; i++ {
			if err := cl.ProduceSync(ctx(t), &kgo.Record{Value: make([]byte, 300)}).FirstErr(); err != nil {
				return err
			}
		}
		return nil
	}
	if err := produce(5); err != nil {
		t.Fatal(err)
	}
	pdir := filepath.Join(dir, "live-0")
	if n := segmentFiles(t, pdir); n != 1 {
		t.Fatalf("%d segments under the 1 GiB default", n)
	}
	mustSetBroker(t, adm, map[string]*string{"log.segment.bytes": sp("1024")})
	if err := produce(10); err != nil {
		t.Fatal(err)
	}
	afterBytes := segmentFiles(t, pdir)
	if afterBytes < 3 {
		t.Fatalf("%d segments after log.segment.bytes=1024", afterBytes)
	}
	mustSetBroker(t, adm, map[string]*string{"log.segment.bytes": nil, "log.roll.ms": sp("1")})
	for i := 0; i < 3; i++ {
		time.Sleep(5 * time.Millisecond)
		if err := produce(1); err != nil {
			t.Fatal(err)
		}
	}
	if n := segmentFiles(t, pdir); n < afterBytes+2 {
		t.Errorf("%d segments after log.roll.ms=1 and three more batches, had %d", n, afterBytes)
	}
	mustSetBroker(t, adm, map[string]*string{"log.roll.ms": nil, "log.cleanup.policy": sp("compact"), "log.retention.ms": sp("1")})
	time.Sleep(5 * time.Millisecond)
	if n := b.RunRetention(ctx(t)); n != 0 {
		t.Errorf("time retention deleted %d segments of a topic compacted by the broker default", n)
	}
	mustSetBroker(t, adm, map[string]*string{"log.cleanup.policy": nil, "log.retention.ms": nil, "log.retention.bytes": sp("1000")})
	if n := b.RunRetention(ctx(t)); n == 0 {
		t.Error("log.retention.bytes=1000 deleted nothing")
	}
	mustSetBroker(t, adm, map[string]*string{"min.insync.replicas": sp("2")}, 1)
	once := client(t, b.addr, kgo.DefaultProduceTopic("live"), kgo.RecordRetries(1))
	if err := once.ProduceSync(ctx(t), &kgo.Record{Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Errorf("acks=all produce with min.insync.replicas=2 on one node: %v, want NOT_ENOUGH_REPLICAS", err)
	}
}

// Kafka: every log.* default Varve accepts dynamically is the default of
// its topic-level setting (LogConfig's synonyms): a topic without its
// own setting describes the new value, from DYNAMIC_DEFAULT_BROKER_CONFIG.
func TestDynamicLogDefaultsResolveEveryTopicSetting(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	adm := kadm.NewClient(client(t, b.addr))
	if r, err := adm.CreateTopic(ctx(t), 1, 1, nil, "every"); err != nil || r.Err != nil {
		t.Fatalf("create topic: %v %v", err, r.Err)
	}
	cases := []struct{ broker, topic, value string }{
		{"log.segment.bytes", "segment.bytes", "2000000"},
		{"log.roll.ms", "segment.ms", "600000"},
		{"log.roll.jitter.ms", "segment.jitter.ms", "5"},
		{"log.index.size.max.bytes", "segment.index.bytes", "40960"},
		{"log.index.interval.bytes", "index.interval.bytes", "8192"},
		{"log.flush.interval.messages", "flush.messages", "1000"},
		{"log.flush.interval.ms", "flush.ms", "1000"},
		{"log.retention.bytes", "retention.bytes", "123456"},
		{"log.retention.ms", "retention.ms", "654321"},
		{"log.cleanup.policy", "cleanup.policy", "compact"},
		{"log.cleaner.delete.retention.ms", "delete.retention.ms", "1000"},
		{"log.cleaner.min.compaction.lag.ms", "min.compaction.lag.ms", "10"},
		{"log.cleaner.max.compaction.lag.ms", "max.compaction.lag.ms", "100000"},
		{"log.cleaner.min.cleanable.ratio", "min.cleanable.dirty.ratio", "0.25"},
		{"log.segment.delete.delay.ms", "file.delete.delay.ms", "10"},
		{"log.preallocate", "preallocate", "true"},
		{"log.message.timestamp.type", "message.timestamp.type", "LogAppendTime"},
		{"log.message.timestamp.before.max.ms", "message.timestamp.before.max.ms", "1000"},
		{"log.message.timestamp.after.max.ms", "message.timestamp.after.max.ms", "1000"},
		{"message.max.bytes", "max.message.bytes", "500000"},
		{"min.insync.replicas", "min.insync.replicas", "1"},
		{"compression.type", "compression.type", "zstd"},
	}
	set := map[string]*string{}
	for _, c := range cases {
		set[c.broker] = sp(c.value)
	}
	mustSetBroker(t, adm, set)
	rc, err := adm.DescribeTopicConfigs(ctx(t), "every")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]kadm.Config{}
	for _, c := range rc[0].Configs {
		got[c.Key] = c
	}
	for _, c := range cases {
		tc := got[c.topic]
		if tc.MaybeValue() != c.value || tc.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
			t.Errorf("%s after %s=%s: %q from %v", c.topic, c.broker, c.value, tc.MaybeValue(), tc.Source)
		}
	}
}
