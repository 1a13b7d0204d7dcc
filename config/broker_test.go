package config

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

func mustParse(t *testing.T, props map[string]string) *Broker {
	t.Helper()
	b, err := Parse(props)
	if err != nil {
		t.Fatalf("Parse(%v): %v", props, err)
	}
	return b
}

func get(t *testing.T, b *Broker, name string) string {
	t.Helper()
	v, ok := b.Get(name)
	if !ok {
		t.Fatalf("Get(%q): unknown", name)
	}
	return v
}

// Kafka 4's shipped config/server.properties must start a Varve node.
func TestKafkaServerPropertiesFixture(t *testing.T) {
	b, err := ParseFile(filepath.Join("testdata", "kafka-4-server.properties"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"process.roles":                       "broker,controller",
		"node.id":                             "1",
		"controller.quorum.bootstrap.servers": "localhost:9093",
		"listeners":                           "PLAINTEXT://:9092,CONTROLLER://:9093",
		"advertised.listeners":                "PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093",
		"controller.listener.names":           "CONTROLLER",
		"inter.broker.listener.name":          "PLAINTEXT",
		"log.dirs":                            "/tmp/kraft-combined-logs",
		"num.recovery.threads.per.data.dir":   "1",
		"offsets.topic.replication.factor":    "1",
		"transaction.state.log.min.isr":       "1",
		"log.retention.ms":                    "604800000",
		"log.flush.interval.messages":         "9223372036854775807", // commented out in the file
	}
	for name, v := range want {
		if got := get(t, b, name); got != v {
			t.Errorf("%s = %q, want %q", name, got, v)
		}
	}
	if p, ok := b.SecurityProtocol("CONTROLLER"); !ok || p != "PLAINTEXT" {
		t.Errorf("SecurityProtocol(CONTROLLER) = %q, %v", p, ok)
	}
	if b.IsDefault("log.dirs") || !b.IsDefault("log.flush.interval.messages") {
		t.Error("IsDefault does not follow what the file sets")
	}
}

// The Docker image's variant uses a static quorum and advertises only the
// broker listener.
func TestKafkaDockerStaticQuorum(t *testing.T) {
	b := mustParse(t, map[string]string{
		"process.roles":                  "broker,controller",
		"node.id":                        "1",
		"controller.quorum.voters":       "1@localhost:9093",
		"listeners":                      "PLAINTEXT://:9092,CONTROLLER://:9093",
		"inter.broker.listener.name":     "PLAINTEXT",
		"advertised.listeners":           "PLAINTEXT://localhost:9092",
		"controller.listener.names":      "CONTROLLER",
		"listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
	})
	want := []QuorumVoter{{ID: 1, Host: "localhost", Port: 9093}}
	if d := cmp.Diff(want, b.ControllerQuorumVoters); d != "" {
		t.Errorf("voters (-want +got)\n%s", d)
	}
}

// Kafka: log.retention.ms wins over log.retention.minutes, which wins over
// log.retention.hours; a negative value is -1, unlimited.
func TestRetentionPrecedence(t *testing.T) {
	cases := []struct {
		props map[string]string
		want  Millis
	}{
		{map[string]string{}, 168 * 3600 * 1000},
		{map[string]string{"log.retention.hours": "1"}, 3600 * 1000},
		{map[string]string{"log.retention.hours": "1", "log.retention.minutes": "2"}, 2 * 60 * 1000},
		{map[string]string{"log.retention.hours": "1", "log.retention.minutes": "2", "log.retention.ms": "3"}, 3},
		{map[string]string{"log.retention.hours": "1", "log.retention.ms": "5000"}, 5000},
		{map[string]string{"log.retention.ms": "-1"}, -1},
		{map[string]string{"log.retention.ms": "-7"}, -1},
		{map[string]string{"log.retention.hours": "-1"}, -1},
		{map[string]string{"log.retention.minutes": "-3", "log.retention.hours": "5"}, -1},
	}
	for _, c := range cases {
		b := mustParse(t, c.props)
		if b.LogRetentionMs != c.want {
			t.Errorf("%v: LogRetentionMs = %d, want %d", c.props, b.LogRetentionMs, c.want)
		}
		if got := b.TopicDefaults().RetentionPolicy().RetentionMs; c.want > 0 && got != c.want.Duration() {
			t.Errorf("%v: topic retention = %v, want %v", c.props, got, c.want.Duration())
		}
	}
	// Kafka: a broker-level retention of 0 is refused ("unlimited (-1) or at least 1").
	if _, err := Parse(map[string]string{"log.retention.ms": "0"}); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("log.retention.ms=0: %v, want ErrInvalidValue", err)
	}
}

