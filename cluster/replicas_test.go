package cluster_test

import (
	"context"
	"fmt"
	"log/slog"
	stdnet "net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
	"github.com/varve/varve/metadata"
	"github.com/varve/varve/record"
)

// testCluster is three Brokers in one process on 127.0.0.1, .2 and .3
// that follow one metadata publisher the test writes to, as they will
// follow the controller quorum's committed images; the test is also the
// controller that answers AlterPartition.
type testCluster struct {
	t       *testing.T
	pub     *metadata.Publisher
	mu      sync.Mutex // serialises changes of the image
	brokers map[int32]*cluster.Broker
	addrs   map[int32]string
	topicID metadata.TopicID
}

func freePort(t *testing.T, host string) int {
	ln, err := stdnet.Listen("tcp", host+":0")
	if err != nil {
		t.Skipf("cannot listen on %s: %v", host, err)
	}
	ln.Close()
	return testPort(t, host)
}

func newTestCluster(t *testing.T, topic string, props map[string]string) *testCluster {
	c := &testCluster{t: t, brokers: map[int32]*cluster.Broker{}, addrs: map[int32]string{}, topicID: metadata.TopicID{0xc1, 3}}
	recs := []metadata.Record{}
	cfgs := map[int32]*config.Broker{}
	for id := int32(1); id <= 3; id++ {
		host := fmt.Sprintf("127.0.0.%d", id)
		port := freePort(t, host)
		all := map[string]string{"node.id": strconv.Itoa(int(id)), "log.dirs": t.TempDir(), "listeners": fmt.Sprintf("PLAINTEXT://%s:%d", host, port),
			"varve.metrics.listener": "", "num.network.threads": "2", "num.io.threads": "4", "replica.fetch.backoff.ms": "50"}
		for k, v := range props {
			all[k] = v
		}
		cfg, err := config.Parse(all)
		if err != nil {
			t.Fatal(err)
		}
		cfgs[id] = cfg
		c.addrs[id] = stdnet.JoinHostPort(host, strconv.Itoa(port))
		recs = append(recs, metadata.RegisterBrokerRecord{BrokerID: id, BrokerEpoch: 100 + int64(id),
			Endpoints: []metadata.Endpoint{{Listener: "PLAINTEXT", Host: host, Port: int32(port), SecurityProtocol: "PLAINTEXT"}}})
	}
	recs = append(recs, metadata.TopicRecord{Name: topic, TopicID: c.topicID},
		metadata.PartitionRecord{TopicID: c.topicID, PartitionID: 0, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, Leader: 1},
		metadata.ProducerIdsRecord{BrokerID: 1, NextProducerID: 1 << 20})
	img, err := metadata.Apply(metadata.New("replicas-test"), recs...)
	if err != nil {
		t.Fatal(err)
	}
	c.pub = metadata.NewPublisher(img)
	for id := int32(1); id <= 3; id++ {
		b, err := cluster.New(cfgs[id], slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		b.UsePublisher(c.pub)
		b.SetControllerClient(c)
		if err := b.Start(); err != nil {
			t.Fatal(err)
		}
		c.brokers[id] = b
		t.Cleanup(func() { b.Shutdown(context.Background()) })
	}
	return c
}

// change applies records to the current image and publishes it.
func (c *testCluster) change(recs ...metadata.Record) *metadata.Image {
	c.mu.Lock()
	defer c.mu.Unlock()
	img, err := metadata.Apply(c.pub.Image(), recs...)
	if err != nil {
		c.t.Fatal(err)
	}
	c.pub.Publish(img)
	return img
}

// Do answers AlterPartition as the active controller (KIP-497): the
// leader and partition epochs must be the image's; the new ISR becomes
// a PartitionChangeRecord.
func (c *testCluster) Do(_ context.Context, req kmsg.Request) (kmsg.Response, error) {
	ap, ok := req.(*kmsg.AlterPartitionRequest)
	if !ok {
		return nil, fmt.Errorf("unexpected %T", req)
	}
	resp := ap.ResponseKind().(*kmsg.AlterPartitionResponse)
	c.mu.Lock()
	defer c.mu.Unlock()
	img := c.pub.Image()
	for _, rt := range ap.Topics {
		st := kmsg.NewAlterPartitionResponseTopic()
		st.TopidID = rt.TopicID
		for _, rp := range rt.Partitions {
			sp := kmsg.NewAlterPartitionResponseTopicPartition()
			sp.Partition = rp.Partition
			t, _ := img.TopicByID(rt.TopicID)
			p := t.Partitions[rp.Partition]
			switch {
			case rp.LeaderEpoch != p.LeaderEpoch:
				sp.ErrorCode = kerr.FencedLeaderEpoch.Code
			case rp.PartitionEpoch != p.PartitionEpoch:
				sp.ErrorCode = kerr.InvalidUpdateVersion.Code
			case slices.ContainsFunc(rp.NewEpochISR, func(e kmsg.AlterPartitionRequestTopicPartitionNewEpochISR) bool {
				br, ok := img.Broker(e.BrokerID)
				return !ok || br.Fenced || br.Epoch != e.BrokerEpoch
			}):
				sp.ErrorCode = kerr.IneligibleReplica.Code
			default:
				var isr []int32
				for _, e := range rp.NewEpochISR {
					isr = append(isr, e.BrokerID)
				}
				next, err := metadata.Apply(img, metadata.PartitionChangeRecord{TopicID: rt.TopicID, PartitionID: rp.Partition, Leader: metadata.NoLeaderChange, ISR: isr})
				if err != nil {
					return nil, err
				}
				img = next
				q, _ := next.TopicByID(rt.TopicID)
				p = q.Partitions[rp.Partition]
			}
			sp.LeaderID, sp.LeaderEpoch, sp.ISR, sp.PartitionEpoch = p.Leader, p.LeaderEpoch, p.ISR, p.PartitionEpoch
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	c.pub.Publish(img)
	return resp, nil
}

// fence fences a broker as the controller does when it stops
// heartbeating or shuts down, and takes it out of the ISR (Kafka's
// ReplicationControlManager.handleBrokerFenced).
func (c *testCluster) fence(id int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	img := c.pub.Image()
	br, _ := img.Broker(id)
	recs := []metadata.Record{metadata.FenceBrokerRecord{BrokerID: id, BrokerEpoch: br.Epoch}}
	p, _ := img.Partition("replicated", 0)
	if slices.Contains(p.ISR, id) {
		isr := slices.DeleteFunc(slices.Clone(p.ISR), func(x int32) bool { return x == id })
		recs = append(recs, metadata.PartitionChangeRecord{TopicID: c.topicID, PartitionID: 0, Leader: metadata.NoLeaderChange, ISR: isr})
	}
	next, err := metadata.Apply(img, recs...)
	if err != nil {
		c.t.Error(err)
		return
	}
	c.pub.Publish(next)
}

func (c *testCluster) seeds() []string {
	return []string{c.addrs[1], c.addrs[2], c.addrs[3]}
}

// Kafka: replication through the brokers' wire. A kgo producer (acks=all,
// idempotent) writes to a partition replicated on three brokers; the
// metadata then moves the leadership to broker 2 (a PartitionChangeRecord,
// as the controller writes when a leader dies) and broker 1 stops; the
// producer follows (KIP-951) and goes on, and every acknowledged record
// is on the new leader and its follower, once.
func TestReplicatedPartitionSurvivesLeaderMove(t *testing.T) {
	const topic = "replicated"
	c := newTestCluster(t, topic, map[string]string{"min.insync.replicas": "2"})
	prod := client(t, c.addrs[1], kgo.SeedBrokers(c.seeds()...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()))
	var acked []string
	produce := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			v := fmt.Sprintf("v%04d", i)
			cx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := prod.ProduceSync(cx, &kgo.Record{Value: []byte(v), Partition: 0}).FirstErr()
			cancel()
			if err != nil {
				t.Fatalf("produce %s: %v", v, err)
			}

			acked = append(acked, v)
		}
	}
	start := time.Now()
	produce(0, 100)
	t.Logf("100 acks=all records in %v", time.Since(start))
	if p := c.brokers[1].PartitionReplica(topic, 0); p.HighWatermark() != 100 {
		t.Fatalf("leader high watermark %d after 100 acks=all records", p.HighWatermark())
	}
	for _, id := range []int32{2, 3} { // acks=all: both followers have them
		if p := c.brokers[id].PartitionReplica(topic, 0); p.EndOffset() < 100 {
			t.Fatalf("follower %d has %d records after 100 acks=all", id, p.EndOffset())
		}
	}

	done := make(chan struct{})
	go func() { // the leader moves while the producer runs
		defer close(done)
		time.Sleep(50 * time.Millisecond)
		c.change(metadata.PartitionChangeRecord{TopicID: c.topicID, PartitionID: 0, Leader: 2, ISR: []int32{2, 3}})
		// Broker 1 learns it no longer leads, then stops (Kafka's
		// controlled shutdown moves leaderships first, KIP-841).
		for c.brokers[1].PartitionReplica(topic, 0).IsLeader() {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
		c.fence(1)
		c.brokers[1].Shutdown(context.Background())
	}()
	start = time.Now()
	produce(100, 300)
	<-done
	t.Logf("200 records across the leader move in %v", time.Since(start))
	produce(300, 350)

	leader := c.brokers[2].PartitionReplica(topic, 0)
	if role, s := leader.State(); s.Leader != 2 || s.LeaderEpoch != 1 || role.String() != "leader" {
		t.Fatalf("broker 2: %s of %+v", role, s)
	}
	waitUntil(t, "broker 3 to catch up", func() bool {
		return c.brokers[3].PartitionReplica(topic, 0).EndOffset() == leader.EndOffset()
	})
	want := logValues(t, c.brokers[2], topic)
	for _, id := range []int32{2, 3} {
		got := logValues(t, c.brokers[id], topic)
		if !slices.Equal(got, want) {
			t.Fatalf("broker %d's log differs from the leader's: %d and %d records", id, len(got), len(want))
		}
		for _, v := range acked {
			if n := countOf(got, v); n != 1 {
				t.Fatalf("broker %d holds acknowledged %s %d times (of %d records)", id, v, n, len(got))
			}
		}
	}
	// A consumer of the new leader sees them all.
	cons := client(t, c.addrs[2], kgo.SeedBrokers(c.seeds()[1:]...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	var seen []string
	cx := ctx(t)
	for len(seen) < len(want) {
		fs := cons.PollFetches(cx)
		if cx.Err() != nil {
			t.Fatalf("consumed %d of %d records", len(seen), len(want))
		}
		fs.EachRecord(func(r *kgo.Record) { seen = append(seen, string(r.Value)) })
	}
	if !slices.Equal(seen, want) {
		t.Fatalf("consumer read %d records, the log holds %d", len(seen), len(want))
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// logValues lists the record values of a broker's replica, read from
// its log.
func logValues(t *testing.T, b *cluster.Broker, topic string) []string {
	t.Helper()
	p := b.PartitionReplica(topic, 0)
	var out []string
	for off := p.StartOffset(); off < p.EndOffset(); {
		buf, err := p.ReadBytes(off, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		for rec, err := range record.Records(buf) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(rec.Value))
			off = rec.Offset + 1
		}
	}
	return out
}

func countOf(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

// Kafka: a Fetch is a follower's when it names a replica id (ReplicaState
// from v15, ReplicaID before), never by client id; a broker that is not
// assigned the partition is refused with NOT_LEADER_OR_FOLLOWER. A
// consumer's CurrentLeaderEpoch is fenced (KIP-320), ListOffsets checks
// it too, and OffsetForLeaderEpoch answers from the leader-epoch cache.
func TestReplicaFetchFromANonReplicaIsRefused(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	createTopic(t, b.addr, "solo", 1, nil)
	c := client(t, b.addr)
	produceSync(t, c, &kgo.Record{Topic: "solo", Value: []byte("x")})
	id := topicID(t, c, "solo")

	fetch := func(version int16, replicaID, leaderEpoch int32) int16 {
		t.Helper()
		req := kmsg.NewPtrFetchRequest()
		req.SetVersion(version)
		if version >= 15 {
			req.ReplicaState.ID, req.ReplicaState.Epoch = replicaID, 1
		} else {
			req.ReplicaID = replicaID
		}
		req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 0, 1, 1<<20
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = "solo", id
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = 0, 0, 1<<20, leaderEpoch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		versions := kversion.Stable()
		versions.SetMaxKeyVersion(kmsg.Fetch.Int16(), version) // kgo sends the highest version both sides know
		vc := client(t, b.addr, kgo.MaxVersions(versions))
		resp, err := req.RequestWith(ctx(t), vc)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Version != version {
			t.Fatalf("sent v%d, want v%d", resp.Version, version)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	for _, v := range []int16{12, 17} {
		if code := fetch(v, 42, -1); code != kerr.NotLeaderForPartition.Code {
			t.Fatalf("v%d replica fetch from broker 42: error %d, want NOT_LEADER_OR_FOLLOWER", v, code)
		}
		if code := fetch(v, -1, 0); code != 0 {
			t.Fatalf("v%d consumer fetch: error %d", v, code)
		}
		if code := fetch(v, -1, 5); code != kerr.UnknownLeaderEpoch.Code {
			t.Fatalf("v%d consumer with a future epoch: error %d", v, code)
		}
	}

	lo := kmsg.NewPtrListOffsetsRequest()
	lo.SetVersion(7)
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "solo"
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Partition, lp.Timestamp, lp.CurrentLeaderEpoch = 0, -1, 3
	lt.Partitions = append(lt.Partitions, lp)
	lo.Topics = append(lo.Topics, lt)
	lresp, err := lo.RequestWith(ctx(t), c)
	if err != nil {
		t.Fatal(err)
	}
	if code := lresp.Topics[0].Partitions[0].ErrorCode; code != kerr.UnknownLeaderEpoch.Code {
		t.Fatalf("ListOffsets with a future epoch: error %d", code)
	}

	oe := kmsg.NewPtrOffsetForLeaderEpochRequest()
	oe.SetVersion(4)
	oe.ReplicaID = -1
	ot := kmsg.NewOffsetForLeaderEpochRequestTopic()
	ot.Topic = "solo"
	op := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	op.Partition, op.CurrentLeaderEpoch, op.LeaderEpoch = 0, 0, 0
	ot.Partitions = append(ot.Partitions, op)
	oe.Topics = append(oe.Topics, ot)
	oresp, err := oe.RequestWith(ctx(t), c)
	if err != nil {
		t.Fatal(err)
	}
	if p := oresp.Topics[0].Partitions[0]; p.ErrorCode != 0 || p.LeaderEpoch != 0 || p.EndOffset != 1 {
		t.Fatalf("OffsetForLeaderEpoch of the current epoch: %+v, want epoch 0 ending at the log end 1", p)
	}
}

func topicID(t *testing.T, c *kgo.Client, topic string) [16]byte {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = &topic
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx(t), c)
	if err != nil || len(resp.Topics) != 1 {
		t.Fatalf("metadata: %v", err)
	}
	return resp.Topics[0].TopicID
}
