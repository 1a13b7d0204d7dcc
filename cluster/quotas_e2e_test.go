package cluster_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func strp(s string) *string { return &s }

// Kafka: KIP-546. kafka-configs --alter --add-config
// producer_byte_rate=... --entity-type clients (and users, and their
// defaults) sends AlterClientQuotas; --describe sends
// DescribeClientQuotas with exact, default and any matches. Values
// survive a restart (they are metadata); a bad key is INVALID_REQUEST
// for its entry alone.
func TestClientQuotasAlterDescribe(t *testing.T) {
	dir := t.TempDir()
	node := startBroker(t, dir, nil)
	adm := kadm.NewClient(client(t, node.addr))
	clientApp := kadm.ClientQuotaEntity{{Type: "client-id", Name: strp("app")}}
	userDefault := kadm.ClientQuotaEntity{{Type: "user"}}
	aliceApp := kadm.ClientQuotaEntity{{Type: "user", Name: strp("alice")}, {Type: "client-id", Name: strp("app")}}
	altered, err := adm.AlterClientQuotas(ctx(t), []kadm.AlterClientQuotaEntry{
		{Entity: clientApp, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1 << 20}}},
		{Entity: userDefault, Ops: []kadm.AlterClientQuotaOp{{Key: "consumer_byte_rate", Value: 2 << 20}, {Key: "request_percentage", Value: 50}}},
		{Entity: aliceApp, Ops: []kadm.AlterClientQuotaOp{{Key: "controller_mutation_rate", Value: 2.5}}},
		{Entity: clientApp, Ops: []kadm.AlterClientQuotaOp{{Key: "fetch_bytes", Value: 1}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range altered[:3] {
		if a.Err != nil {
			t.Fatalf("entry %d: %v %s", i, a.Err, a.ErrMessage)
		}
	}
	if !errors.Is(altered[3].Err, kerr.InvalidRequest) {
		t.Fatalf("unknown key: %v", altered[3].Err)
	}
	describe := func(strict bool, comps ...kadm.DescribeClientQuotaComponent) []string {
		t.Helper()
		qs, err := adm.DescribeClientQuotas(ctx(t), strict, comps)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, q := range qs {
			out = append(out, q.Entity.String()+" "+q.Values[0].String())
		}
		return out
	}
	check := func(name string, got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %q, want %q", name, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: %q, want %q", name, got, want)
			}
		}
	}
	run := func() {
		check("exact client-id", describe(false, kadm.DescribeClientQuotaComponent{Type: "client-id", MatchName: strp("app")}),
			"{client-id=app} producer_byte_rate=1048576.000000",
			"{user=alice, client-id=app} controller_mutation_rate=2.500000")
		check("exact client-id, strict", describe(true, kadm.DescribeClientQuotaComponent{Type: "client-id", MatchName: strp("app")}),
			"{client-id=app} producer_byte_rate=1048576.000000")
		check("default user", describe(false, kadm.DescribeClientQuotaComponent{Type: "user", MatchType: 1}),
			"{user=<default>} consumer_byte_rate=2097152.000000")
		check("any user", describe(false, kadm.DescribeClientQuotaComponent{Type: "user", MatchType: 2}),
			"{user=<default>} consumer_byte_rate=2097152.000000",
			"{user=alice, client-id=app} controller_mutation_rate=2.500000")
		check("everything", describe(false), "{client-id=app} producer_byte_rate=1048576.000000",
			"{user=<default>} consumer_byte_rate=2097152.000000",
			"{user=alice, client-id=app} controller_mutation_rate=2.500000")
	}
	run()
	_, err = adm.DescribeClientQuotas(ctx(t), false, []kadm.DescribeClientQuotaComponent{{Type: "user", MatchType: 1}, {Type: "user", MatchType: 2}})
	if !errors.Is(err, kerr.InvalidRequest) {
		t.Fatalf("a type twice: %v", err)
	}
	node.stop(t)
	node = startBroker(t, dir, map[string]string{"listeners": "PLAINTEXT://" + node.addr})
	adm = kadm.NewClient(client(t, node.addr))
	run()
	// Removing a value; an entity left without values is gone.
	if _, err := adm.AlterClientQuotas(ctx(t), []kadm.AlterClientQuotaEntry{{Entity: clientApp,
		Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Remove: true}}}}); err != nil {
		t.Fatal(err)
	}
	check("after removal", describe(true, kadm.DescribeClientQuotaComponent{Type: "client-id", MatchName: strp("app")}))
}