// Kafka: log.roll.ms over log.roll.hours, log.roll.jitter.ms over
// log.roll.jitter.hours, log.flush.interval.ms over
// log.flush.scheduler.interval.ms, log.dirs over log.dir, broker.id as
// node.id.
func TestSynonymPrecedence(t *testing.T) {
	cases := []struct {
		props      map[string]string
		name, want string
	}{
		{map[string]string{"log.roll.hours": "2"}, "log.roll.ms", "7200000"},
		{map[string]string{"log.roll.hours": "2", "log.roll.ms": "10"}, "log.roll.ms", "10"},
		{map[string]string{"log.roll.jitter.hours": "1"}, "log.roll.jitter.ms", "3600000"},
		{map[string]string{"log.roll.jitter.hours": "1", "log.roll.jitter.ms": "5"}, "log.roll.jitter.ms", "5"},
		{map[string]string{"log.flush.scheduler.interval.ms": "2000"}, "log.flush.interval.ms", "2000"},
		{map[string]string{"log.flush.scheduler.interval.ms": "2000", "log.flush.interval.ms": "10"}, "log.flush.interval.ms", "10"},
		{map[string]string{"log.dir": "/a"}, "log.dirs", "/a"},
		{map[string]string{"log.dir": "/a", "log.dirs": "/b, /c"}, "log.dirs", "/b,/c"},
		{map[string]string{"broker.id": "7"}, "node.id", "7"},
		{map[string]string{"node.id": "7"}, "broker.id", "7"},
		{map[string]string{"listeners": "PLAINTEXT://10.0.0.1:9092"}, "advertised.listeners", "PLAINTEXT://10.0.0.1:9092"},
		{map[string]string{"security.inter.broker.protocol": "SSL", "listeners": "SSL://h:1"}, "inter.broker.listener.name", "SSL"},
	}
	for _, c := range cases {
		if got := get(t, mustParse(t, c.props), c.name); got != c.want {
			t.Errorf("%v: %s = %q, want %q", c.props, c.name, got, c.want)
		}
	}
	// The topic defaults follow the derived values.
	td := mustParse(t, map[string]string{"log.roll.hours": "2"}).TopicDefaults()
	if v, isDefault, _ := td.Get("segment.ms"); v != "7200000" || !isDefault {
		t.Errorf("segment.ms = %q (default %v), want 7200000 from log.roll.hours", v, isDefault)
	}
}

// kafka-server-start.sh: --override key=value wins over the file.
func TestOverridesWinOverFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.properties")
	file := "num.partitions=3\nlog.retention.hours=24\nlog.dirs=/from/file\n"
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := ParseFile(path, []string{"num.partitions=5", "log.retention.ms=1000", " log.dirs = /x,/y"})
	if err != nil {
		t.Fatal(err)
	}
	if b.NumPartitions != 5 || b.LogRetentionMs != 1000 {
		t.Errorf("num.partitions=%d log.retention.ms=%d, want the overrides 5 and 1000", b.NumPartitions, b.LogRetentionMs)
	}
	if d := cmp.Diff([]string{"/x", "/y"}, b.LogDirs); d != "" {
		t.Errorf("log.dirs (-want +got)\n%s", d)
	}
	if get(t, b, "log.retention.hours") != "24" {
		t.Error("log.retention.hours from the file was lost")
	}
	if _, err := ParseFile(path, []string{"no-equals-sign"}); !errors.Is(err, ErrSyntax) {
		t.Errorf("override without '=': %v, want ErrSyntax", err)
	}
	if _, err := ParseFile(filepath.Join(t.TempDir(), "missing"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist", err)
	}
	b, err = ParseFile("", []string{"node.id=4"})
	if err != nil || b.NodeID != 4 {
		t.Errorf("ParseFile without a file: %v, node.id %v", err, b)
	}
}

