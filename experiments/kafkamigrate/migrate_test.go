package kafkamigrate

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
	"github.com/varve/varve/migrate"
)

// The topics the test creates on Kafka, with their overrides.
var topics = map[string]struct {
	partitions int32
	configs    map[string]string
}{
	"compacted": {1, map[string]string{"cleanup.policy": "compact", "min.compaction.lag.ms": "60000"}},
	"plain":     {2, map[string]string{"retention.ms": "86400000", "max.message.bytes": "2000000"}},
}

// Kafka: an adopted log dir must not lose data (topic configs from the
// KRaft metadata log, producer ids above Kafka's, KIP-98's aborted
// transactions read from .txnindex by read_committed fetches, group
// offsets in __consumer_offsets).
func TestMigrateKafkaLogDir(t *testing.T) {
	dir := t.TempDir()
	k := startKafka(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	waitReady(t, ctx, k)
	writeOnKafka(t, ctx, k.addr)
	before := describe(t, ctx, k.addr)
	if before.GroupOffset != 10 || before.Configs["compacted"]["cleanup.policy"] != "compact" {
		t.Fatalf("Kafka's own view is not what was written: %+v", before)
	}
	k.stop(t)

	p, err := migrate.Build(k.data, "")
	if err != nil {
		t.Fatal(err)
	}
	var plan strings.Builder
	p.Print(&plan)
	t.Logf("plan:\n%s", plan.String())
	if len(p.Refusals) > 0 {
		t.Fatalf("refused: %q", p.Refusals)
	}
	if p.Image.ProducerIDs().NextProducerID < p.SnapshotProducerIDFloor {
		t.Errorf("producer ids from %d, below the partitions' %d", p.Image.ProducerIDs().NextProducerID, p.SnapshotProducerIDFloor)
	}
	if err := p.Write(); err != nil {
		t.Fatal(err)
	}

	addr := startVarve(t, k.data, p.NodeID)
	after := describe(t, ctx, addr)
	if diff := cmp.Diff(before, after, cmp.AllowUnexported(view{})); diff != "" {
		t.Errorf("Kafka's topics (-) and Varve's after the migration (+):\n%s", diff)
	}
	checkRecords(t, ctx, addr, "plain", kgo.ReadUncommitted(), 112, "")
	checkRecords(t, ctx, addr, "plain", kgo.ReadCommitted(), 107, "aborted-")
	checkRecords(t, ctx, addr, "compacted", kgo.ReadUncommitted(), 100, "")

	// A new idempotent producer appends every batch.
	produce(t, ctx, client(t, addr), "plain", "varve", 10)
	checkRecords(t, ctx, addr, "plain", kgo.ReadUncommitted(), 122, "")
}

// writeOnKafka creates the topics and produces: 100 records to each
// with an idempotent producer, a committed and an aborted transaction
// of 5 records to plain, then one record to each of plain's partitions
// after the abort, so that a read_committed reader has to pass the
// aborted records; and commits a group's offset.
func writeOnKafka(t *testing.T, ctx context.Context, addr string) {
	cl := client(t, addr)
	adm := kadm.NewClient(cl)
	for name, tp := range topics {
		configs := map[string]*string{}
		for k, v := range tp.configs {
			configs[k] = &v
		}
		if resp, err := adm.CreateTopic(ctx, tp.partitions, 1, configs, name); err != nil || resp.Err != nil {
			t.Fatalf("create %s: %v %v", name, err, resp.Err)
		}
	}
	produce(t, ctx, cl, "compacted", "key", 100)
	produce(t, ctx, cl, "plain", "idem", 100)
	txn := client(t, addr, kgo.TransactionalID("migrate-txn"), kgo.DefaultProduceTopic("plain"))
	for _, end := range []kgo.TransactionEndTry{kgo.TryCommit, kgo.TryAbort} {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		prefix := map[kgo.TransactionEndTry]string{kgo.TryCommit: "committed", kgo.TryAbort: "aborted"}[end]
		for i := range 5 {
			if err := txn.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "%s-%d", prefix, i)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := txn.EndTransaction(ctx, end); err != nil {
			t.Fatal(err)
		}
	}
	for part := range topics["plain"].partitions {
		r := &kgo.Record{Topic: "plain", Partition: part, Value: []byte("tail")}
		if err := client(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner())).ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: "plain", Partition: 0, At: 10, LeaderEpoch: -1})
	if resp, err := adm.CommitOffsets(ctx, "migrate-group", offsets); err != nil || resp.Error() != nil {
		t.Fatalf("commit offsets: %v %v", err, resp.Error())
	}
}

