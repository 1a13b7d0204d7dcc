package cluster

import (
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// Kafka: KIP-599 token bucket. The burst is rate × window.num ×
// window.size; a strict check admits while the bucket is not below zero
// (so one mutation may overdraw it) and refuses after; the bucket
// refills at rate; a permissive check only records.
func TestMutationQuotaTokenBucket(t *testing.T) {
	c := &fakeClock{t: time.Unix(0, 0)}
	q := newMutationQuota(10, 11, time.Second, c.now) // burst 110
	if !q.admit(100, true) || !q.admit(15, true) {
		t.Fatal("the burst was refused")
	}
	if q.admit(1, true) {
		t.Fatal("admitted below zero")
	}
	if got := q.throttle(); got != 500*time.Millisecond {
		t.Fatalf("throttle %v, want 500ms (5 tokens owed at 10/s)", got)
	}
	if !q.admit(1, false) {
		t.Fatal("a permissive check refused")
	}
	c.t = c.t.Add(600 * time.Millisecond) // -6 + 6 = 0
	if !q.admit(1, true) {
		t.Fatal("refused after the debt was repaid")
	}
	c.t = c.t.Add(time.Hour)
	q.admit(0, true)
	if q.tokens != q.burst {
		t.Fatalf("refilled to %v, want the burst %v", q.tokens, q.burst)
	}
	if newMutationQuota(0, 11, time.Second, c.now) != nil {
		t.Fatal("rate 0 must turn the quota off")
	}
}

// Kafka: KIP-599. CreateTopics v6+ (CreatePartitions v3+, DeleteTopics
// v5+) answer THROTTLING_QUOTA_EXCEEDED beyond the quota, with the
// throttle time; older versions are not refused.
func TestCreateTopicsBeyondQuotaIsThrottled(t *testing.T) {
	b := openTestBroker(t, t.TempDir(), map[string]string{"varve.controller.mutation.rate": "1", "controller.quota.window.num": "5"})
	defer closeTestBroker(t, b)
	create := func(version int16, name string, partitions int32) *kmsg.CreateTopicsResponse {
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, 1
		req.Topics = append(req.Topics, rt)
		req.SetVersion(version)
		return serveCreateTopics(b, &vnet.Request{Version: version}, req, nil).(*kmsg.CreateTopicsResponse)
	}
	if r := create(7, "a", 6); r.Topics[0].ErrorCode != 0 { // burst 5: admitted, overdrawn by 1
		t.Fatalf("first: %v", kerr.ErrorForCode(r.Topics[0].ErrorCode))
	}
	r := create(7, "b", 1)
	if r.Topics[0].ErrorCode != kerr.ThrottlingQuotaExceeded.Code || r.ThrottleMillis <= 0 {
		t.Fatalf("beyond the quota at v7: %v, throttle %d", kerr.ErrorForCode(r.Topics[0].ErrorCode), r.ThrottleMillis)
	}
	if _, ok := b.meta.image().Topic("b"); ok {
		t.Fatal("a throttled topic was created")
	}
	if r := create(5, "c", 1); r.Topics[0].ErrorCode != 0 {
		t.Fatalf("v5 must not be refused: %v", kerr.ErrorForCode(r.Topics[0].ErrorCode))
	}
}

// Kafka: KIP-599 bounds what clients make the controller create. A
// Metadata request naming 3,000 unknown topics with auto-creation on
// used to create all of them, rewriting the metadata file once per
// topic (90 s). Now the topics of the request are written in one
// persist, those beyond the default quota are left uncreated and
// answered LEADER_NOT_AVAILABLE (retriable), and the request returns
// quickly.
func TestMetadataAutoCreateStormIsBounded(t *testing.T) {
	b := openTestBroker(t, t.TempDir(), nil)
	defer closeTestBroker(t, b)
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = true
	for i := range 3000 {
		rt := kmsg.NewMetadataRequestTopic()
		name := "storm-" + strconv.Itoa(i)
		rt.Topic = &name
		req.Topics = append(req.Topics, rt)
	}
	req.SetVersion(12)
	writes := b.meta.writes.Load()
	start := time.Now()
	resp := serveMetadata(b, &vnet.Request{Version: 12}, req, nil).(*kmsg.MetadataResponse)
	took := time.Since(start)
	if w := b.meta.writes.Load() - writes; w != 1 {
		t.Errorf("%d metadata file writes for one request, want 1", w)
	}
	created, refused := 0, 0
	for _, mt := range resp.Topics {
		switch mt.ErrorCode {
		case 0:
			created++
		case kerr.LeaderNotAvailable.Code:
			refused++
		default:
			t.Fatalf("%s: %v", *mt.Topic, kerr.ErrorForCode(mt.ErrorCode))
		}
	}
	// Default: 100 partitions/s, burst 100 × 11 × 1 s, one partition each.
	if created < 1100 || created > 1200 || created+refused != 3000 {
		t.Errorf("%d created, %d refused; want the burst of 1,100 (and a few refilled) created", created, refused)
	}
	if b.meta.image().NumTopics() != created {
		t.Errorf("image holds %d topics, %d answered as created", b.meta.image().NumTopics(), created)
	}
	t.Logf("3,000 unknown topics: %d created, %d refused, in %v", created, refused, took)
	if took > 60*time.Second {
		t.Errorf("took %v", took)
	}
}