// produceFor produces 16 KiB records as clientID for d or until limit
// bytes are acknowledged, and returns the bytes acknowledged within d,
// the time they took and the throttles the broker reported.
func produceFor(t *testing.T, addr, topic, clientID string, d time.Duration, limit int64) (int64, time.Duration, int64) {
	t.Helper()
	var throttles atomic.Int64
	cl := client(t, addr, kgo.ClientID(clientID), kgo.DefaultProduceTopic(topic), kgo.ProducerBatchMaxBytes(128<<10),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.MaxBufferedRecords(32), kgo.WithHooks(throttleHook{&throttles}))
	var acked atomic.Int64
	var last atomic.Int64 // nanoseconds from start to the last acknowledgement counted
	start := time.Now()
	c, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	value := make([]byte, 16<<10)
	for c.Err() == nil && acked.Load() < limit {
		cl.Produce(c, &kgo.Record{Value: value}, func(r *kgo.Record, err error) {
			if el := time.Since(start); err == nil && el <= d {
				acked.Add(int64(len(r.Value)))
				last.Store(int64(el))
			}
		})
	}
	cl.Flush(context.Background())
	took := time.Duration(last.Load())
	if acked.Load() < limit {
		took = d
	}
	return acked.Load(), took, throttles.Load()
}

type throttleHook struct{ n *atomic.Int64 }

func (h throttleHook) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) {
	if d > 0 {
		h.n.Add(1)
	}
}

// Kafka: KIP-13 and KIP-219. A client id with a 1 MB/s
// producer_byte_rate is held near that rate (under twice the quota over
// 5 s: the rate is measured over quota.window.num windows, which allows
// a first burst of (num-1) windows' worth), the broker reports the
// throttle time, and another client id on the same broker is not
// throttled at all.
func TestProducerByteRateQuota(t *testing.T) {
	node := startBroker(t, t.TempDir(), map[string]string{"quota.window.num": "3"})
	createTopic(t, node.addr, "quota-produce", 1, nil)
	adm := kadm.NewClient(client(t, node.addr))
	const quota = 1 << 20
	if _, err := adm.AlterClientQuotas(ctx(t), []kadm.AlterClientQuotaEntry{{Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: strp("slow")}},
		Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: quota}}}}); err != nil {
		t.Fatal(err)
	}
	const d = 5 * time.Second
	var fast, fastThrottles int64
	var fastTook time.Duration
	done := make(chan struct{})
	go func() {
		defer close(done)
		fast, fastTook, fastThrottles = produceFor(t, node.addr, "quota-produce", "fast", d, 8*quota)
	}()
	slow, _, slowThrottles := produceFor(t, node.addr, "quota-produce", "slow", d, 1<<40)
	<-done
	slowRate, fastRate := float64(slow)/d.Seconds(), float64(fast)/fastTook.Seconds()
	t.Logf("slow: %.0f B/s (%d throttles); fast: %.0f B/s (%d throttles)", slowRate, slowThrottles, fastRate, fastThrottles)
	if slowRate > 2*quota || slowRate < quota/4 {
		t.Errorf("the client with a %d B/s quota produced %.0f B/s", quota, slowRate)
	}
	if slowThrottles == 0 || fastThrottles != 0 {
		t.Errorf("throttles reported: slow %d, fast %d", slowThrottles, fastThrottles)
	}
	if fastRate < 4*quota {
		t.Errorf("the client without a quota produced only %.0f B/s", fastRate)
	}
}

