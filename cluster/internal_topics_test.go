package cluster_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/record"
)

// Kafka: ReplicaManager.appendToLocalLog refuses a client's append to an
// internal topic with INVALID_TOPIC_EXCEPTION ("Cannot append to internal
// topic"): a forged commit would rewind a group's offsets at its next load.
func TestProduceToInternalTopicIsRefused(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	cl := client(t, b.addr)
	adm := kadm.NewClient(cl)
	if err := adm.FindGroupCoordinators(ctx(t), "g").Error(); err != nil { // creates __consumer_offsets
		t.Fatal(err)
	}
	forged := batchOf(t, record.CompressionNone, record.Record{Key: []byte{0, 1, 0, 1, 'g'}, Value: []byte{0, 3}})
	if sp := produceRaw(t, cl, "__consumer_offsets", forged, nil); sp.ErrorCode != kerr.InvalidTopicException.Code {
		t.Fatalf("produce to __consumer_offsets: %v", kerr.ErrorForCode(sp.ErrorCode))
	}
	if end := endOffset(t, cl, "__consumer_offsets"); end != 0 {
		t.Fatalf("forged commit appended: end offset %d", end)
	}
	// A kgo producer sees the same refusal.
	p := client(t, b.addr, kgo.DefaultProduceTopic("__consumer_offsets"), kgo.RecordRetries(1))
	err := p.ProduceSync(ctx(t), &kgo.Record{Key: []byte("k"), Value: []byte("v")}).FirstErr()
	if err == nil {
		t.Fatal("a client produced to __consumer_offsets")
	}
}

// Kafka: ControllerApis.createTopics refuses __cluster_metadata with
// INVALID_REQUEST, an existing topic is TOPIC_ALREADY_EXISTS; Varve also
// keeps the creation of __consumer_offsets and __transaction_state to
// itself.
func TestCreateInternalTopicIsRefused(t *testing.T) {
	b := startBroker(t, t.TempDir(), nil)
	cl := client(t, b.addr)
	if err := kadm.NewClient(cl).FindGroupCoordinators(ctx(t), "g").Error(); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]*kerr.Error{
		"__cluster_metadata":  kerr.InvalidRequest,
		"__transaction_state": kerr.InvalidRequest,
		"__consumer_offsets":  kerr.TopicAlreadyExists,
	} {
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 3, 1
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		if code := resp.Topics[0].ErrorCode; code != want.Code {
			t.Errorf("create %s: %v, want %v", name, kerr.ErrorForCode(code), want)
		}
	}
}
