package cluster_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
)

// testBroker is a broker on a free loopback port with its data in a
// temp dir.
type testBroker struct {
	*cluster.Broker
	dir  string
	addr string
}

func startBroker(t testing.TB, dir string, props map[string]string) *testBroker {
	t.Helper()
	all := map[string]string{
		"log.dirs":               dir,
		"listeners":              "PLAINTEXT://127.0.0.1:0",
		"varve.metrics.listener": "",
		"num.network.threads":    "2",
		"num.io.threads":         "4",
	}
	for k, v := range props {
		all[k] = v
	}
	cfg, err := config.Parse(all)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cluster.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	tb := &testBroker{Broker: b, dir: dir, addr: b.Addr().String()}
	t.Cleanup(func() { tb.stop(t) })
	return tb
}

func (tb *testBroker) stop(t testing.TB) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tb.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

func client(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	c, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func createTopic(t testing.TB, addr, topic string, partitions int32, configs map[string]*string) {
	t.Helper()
	adm := kadm.NewClient(client(t, addr))
	resp, err := adm.CreateTopic(ctx(t), partitions, 1, configs, topic)
	if err != nil || resp.Err != nil {
		t.Fatalf("create topic %s: %v %v", topic, err, resp.Err)
	}
}

// produceSync produces records and fails the test on any error.
func produceSync(t *testing.T, c *kgo.Client, recs ...*kgo.Record) {
	t.Helper()
	if err := c.ProduceSync(ctx(t), recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// consumeN reads n records from the start of topic.
func consumeN(t *testing.T, addr, topic string, n int) []*kgo.Record {
	t.Helper()
	c := client(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var out []*kgo.Record
	cx := ctx(t)
	for len(out) < n {
		fs := c.PollFetches(cx)
		if cx.Err() != nil {
			t.Fatalf("consumed %d of %d records before the deadline", len(out), n)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		out = append(out, fs.Records()...)
	}
	return out
}

func TestTopicAdmin(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	adm := kadm.NewClient(client(t, b.addr))
	seg := "1048576"
	if _, err := adm.CreateTopic(ctx(t), 3, 1, map[string]*string{"segment.bytes": &seg}, "admin-a"); err != nil {
		t.Fatal(err)
	}
	resp, _ := adm.CreateTopic(ctx(t), 3, 1, nil, "admin-a")
	if !errors.Is(resp.Err, kerr.TopicAlreadyExists) {
		t.Fatalf("second create: %v", resp.Err)
	}
	if resp, _ := adm.CreateTopic(ctx(t), 1, 3, nil, "admin-rf3"); !errors.Is(resp.Err, kerr.InvalidReplicationFactor) {
		t.Fatalf("rf=3 on one node: %v", resp.Err)
	}
	if resp, _ := adm.CreateTopic(ctx(t), 1, 1, nil, "bad/name"); !errors.Is(resp.Err, kerr.InvalidTopicException) {
		t.Fatalf("bad name: %v", resp.Err)
	}
	bogus := "x"
	if resp, _ := adm.CreateTopic(ctx(t), 1, 1, map[string]*string{"no.such.config": &bogus}, "admin-cfg"); !errors.Is(resp.Err, kerr.InvalidConfig) {
		t.Fatalf("unknown config: %v", resp.Err)
	}
	details, err := adm.ListTopics(ctx(t))
	if err != nil || !details.Has("admin-a") || len(details["admin-a"].Partitions) != 3 {
		t.Fatalf("list: %v %+v", err, details)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx(t), "admin-a")
	if err != nil {
		t.Fatal(err)
	}
	rc, _ := rcs.On("admin-a", nil)
	if v := configValue(rc, "segment.bytes"); v != "1048576" {
		t.Fatalf("segment.bytes described as %q", v)
	}
	if v := configValue(rc, "retention.ms"); v != "604800000" {
		t.Fatalf("retention.ms default described as %q", v)
	}
	if _, err := adm.CreatePartitions(ctx(t), 2, "admin-a"); err != nil {
		t.Fatal(err)
	}
	details, _ = adm.ListTopics(ctx(t), "admin-a")
	if n := len(details["admin-a"].Partitions); n != 5 {
		t.Fatalf("%d partitions after adding 2", n)
	}
	dr, err := adm.DeleteTopics(ctx(t), "admin-a")
	if err != nil || dr["admin-a"].Err != nil {
		t.Fatalf("delete: %v %v", err, dr)
	}
	// A new client: kadm answers ListTopics from a cache for a while.
	details, _ = kadm.NewClient(client(t, b.addr)).ListTopics(ctx(t))
	if details.Has("admin-a") {
		t.Fatal("topic still listed after delete")
	}
}

func configValue(rc kadm.ResourceConfig, name string) string {
	for _, c := range rc.Configs {
		if c.Key == name && c.Value != nil {
			return *c.Value
		}
	}
	return ""
}

func TestProduceConsumeEveryCodec(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	codecs := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
		"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
	}
	for name, codec := range codecs {
		t.Run(name, func(t *testing.T) {
			topic := "codec-" + name
			createTopic(t, b.addr, topic, 2, nil)
			p := client(t, b.addr, kgo.ProducerBatchCompression(codec), kgo.DefaultProduceTopic(topic))
			var want []*kgo.Record
			for i := 0; i < 200; i++ {
				r := &kgo.Record{Key: []byte(fmt.Sprintf("k%d", i%7)), Value: bytes.Repeat([]byte{byte(i)}, 100+i),
					Headers: []kgo.RecordHeader{{Key: "h", Value: []byte(name)}}}
				want = append(want, r)
			}
			produceSync(t, p, want...)
			got := consumeN(t, b.addr, topic, len(want))
			seen := map[string]bool{}
			for _, r := range got {
				if len(r.Headers) != 1 || string(r.Headers[0].Value) != name {
					t.Fatalf("headers lost: %+v", r.Headers)
				}
				seen[string(r.Key)+"/"+string(r.Value)] = true
			}
			for _, r := range want {
				if !seen[string(r.Key)+"/"+string(r.Value)] {
					t.Fatalf("record %s not consumed back", r.Key)
				}
			}
		})
	}
}

func TestOneMiBRecord(t *testing.T) {
	b := startBroker(t, t.TempDir(), map[string]string{"message.max.bytes": "2000000"})
	createTopic(t, b.addr, "big", 1, nil)
	p := client(t, b.addr, kgo.DefaultProduceTopic("big"), kgo.ProducerBatchMaxBytes(2_000_000))
	v := bytes.Repeat([]byte("v"), 1<<20)
	produceSync(t, p, &kgo.Record{Value: v})
	got := consumeN(t, b.addr, "big", 1)
	if !bytes.Equal(got[0].Value, v) {
		t.Fatal("1 MiB record came back different")
	}
}

// Kafka: DelayedFetch completes when an append brings min.bytes.
func TestLongPollFetchWakesOnProduce(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	createTopic(t, b.addr, "poll", 1, nil)
	c := client(t, b.addr, kgo.ConsumeTopics("poll"), kgo.FetchMaxWait(10*time.Second))
	got := make(chan time.Time, 1)
	go func() {
		fs := c.PollFetches(ctx(t))
		if len(fs.Records()) > 0 {
			got <- time.Now()
		}
	}()
	time.Sleep(300 * time.Millisecond) // the fetch is now parked
	sent := time.Now()
	produceSync(t, client(t, b.addr, kgo.DefaultProduceTopic("poll")), &kgo.Record{Value: []byte("wake")})
	select {
	case at := <-got:
		if d := at.Sub(sent); d > 5*time.Second {
			t.Fatalf("the fetch answered %v after the produce: it waited for max.wait.ms instead", d)
		}
	case <-time.After(8 * time.Second):
		t.Fatal("the parked fetch never returned the record")
	}
}

func TestListOffsetsByTime(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	createTopic(t, b.addr, "times", 1, nil)
	p := client(t, b.addr, kgo.DefaultProduceTopic("times"))
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for i := 0; i < 10; i++ {
		produceSync(t, p, &kgo.Record{Value: []byte{byte(i)}, Timestamp: base.Add(time.Duration(i) * time.Minute)})
	}
	adm := kadm.NewClient(client(t, b.addr))
	lo, err := adm.ListOffsetsAfterMilli(ctx(t), base.Add(150*time.Second).UnixMilli(), "times")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := lo.Lookup("times", 0); o.Offset != 3 {
		t.Fatalf("offset for base+2.5min = %d, want 3", o.Offset)
	}
	ends, _ := adm.ListEndOffsets(ctx(t), "times")
	starts, _ := adm.ListStartOffsets(ctx(t), "times")
	if e, _ := ends.Lookup("times", 0); e.Offset != 10 {
		t.Fatalf("end offset %d", e.Offset)
	}
	if s, _ := starts.Lookup("times", 0); s.Offset != 0 {
		t.Fatalf("start offset %d", s.Offset)
	}
}

// Kafka: IncrementalAlterConfigs reaches the partitions' logs.
func TestAlteredConfigTakesEffect(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	createTopic(t, b.addr, "alter", 1, nil)
	adm := kadm.NewClient(client(t, b.addr))
	rs, err := adm.AlterTopicConfigs(ctx(t), []kadm.AlterConfig{{Name: "segment.bytes", Value: kadm.StringPtr("16384")}}, "alter")
	if err != nil || rs[0].Err != nil {
		t.Fatalf("alter: %v %v", err, rs)
	}
	p := client(t, b.addr, kgo.DefaultProduceTopic("alter"), kgo.ProducerLinger(0))
	for i := 0; i < 40; i++ {
		v := make([]byte, 2000)
		rand.Read(v) // incompressible: kgo compresses with snappy by default
		produceSync(t, p, &kgo.Record{Value: v})
	}
	logs, _ := filepath.Glob(filepath.Join(b.dir, "alter-0", "*.log"))
	if len(logs) < 3 {
		t.Fatalf("%d segments after 80 KB with segment.bytes=16384", len(logs))
	}
	rcs, _ := adm.DescribeTopicConfigs(ctx(t), "alter")
	rc, _ := rcs.On("alter", nil)
	if v := configValue(rc, "segment.bytes"); v != "16384" {
		t.Fatalf("segment.bytes described as %q after alter", v)
	}
}

// Data and topics survive a clean restart.
func TestRestartKeepsData(t *testing.T) {
	dir := t.TempDir()
	b := startBroker(t, dir, nil)
	createTopic(t, b.addr, "keep", 1, nil)
	p := client(t, b.addr, kgo.DefaultProduceTopic("keep"))
	for i := 0; i < 50; i++ {
		produceSync(t, p, &kgo.Record{Value: []byte(fmt.Sprint(i))})
	}
	p.Close()
	b.stop(t)
	if _, err := os.Stat(filepath.Join(dir, ".kafka_cleanshutdown")); err != nil {
		t.Fatalf("no clean-shutdown marker after a clean stop: %v", err)
	}
	b2 := startBroker(t, dir, nil)
	got := consumeN(t, b2.addr, "keep", 50)
	for i, r := range got {
		if string(r.Value) != fmt.Sprint(i) || r.Offset != int64(i) {
			t.Fatalf("record %d: offset %d value %q", i, r.Offset, r.Value)
		}
	}
	cp, _ := os.ReadFile(filepath.Join(dir, "recovery-point-offset-checkpoint"))
	if !strings.Contains(string(cp), "keep 0 50") {
		t.Fatalf("recovery point checkpoint %q", cp)
	}
}

// Kafka 3.x: Produce v0-2 carry magic 0/1 message sets, up-converted to v2
// batches on the way in (KAFKA-18659 keeps them advertised for librdkafka).
func TestOldProduceVersionsAreUpConverted(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	for name, v := range map[string]*kversion.Versions{"v0.9 (Produce v1, magic 0)": kversion.V0_9_0(), "v0.10 (Produce v2, magic 1)": kversion.V0_10_0()} {
		t.Run(name, func(t *testing.T) {
			topic := "old-" + strings.NewReplacer(" ", "", "(", "", ")", "", ",", "").Replace(name)
			topic = strings.ReplaceAll(topic, "v0.", "v0")
			createTopic(t, b.addr, topic, 1, nil)
			for _, codec := range []kgo.CompressionCodec{kgo.NoCompression(), kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression()} {
				p := client(t, b.addr, kgo.DefaultProduceTopic(topic), kgo.MaxVersions(v), kgo.ProducerBatchCompression(codec), kgo.DisableIdempotentWrite())
				produceSync(t, p, &kgo.Record{Key: []byte("k"), Value: []byte("old-format")}, &kgo.Record{Value: []byte("second")})
			}
			got := consumeN(t, b.addr, topic, 8)
			for i, r := range got {
				want := "old-format"
				if i%2 == 1 {
					want = "second"
				}
				if string(r.Value) != want || r.Offset != int64(i) {
					t.Fatalf("record %d: offset %d value %q", i, r.Offset, r.Value)
				}
			}
		})
	}
}

// Kafka 3.x: Fetch v0-3 consumers get records down-converted to magic 0/1.
func TestOldFetchVersionsAreDownConverted(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	createTopic(t, b.addr, "legacy-read", 1, nil)
	p := client(t, b.addr, kgo.DefaultProduceTopic("legacy-read"))
	for i := 0; i < 20; i++ {
		produceSync(t, p, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf("value-%d", i))})
	}
	for name, v := range map[string]*kversion.Versions{"Fetch v1 (magic 0)": kversion.V0_9_0(), "Fetch v3 (magic 1)": kversion.V0_10_1()} {
		t.Run(name, func(t *testing.T) {
			c := client(t, b.addr, kgo.ConsumeTopics("legacy-read"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MaxVersions(v))
			var got []*kgo.Record
			cx := ctx(t)
			for len(got) < 20 && cx.Err() == nil {
				fs := c.PollFetches(cx)
				fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
				got = append(got, fs.Records()...)
			}
			for i, r := range got {
				if r.Offset != int64(i) || string(r.Value) != fmt.Sprintf("value-%d", i) || string(r.Key) != fmt.Sprint(i) {
					t.Fatalf("record %d: offset %d key %q value %q", i, r.Offset, r.Key, r.Value)
				}
			}
		})
	}
}
