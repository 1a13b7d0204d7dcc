package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	stdnet "net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/experiments/internal/kafkadist"
	"github.com/varve/varve/metadata"
	"github.com/varve/varve/quorum"
	"github.com/varve/varve/record"
)

// dumpKafkaVersion is the Kafka whose dump tool reads Varve's log.
const dumpKafkaVersion = "4.4.0"

// skipOrFail skips when Kafka cannot be had on a developer's machine
// and fails under CI, where it must be.
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// Kafka: kafka-dump-log.sh --cluster-metadata-decoder (DumpLogSegments'
// ClusterMetadataLogMessageParser reads each record value as one
// ApiMessageAndVersion; KIP-868 frames changes with
// BeginTransactionRecord / EndTransactionRecord). The metadata log a
// three-node Varve quorum writes, with topics created, a config set and
// a broker fenced, is read by Kafka's own dump tool: every record type
// in it is printed as many times as the log holds it, and no record
// fails to parse.
func TestKafkaDumpsVarveMetadataLog(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		skipOrFail(t, "java: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	libs, err := kafkadist.Assemble(ctx, kafkadist.DefaultCacheDir(), dumpKafkaVersion)
	if err != nil {
		skipOrFail(t, "Kafka %s: %v", dumpKafkaVersion, err)
	}
	segment := writeVarveMetadataLog(t)
	want := recordTypes(t, segment)
	for _, typ := range []string{"BEGIN_TRANSACTION_RECORD", "END_TRANSACTION_RECORD", "FEATURE_LEVEL_RECORD",
		"REGISTER_BROKER_RECORD", "TOPIC_RECORD", "PARTITION_RECORD", "CONFIG_RECORD"} {
		if want[typ] == 0 {
			t.Errorf("the log holds no %s", typ)
		}
	}
	out, err := exec.CommandContext(ctx, "java", "-cp", filepath.Join(libs, "*"), "org.apache.kafka.tools.DumpLogSegments",
		"--cluster-metadata-decoder", "--files", segment).CombinedOutput()
	if err != nil {
		t.Fatalf("kafka-dump-log: %v\n%s", err, out)
	}
	got := map[string]int{}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "Error") || strings.Contains(line, "Exception") {
			t.Errorf("kafka-dump-log: %s", line)
		}
		if m := payloadType.FindStringSubmatch(line); m != nil {
			got[m[1]]++
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("kafka-dump-log printed records by type %v, the log holds %v\n%s", got, want, out)
	}
	t.Logf("kafka-dump-log read %v", got)
}

var payloadType = regexp.MustCompile(`payload: \{"type":"([A-Z_]+)"`)

// recordTypes decodes every data record of segment as exactly one
// metadata record and counts them by Kafka's type name (TopicRecord is
// TOPIC_RECORD).
func recordTypes(t *testing.T, segment string) map[string]int {
	t.Helper()
	buf, err := os.ReadFile(segment)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for pos := 0; pos < len(buf); {
		h, size, err := record.NextBatch(buf[pos:], 0)
		if err != nil {
			t.Fatalf("batch at byte %d: %v", pos, err)
		}
		recs, err := record.DecodeBatch(buf[pos:pos+size], nil)
		if err != nil {
			t.Fatalf("batch at byte %d: %v", pos, err)
		}
		pos += size
		for _, r := range recs {
			if h.IsControl() || len(r.Value) == 0 {
				continue
			}
			rec, err := metadata.DecodeRecord(r.Value)
			if err != nil {
				t.Fatalf("offset %d: the value is not one metadata record: %v (%x)", r.Offset, err, r.Value)
			}
			counts[kafkaTypeName(fmt.Sprintf("%T", rec))]++
		}
	}
	return counts
}

// kafkaTypeName turns "metadata.NoOpRecord" into "NO_OP_RECORD".
func kafkaTypeName(goType string) string {
	name := goType[strings.LastIndexByte(goType, '.')+1:]
	var b strings.Builder
	for i, r := range name {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// writeVarveMetadataLog runs three quorum nodes, each with a broker,
// creates two topics, sets a topic config, stops broker 3's heartbeats
// until it is fenced, stops the nodes and returns the first segment of
// node 1's metadata log.
func writeVarveMetadataLog(t *testing.T) string {
	t.Helper()
	var voters []quorum.Voter
	for i := range 3 {
		voters = append(voters, quorum.Voter{ID: int32(i + 1), Addr: freeLoopbackAddr(t)})
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	nodes := make([]*quorum.Node, 3)
	lcs := make([]*quorum.Lifecycle, 3)
	dir0 := ""
	for i := range 3 {
		cfg := quorum.DefaultConfig()
		cfg.NodeID, cfg.ClusterID, cfg.Voters = int32(i+1), "dump-test", voters
		cfg.MetadataLogDir = t.TempDir()
		if i == 0 {
			dir0 = cfg.MetadataLogDir
		}
		cfg.TickMs, cfg.ElectionTimeoutMs, cfg.RequestTimeoutMs = 20, 200, 500
		cfg.Controller.SessionTimeoutMs = 1000
		cfg.Logger = quiet
		n, err := quorum.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		nodes[i] = n
		lcs[i] = quorum.NewLifecycle(n.Client(), quorum.LifecycleConfig{BrokerID: cfg.NodeID, ClusterID: cfg.ClusterID,
			Endpoints:           []metadata.Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: int32(9090 + i), SecurityProtocol: "PLAINTEXT"}},
			HeartbeatIntervalMs: 100, MetadataOffset: n.MetadataOffset, Logger: quiet})
		lcs[i].Start()
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		for i, n := range nodes {
			lcs[i].Stop()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			n.Stop(ctx)
			cancel()
		}
	}
	t.Cleanup(stop)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, lc := range lcs {
		if err := lc.WaitUnfenced(ctx); err != nil {
			t.Fatalf("broker never unfenced: %v", err)
		}
	}
	client := nodes[0].Client()
	for _, topic := range []string{"orders", "payments"} {
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 3, 3
		req.Topics = append(req.Topics, rt)
		resp, err := client.Do(ctx, req)
		if err == nil {
			err = kerr.ErrorForCode(resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode)
		}
		if err != nil {
			t.Fatalf("create %s: %v", topic, err)
		}
	}
	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, "orders"
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	cfg.Name, cfg.Value = "retention.ms", kmsg.StringPtr("3600000")
	res.Configs = append(res.Configs, cfg)
	alter.Resources = append(alter.Resources, res)
	resp, err := client.Do(ctx, alter)
	if err == nil {
		err = kerr.ErrorForCode(resp.(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode)
	}
	if err != nil {
		t.Fatalf("alter configs: %v", err)
	}
	lcs[2].Stop()
	for {
		if b, ok := nodes[0].Publisher().Image().Broker(3); ok && b.Fenced {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("broker 3 never fenced")
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	return filepath.Join(dir0, quorum.MetadataLogDirName, "00000000000000000000.log")
}

// freeLoopbackAddr returns a loopback address with a port free a moment
// ago.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := stdnet.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