// Varve refuses unknown names (Kafka warns), naming each and suggesting
// the nearest known one.
func TestUnknownPropertiesAreErrors(t *testing.T) {
	_, err := Parse(map[string]string{"log.retention.hour": "1", "zzz.made.up": "x", "num.partitions": "2"})
	if !errors.Is(err, ErrUnknownProperty) {
		t.Fatalf("err = %v, want ErrUnknownProperty", err)
	}
	msg := err.Error()
	for _, want := range []string{`"log.retention.hour"`, `did you mean "log.retention.hours"`, `"zzz.made.up"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not contain %s", msg, want)
		}
	}
	var pe *PropertyError
	if !errors.As(err, &pe) || pe.Name != "log.retention.hour" {
		t.Errorf("first PropertyError = %+v, want log.retention.hour", pe)
	}
	// ZooKeeper-era properties are gone from Kafka 4 and from Varve.
	if _, err := Parse(map[string]string{"zookeeper.connect": "localhost:2181"}); !errors.Is(err, ErrUnknownProperty) {
		t.Errorf("zookeeper.connect: %v, want ErrUnknownProperty", err)
	}
}

// Kafka's ConfigDef types and ranges; the error names property, value and
// expectation.
func TestBadValues(t *testing.T) {
	cases := []struct{ name, value, expect string }{
		{"num.partitions", "abc", "32-bit integer"},
		{"num.partitions", "0", "at least 1"},
		{"num.partitions", "2147483648", "32-bit integer"},
		{"log.segment.bytes", "13", "at least 14"},
		{"log.index.size.max.bytes", "47", "at least 48"},
		{"message.max.bytes", "60", "at least 61"},
		{"log.flush.interval.messages", "0", "at least 1"},
		{"log.retention.bytes", "1.5", "64-bit integer"},
		{"auto.create.topics.enable", "yes", "true or false"},
		{"log.cleaner.min.cleanable.ratio", "1.5", "[0, 1]"},
		{"log.cleaner.min.cleanable.ratio", "NaN", "number"},
		{"log.cleaner.io.buffer.load.factor", "0", "(0, 1]"},
		{"log.cleaner.io.max.bytes.per.second", "0", "above 0"},
		{"log.cleanup.policy", "delete,archive", "delete, compact"},
		{"log.cleanup.policy", "", "delete and compact"},
		{"log.cleanup.policy", "compact,compact", "twice"},
		{"log.message.timestamp.type", "createtime", "CreateTime, LogAppendTime"},
		{"compression.type", "brotli", "uncompressed, zstd, lz4, snappy, gzip, producer"},
		{"compression.gzip.level", "0", "-1 or a value in [1, 9]"},
		{"process.roles", "broker,coordinator", "broker, controller"},
		{"process.roles", "", "at least one"},
		{"listeners", "PLAINTEXT:9092", "NAME://host:port"},
		{"listeners", "PLAINTEXT://h:99999", "[0, 65535]"},
		{"listeners", "A://h:1,a://h:2", "appears twice"},
		{"listener.security.protocol.map", "A:TLS", "one of PLAINTEXT"},
		{"controller.quorum.voters", "x@h:1", "id@host:port"},
		{"controller.quorum.voters", "1@h:1,1@g:2", "appears twice"},
		{"controller.quorum.bootstrap.servers", "nohost", "host:port"},
		{"security.inter.broker.protocol", "TLS", "one of"},
		{"varve.network.model", "threads", "reactor, goroutine, goroutine-inline"},
		{"varve.metrics.listener", "7071", "host:port"},
		{"node.id", "-1", "at least 0"},
		{"offsets.topic.replication.factor", "40000", "16-bit integer"},
	}
	for _, c := range cases {
		_, err := Parse(map[string]string{c.name: c.value})
		var pe *PropertyError
		if !errors.Is(err, ErrInvalidValue) || !errors.As(err, &pe) {
			t.Errorf("%s=%q: err = %v, want a PropertyError wrapping ErrInvalidValue", c.name, c.value, err)
			continue
		}
		if pe.Name != c.name || pe.Value != c.value || !strings.Contains(pe.Reason, c.expect) {
			t.Errorf("%s=%q: got %v, want the name, the value and %q", c.name, c.value, err, c.expect)
		}
	}
}

// All bad values are reported at once.
func TestErrorsAreJoined(t *testing.T) {
	_, err := Parse(map[string]string{"num.partitions": "x", "num.io.threads": "0"})
	if err == nil || !strings.Contains(err.Error(), "num.partitions") || !strings.Contains(err.Error(), "num.io.threads") {
		t.Errorf("err = %v, want both properties named", err)
	}
}

// Kafka's KafkaConfig cross-property checks.
func TestCrossPropertyChecks(t *testing.T) {
	ctrl := map[string]string{"controller.listener.names": "CONTROLLER", "listeners": "PLAINTEXT://:9092,CONTROLLER://:9093"}
	with := func(base map[string]string, kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	cases := []struct {
		name  string
		props map[string]string
		prop  string
	}{
		{"broker.id differs from node.id", map[string]string{"broker.id": "1", "node.id": "2"}, "broker.id"},
		{"both inter-broker settings", map[string]string{"inter.broker.listener.name": "PLAINTEXT", "security.inter.broker.protocol": "PLAINTEXT"}, "inter.broker.listener.name"},
		{"inter-broker listener missing", map[string]string{"inter.broker.listener.name": "INTERNAL"}, "inter.broker.listener.name"},
		{"advertised name not in listeners", map[string]string{"advertised.listeners": "OTHER://h:1"}, "advertised.listeners"},
		{"advertising 0.0.0.0", map[string]string{"listeners": "PLAINTEXT://0.0.0.0:9092"}, "advertised.listeners"},
		{"two listeners on one port", map[string]string{"listeners": "PLAINTEXT://:9092,SSL://:9092"}, "listeners"},
		{"listener without protocol", map[string]string{"listeners": "INTERNAL://:9092", "inter.broker.listener.name": "INTERNAL"}, "listener.security.protocol.map"},
		{"broker-only without quorum", map[string]string{"process.roles": "broker"}, "process.roles"},
		{"broker-only node in voters", with(ctrl, "process.roles", "broker", "controller.quorum.voters", "1@h:9093", "listeners", "PLAINTEXT://:9092"), "controller.quorum.voters"},
		{"broker-only with controller listener", with(ctrl, "process.roles", "broker", "controller.quorum.voters", "2@h:9093"), "controller.listener.names"},
		// A broker-only node follows the log as a raft learner, pushed to it
		// by the controllers: it needs an address to receive it on.
		{"learner listener on no host", map[string]string{"varve.quorum.learner.listener": "0.0.0.0:9094"}, "varve.quorum.learner.listener"},
		{"broker-only learner without listener", with(ctrl, "process.roles", "broker", "controller.quorum.voters", "2@h:9093", "listeners", "PLAINTEXT://:9092"), "varve.quorum.learner.listener"},
		{"controller not among voters", with(ctrl, "controller.quorum.voters", "2@h:9093"), "controller.quorum.voters"},
		{"quorum without controller listener", map[string]string{"controller.quorum.voters": "1@h:9093"}, "controller.listener.names"},
		{"controller listener not in listeners", map[string]string{"controller.listener.names": "CONTROLLER"}, "controller.listener.names"},
		{"controller-only with broker listener", with(ctrl, "process.roles", "controller"), "listeners"},
		{"only controller listeners on a broker", with(ctrl, "listeners", "CONTROLLER://:9093"), "listeners"},
		{"fetch wait above lag time", map[string]string{"replica.fetch.wait.max.ms": "40000"}, "replica.fetch.wait.max.ms"},
		{"fetch wait above socket timeout", map[string]string{"replica.fetch.wait.max.ms": "20000", "replica.socket.timeout.ms": "10000"}, "replica.fetch.wait.max.ms"},
		{"dedupe buffer under 1 MiB per thread", map[string]string{"log.cleaner.dedupe.buffer.size": "2097152", "log.cleaner.threads": "2"}, "log.cleaner.dedupe.buffer.size"},
		{"queued bytes below request size", map[string]string{"queued.max.request.bytes": "1000"}, "queued.max.request.bytes"},
		// Kafka: max.connections.per.ip=0 needs overrides; overrides are host:count.
		{"zero per-IP connections without overrides", map[string]string{"max.connections.per.ip": "0"}, "max.connections.per.ip"},
		{"override without count", map[string]string{"max.connections.per.ip.overrides": "127.0.0.1"}, "max.connections.per.ip.overrides"},
		{"negative override", map[string]string{"max.connections.per.ip.overrides": "127.0.0.1:-1"}, "max.connections.per.ip.overrides"},
		{"negative creation rate", map[string]string{"max.connection.creation.rate": "-1"}, "max.connection.creation.rate"},
		{"min session above max", map[string]string{"group.min.session.timeout.ms": "10", "group.max.session.timeout.ms": "5"}, "group.min.session.timeout.ms"},
		{"cleaner lags crossed", map[string]string{"log.cleaner.min.compaction.lag.ms": "10", "log.cleaner.max.compaction.lag.ms": "5"}, "min.compaction.lag.ms"},
		{"empty log dir", map[string]string{"log.dirs": "/a,,/b"}, "log.dirs"},
	}
	for _, c := range cases {
		_, err := Parse(c.props)
		var pe *PropertyError
		if !errors.As(err, &pe) || pe.Name != c.prop || !errors.Is(err, ErrInvalidValue) {
			t.Errorf("%s: err = %v, want an invalid %s", c.name, err, c.prop)
		}
	}
	// And the valid neighbours of those cases.
	for _, ok := range []map[string]string{
		{"max.connections.per.ip": "0", "max.connections.per.ip.overrides": "10.0.0.1:5"},
		with(ctrl, "controller.quorum.voters", "1@h:9093"),
		with(ctrl, "process.roles", "broker", "controller.quorum.bootstrap.servers", "h:9093", "listeners", "PLAINTEXT://:9092"),
		with(ctrl, "process.roles", "broker", "controller.quorum.voters", "2@h:9093", "listeners", "PLAINTEXT://:9092", "varve.quorum.learner.listener", "127.0.0.1:9094"),
		with(ctrl, "process.roles", "controller", "listeners", "CONTROLLER://:9093", "controller.quorum.voters", "1@h:9093"),
		{"listeners": "PLAINTEXT://0.0.0.0:9092", "advertised.listeners": "PLAINTEXT://example.com:9092"},
		{"listeners": "INTERNAL://:9092", "inter.broker.listener.name": "internal", "listener.security.protocol.map": "INTERNAL:SSL"},
		{"listeners": "PLAINTEXT://:0,SSL://:0"},
		{"log.cleaner.threads": "0"},
	} {
		if _, err := Parse(ok); err != nil {
			t.Errorf("Parse(%v): %v", ok, err)
		}
	}
}

func TestBrokerTypedFields(t *testing.T) {
	b := mustParse(t, map[string]string{
		"listeners":                           "PLAINTEXT://[::1]:9092,sasl_ssl://h:9093",
		"listener.security.protocol.map":      "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL",
		"log.cleanup.policy":                  "compact, delete",
		"log.message.timestamp.type":          "LogAppendTime",
		"auto.create.topics.enable":           "FALSE",
		"log.cleaner.io.max.bytes.per.second": "1e6",
		"connections.max.idle.ms":             " 1000 ",
	})
	wantL := []Listener{{Name: "PLAINTEXT", Host: "::1", Port: 9092}, {Name: "SASL_SSL", Host: "h", Port: 9093}}
	if d := cmp.Diff(wantL, b.Listeners); d != "" {
		t.Errorf("listeners (-want +got)\n%s", d)
	}
	if got := get(t, b, "listeners"); got != "PLAINTEXT://[::1]:9092,SASL_SSL://h:9093" {
		t.Errorf("Get(listeners) = %q", got)
	}
	if b.Listeners[0].Addr() != "[::1]:9092" {
		t.Errorf("Addr = %q", b.Listeners[0].Addr())
	}
	if b.LogCleanupPolicy != segment.CleanupDelete|segment.CleanupCompact || get(t, b, "log.cleanup.policy") != "compact,delete" {
		t.Errorf("log.cleanup.policy = %v", b.LogCleanupPolicy)
	}
	if b.LogMessageTimestampType != record.TimestampLogAppendTime || b.AutoCreateTopicsEnable {
		t.Errorf("timestamp type %v, auto create %v", b.LogMessageTimestampType, b.AutoCreateTopicsEnable)
	}
	if b.LogCleanerIoMaxBytesPerSecond != 1e6 || get(t, b, "log.cleaner.io.max.bytes.per.second") != "1000000.0" {
		t.Errorf("io max = %v, shown %q", b.LogCleanerIoMaxBytesPerSecond, get(t, b, "log.cleaner.io.max.bytes.per.second"))
	}
	if b.ConnectionsMaxIdleMs.Duration().Seconds() != 1 {
		t.Errorf("connections.max.idle.ms = %v", b.ConnectionsMaxIdleMs)
	}
	if !b.HasRole("controller") || !b.HasRole("broker") {
		t.Error("default roles")
	}
}

func TestNamesAndGet(t *testing.T) {
	b := Default()
	names := b.Names()
	if len(names) != len(brokerDefs) {
		t.Fatalf("Names has %d, table %d (duplicate name?)", len(names), len(brokerDefs))
	}
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Errorf("Names not sorted and unique at %q, %q", names[i-1], names[i])
		}
	}
	names[0] = "changed"
	if b.Names()[0] == "changed" {
		t.Error("Names returns the package's own slice")
	}
	if _, ok := b.Get("no.such.property"); ok {
		t.Error("Get of an unknown name is ok")
	}
	if v := get(t, b, "log.retention.minutes"); v != "" {
		t.Errorf("unset null property shows %q, want empty", v)
	}
}

func TestMillisDuration(t *testing.T) {
	cases := []struct {
		m    Millis
		want string
	}{{1500, "1.5s"}, {-1, "-1ms"}, {MaxMillis, "2562047h47m16.854775807s"}, {-MaxMillis, "-2562047h47m16.854775808s"}}
	for _, c := range cases {
		if got := c.m.Duration().String(); got != c.want {
			t.Errorf("Millis(%d).Duration() = %s, want %s", c.m, got, c.want)
		}
	}
}

func TestJavaDouble(t *testing.T) {
	cases := map[float64]string{0.5: "0.5", 1: "1.0", 0.9: "0.9", 1e7: "1.0E7", 1.7976931348623157e308: "1.7976931348623157E308", 1e-4: "1.0E-4", 0: "0.0", 123.25: "123.25"}
	for f, want := range cases {
		if got := javaDouble(f); got != want {
			t.Errorf("javaDouble(%v) = %q, want %q", f, got, want)
		}
	}
}

// Kafka: max.connections.per.ip.overrides is "host:count,..." split at
// each entry's last colon, so an IPv6 address needs no brackets.
func TestConnectionOverrides(t *testing.T) {
	b, err := Parse(map[string]string{"max.connections.per.ip.overrides": "hostA:100, 127.0.0.1:200,::1:0"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"hostA": 100, "127.0.0.1": 200, "::1": 0}
	if !maps.Equal(b.MaxConnectionsPerIPOverrides, want) {
		t.Errorf("overrides %v, want %v", b.MaxConnectionsPerIPOverrides, want)
	}
	if got, _ := b.Get("max.connections.per.ip.overrides"); got != "127.0.0.1:200,::1:0,hostA:100" {
		t.Errorf("Get = %q", got)
	}
}