// view is what a client sees of a node's topics: ids, partition counts,
// override configs (DYNAMIC_TOPIC_CONFIG), and the group's offset.
type view struct {
	IDs         map[string]string
	Partitions  map[string]int
	Configs     map[string]map[string]string
	GroupOffset int64
}

func describe(t *testing.T, ctx context.Context, addr string) view {
	t.Helper()
	adm := kadm.NewClient(client(t, addr))
	names := append(sortedTopics(), "__consumer_offsets", "__transaction_state")
	v := view{IDs: map[string]string{}, Partitions: map[string]int{}, Configs: map[string]map[string]string{}}
	md, err := adm.ListTopics(ctx, names...)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range md {
		v.IDs[d.Topic], v.Partitions[d.Topic] = d.ID.String(), len(d.Partitions)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, names...)
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			t.Fatalf("describe configs %s: %v", rc.Name, rc.Err)
		}
		v.Configs[rc.Name] = map[string]string{}
		for _, c := range rc.Configs {
			if c.Source == kmsg.ConfigSourceDynamicTopicConfig {
				v.Configs[rc.Name][c.Key] = c.MaybeValue()
			}
		}
	}
	off, err := adm.FetchOffsets(ctx, "migrate-group")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := off.Lookup("plain", 0); ok {
		v.GroupOffset = o.At
	}
	return v
}

func sortedTopics() []string {
	var out []string
	for name := range maps.Keys(topics) {
		out = append(out, name)
	}
	return out
}

// checkRecords reads topic from the start until want records came and
// checks that none has a value starting with hidden ("" for none).
func checkRecords(t *testing.T, ctx context.Context, addr, topic string, iso kgo.IsolationLevel, want int, hidden string) {
	t.Helper()
	c := client(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(iso))
	defer c.Close()
	got := 0
	for got < want {
		fs := c.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%s: read %d of %d records", topic, got, want)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		for _, r := range fs.Records() {
			if hidden != "" && strings.HasPrefix(string(r.Value), hidden) {
				t.Errorf("%s/%d offset %d: %q, which read_committed must not see", topic, r.Partition, r.Offset, r.Value)
			}
			got++
		}
	}
	if got != want {
		t.Errorf("%s: read %d records, want %d", topic, got, want)
	}
}

func produce(t *testing.T, ctx context.Context, cl *kgo.Client, topic, prefix string, n int) {
	t.Helper()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k%d", i%10), Value: fmt.Appendf(nil, "%s-%d", prefix, i)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}
}

func client(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// waitReady waits for Kafka to answer Metadata with its broker.
func waitReady(t *testing.T, ctx context.Context, k *kafkaNode) {
	t.Helper()
	for {
		cl, err := kgo.NewClient(kgo.SeedBrokers(k.addr), kgo.RequestRetries(0))
		if err == nil {
			md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
			cl.Close()
			if err == nil && len(md.Brokers) > 0 {
				return
			}
		}
		if k.cmd.ProcessState != nil || ctx.Err() != nil {
			out, _ := os.ReadFile(k.out)
			t.Fatalf("Kafka did not start:\n%s", tail(string(out), 3000))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// startVarve starts a Varve node on Kafka's log dir as Kafka's node.
func startVarve(t *testing.T, logDir string, nodeID int32) string {
	t.Helper()
	cfg, err := config.Parse(map[string]string{"log.dirs": logDir, "node.id": fmt.Sprint(nodeID),
		"listeners": "PLAINTEXT://127.0.0.1:0", "varve.metrics.listener": ""})
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
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b.Shutdown(ctx)
	})
	return b.Addr().String()
}