// Kafka: KIP-13 and KIP-219 for consumers. A client id with a
// consumer_byte_rate is throttled once its fetches pass it: reading 6
// MiB at 1 MiB/s (after the first burst of 2 windows) takes seconds, and
// the broker reports throttles; the same read by another client id
// takes far less and is not throttled.
func TestConsumerByteRateQuota(t *testing.T) {
	node := startBroker(t, t.TempDir(), map[string]string{"quota.window.num": "3"})
	createTopic(t, node.addr, "quota-fetch", 1, nil)
	p := client(t, node.addr, kgo.DefaultProduceTopic("quota-fetch"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	value := make([]byte, 64<<10)
	const records = 96 // 6 MiB
	for range records {
		p.Produce(ctx(t), &kgo.Record{Value: value}, nil)
	}
	if err := p.Flush(ctx(t)); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(client(t, node.addr))
	if _, err := adm.AlterClientQuotas(ctx(t), []kadm.AlterClientQuotaEntry{{Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: strp("reader")}},
		Ops: []kadm.AlterClientQuotaOp{{Key: "consumer_byte_rate", Value: 1 << 20}}}}); err != nil {
		t.Fatal(err)
	}
	read := func(clientID string) (time.Duration, int64) {
		var throttles atomic.Int64
		cl := client(t, node.addr, kgo.ClientID(clientID), kgo.ConsumeTopics("quota-fetch"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.FetchMaxPartitionBytes(256<<10), kgo.WithHooks(throttleHook{&throttles}))
		start := time.Now()
		n := 0
		for n < records {
			fs := cl.PollFetches(ctx(t))
			if err := fs.Err0(); err != nil {
				t.Fatal(err)
			}
			n += fs.NumRecords()
		}
		return time.Since(start), throttles.Load()
	}
	free, freeThrottles := read("free")
	limited, limitedThrottles := read("reader")
	t.Logf("free: %v (%d throttles); limited: %v (%d throttles)", free, freeThrottles, limited, limitedThrottles)
	if limited < 2*time.Second || limitedThrottles == 0 || freeThrottles != 0 {
		t.Errorf("6 MiB at 1 MiB/s took %v with %d throttles; without a quota %v with %d", limited, limitedThrottles, free, freeThrottles)
	}
}

// Kafka: KIP-546 through KIP-590 in a cluster. AlterClientQuotas sent
// to any broker reaches the active controller, and the answer leaves
// once that broker's image shows the change: DescribeClientQuotas on the
// same broker sees it at once, and every other broker soon after.
func TestClusterClientQuotas(t *testing.T) {
	tc := startQuorumCluster(t, 3, nil)
	tc.waitBrokers(3)
	adm := kadm.NewClient(client(t, tc.addrs[1]))
	ent := kadm.ClientQuotaEntity{{Type: "user", Name: strp("alice")}, {Type: "client-id"}}
	altered, err := adm.AlterClientQuotas(ctx(t), []kadm.AlterClientQuotaEntry{
		{Entity: ent, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 4096}}},
		{Entity: ent, Ops: []kadm.AlterClientQuotaOp{{Key: "producer_byte_rate", Value: 1.5}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if altered[0].Err != nil || !errors.Is(altered[1].Err, kerr.InvalidRequest) {
		t.Fatalf("altered %+v", altered)
	}
	described := func(addr string) string {
		qs, err := kadm.NewClient(client(t, addr)).DescribeClientQuotas(ctx(t), true, []kadm.DescribeClientQuotaComponent{
			{Type: "user", MatchName: strp("alice")}, {Type: "client-id", MatchType: 1}})
		if err != nil || len(qs) != 1 {
			return fmt.Sprint(qs, err)
		}
		return qs[0].Values[0].String()
	}
	if got := described(tc.addrs[1]); got != "producer_byte_rate=4096.000000" {
		t.Fatalf("the broker that answered: %s", got)
	}
	for _, addr := range tc.addrs {
		waitWithin(t, 10*time.Second, "the quota on "+addr, func() bool { return described(addr) == "producer_byte_rate=4096.000000" })
	}
}

// Kafka: KIP-124. request_percentage bounds the handler time of a
// client's requests (100 is one handler busy all the time): a client id
// with a tiny one is throttled, through throttle_time_ms of responses
// that have one (DescribeCluster here, which the client never answers
// from a cache as it may Metadata), and another is not.
func TestRequestPercentageQuota(t *testing.T) {
	node := startBroker(t, t.TempDir(), map[string]string{"quota.window.num": "3"})
	adm := kadm.NewClient(client(t, node.addr))
	if _, err := adm.AlterClientQuotas(ctx(t), []kadm.AlterClientQuotaEntry{{Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: strp("busy")}},
		Ops: []kadm.AlterClientQuotaOp{{Key: "request_percentage", Value: 0.001}}}}); err != nil {
		t.Fatal(err)
	}
	// The bound is 0.001% of one handler over a 2 s span at least, 20 µs
	// of handler time: a client that keeps asking passes it after some
	// requests, how many depends on how fast this machine answers one.
	// It is sent up to 2,000 and must be throttled before the end; the
	// other client sends as many and never is.
	maxThrottle := func(clientID string) (int32, int) {
		cl := client(t, node.addr, kgo.ClientID(clientID))
		var most int32
		n := 0
		for n < 2000 && most == 0 {
			resp, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(ctx(t), cl)
			if err != nil {
				t.Fatal(err)
			}
			most = max(most, resp.ThrottleMillis)
			n++
		}
		return most, n
	}
	busy, n := maxThrottle("busy")
	if busy == 0 {
		t.Fatalf("busy: no throttle_time_ms in %d requests", n)
	}
	if idle, m := maxThrottle("idle"); idle != 0 {
		t.Fatalf("idle: throttle_time_ms %d after %d requests", idle, m)
	}
	t.Logf("busy throttled %d ms after %d requests", busy, n)
}

// Kafka: DescribeClientQuotas' entries are null only with an error; an
// answer that matches nothing is an empty list. Kafka's Java admin
// client fails on a null one (kafka-configs --describe --entity-type
// clients stopped with a NullPointerException), so the bytes on the
// wire must hold a length of 0, not -1.
func TestDescribeClientQuotasNoMatchIsEmptyNotNull(t *testing.T) {
	node := startBroker(t, t.TempDir(), nil)
	req := kmsg.NewPtrDescribeClientQuotasRequest()
	c := kmsg.NewDescribeClientQuotasRequestComponent()
	c.EntityType, c.MatchType, c.Match = "client-id", 0, strp("nobody")
	req.Components = append(req.Components, c)
	for _, v := range []int16{0, 1} {
		req.SetVersion(v)
		raw, err := rawResponse(t, node.addr, req)
		if err != nil {
			t.Fatal(err)
		}
		// throttle_time_ms int32, error_code int16, error_message
		// nullable string (null), then the entries' length.
		rd := kbin.Reader{Src: raw}
		rd.Int32()
		if code := rd.Int16(); code != 0 {
			t.Fatalf("v%d: error %d", v, code)
		}
		var n int32
		if v >= 1 {
			rd.CompactNullableString()
			n = rd.CompactArrayLen()
		} else {
			rd.NullableString()
			n = rd.ArrayLen()
		}
		if n != 0 {
			t.Errorf("v%d: entries length %d, want 0 (an empty list)", v, n)
		}
	}
}

// rawResponse sends req on a fresh connection and returns the body of
// its response, after the header (correlation id, and for a flexible
// version its tagged fields).
func rawResponse(t *testing.T, addr string, req kmsg.Request) ([]byte, error) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(frame(req.Key(), req.GetVersion(), req.AppendTo(nil))); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		return nil, err
	}
	body = body[4:] // correlation id
	if req.IsFlexible() {
		body = body[1:] // no tagged fields
	}
	return body, nil
}

// Kafka: KIP-599's controller_mutation_rate, set per client id through
// AlterClientQuotas, throttles that client's topic and partition
// creations and deletions (CreateTopics v6+: THROTTLING_QUOTA_EXCEEDED
// with the throttle time), and only that client's: another client id
// creates topics meanwhile.
func TestControllerMutationRatePerClient(t *testing.T) {
	node := startBroker(t, t.TempDir(), map[string]string{"controller.quota.window.num": "2"})
	adm := kadm.NewClient(client(t, node.addr))
	altered, err := adm.AlterClientQuotas(ctx(t), []kadm.AlterClientQuotaEntry{{
		Entity: kadm.ClientQuotaEntity{{Type: "client-id", Name: strp("slow")}},
		Ops:    []kadm.AlterClientQuotaOp{{Key: "controller_mutation_rate", Value: 1}},
	}})
	if err != nil || altered[0].Err != nil {
		t.Fatalf("AlterClientQuotas: %v %v", err, altered)
	}
	create := func(cl *kgo.Client, name string, partitions int32) (int16, int32) {
		t.Helper()
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, 1
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].ErrorCode, resp.ThrottleMillis
	}
	slow := client(t, node.addr, kgo.ClientID("slow"))
	fast := client(t, node.addr, kgo.ClientID("fast"))
	// A burst of 2 partitions (rate 1 × 2 windows of 1 s): 3 are
	// admitted and overdraw it; the next creation waits.
	if code, _ := create(slow, "slow-1", 3); code != 0 {
		t.Fatalf("first creation: %v", kerr.ErrorForCode(code))
	}
	// Another client with the same id, which has not been told to wait
	// (franz-go holds back a client that was answered a throttle time).
	slowAgain := client(t, node.addr, kgo.ClientID("slow"))
	code, throttle := create(slowAgain, "slow-2", 1)
	if code != kerr.ThrottlingQuotaExceeded.Code || throttle <= 0 {
		t.Fatalf("beyond its quota: %v, throttle %d ms", kerr.ErrorForCode(code), throttle)
	}
	for i := range 3 {
		if code, _ := create(fast, fmt.Sprintf("fast-%d", i), 3); code != 0 {
			t.Fatalf("another client id: %v", kerr.ErrorForCode(code))
		}
	}
}
