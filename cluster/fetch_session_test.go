package cluster_test

import (
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sessionFetch is a consumer's Fetch (v13+: kgo sends its highest) of partitions 0..n-1 of the
// topic with id, at offset 0, that does not wait.
func sessionFetch(id [16]byte, session, epoch int32, parts ...int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(13)
	req.ReplicaID, req.MaxBytes, req.SessionID, req.SessionEpoch = -1, 1<<20, session, epoch
	rt := kmsg.NewFetchRequestTopic()
	rt.TopicID = id
	for _, p := range parts {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = p, 1<<20, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	if len(parts) > 0 {
		req.Topics = append(req.Topics, rt)
	}
	return req
}

func answered(resp *kmsg.FetchResponse) []int32 {
	var out []int32
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out = append(out, p.Partition)
		}
	}
	return out
}

// Kafka: KIP-227. A full fetch opens a session; an incremental fetch
// that names nothing is still served over the whole session and
// answered with only the partitions that have something new; wrong
// epochs and unknown sessions are refused at the top level.
func TestFetchSessionOnTheWire(t *testing.T) {
	tb := startBroker(t, t.TempDir(), nil)
	createTopic(t, tb.addr, "sess", 3, nil)
	cl := client(t, tb.addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	id := topicID(t, cl, "sess")
	do := func(req *kmsg.FetchRequest) *kmsg.FetchResponse {
		t.Helper()
		resp, err := req.RequestWith(ctx(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	full := do(sessionFetch(id, 0, 0, 0, 1, 2))
	if full.SessionID == 0 || len(answered(full)) != 3 {
		t.Fatalf("full fetch: session %d, partitions %v", full.SessionID, answered(full))
	}
	sid := full.SessionID
	if r := do(sessionFetch(id, sid, 1)); r.ErrorCode != 0 || r.SessionID != sid || len(r.Topics) != 0 {
		t.Fatalf("quiet incremental fetch: error %d session %d partitions %v", r.ErrorCode, r.SessionID, answered(r))
	}
	produceSync(t, cl, &kgo.Record{Topic: "sess", Partition: 1, Value: []byte("x")})
	r := do(sessionFetch(id, sid, 2))
	if got := answered(r); len(got) != 1 || got[0] != 1 || len(r.Topics[0].Partitions[0].RecordBatches) == 0 {
		t.Fatalf("incremental fetch after a produce to partition 1: %v", got)
	}
	if r := do(sessionFetch(id, sid, 2)); r.ErrorCode != kerr.InvalidFetchSessionEpoch.Code {
		t.Fatalf("a replayed epoch: error %d, want INVALID_FETCH_SESSION_EPOCH", r.ErrorCode)
	}
	if r := do(sessionFetch(id, sid+1, 1)); r.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("an unknown session: error %d, want FETCH_SESSION_ID_NOT_FOUND", r.ErrorCode)
	}
	// kgo sends the broker's highest version; v12 goes on a raw connection.
	req := sessionFetch(id, sid, 3)
	req.SetVersion(12)
	req.Topics = nil
	c := dial(t, tb.addr)
	if _, err := c.Write(frame(kmsg.Fetch.Int16(), 12, req.AppendTo(nil))); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(15 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatal(err)
	}
	r12 := kmsg.NewPtrFetchResponse()
	r12.SetVersion(12)
	if err := r12.ReadFrom(buf[5:]); err != nil { // correlation id, empty header tags
		t.Fatal(err)
	}
	if r := r12; r.ErrorCode != kerr.FetchSessionTopicIDError.Code {
		t.Fatalf("a session of topic ids fetched by v12: error %d, want FETCH_SESSION_TOPIC_ID_ERROR", r.ErrorCode)
	}
}

// Kafka: max.incremental.fetch.session.cache.slots=0 leaves every fetch
// a full one (session id 0), which clients accept.
func TestFetchSessionsOff(t *testing.T) {
	tb := startBroker(t, t.TempDir(), map[string]string{"max.incremental.fetch.session.cache.slots": "0"})
	createTopic(t, tb.addr, "nosess", 1, nil)
	cl := client(t, tb.addr)
	r, err := sessionFetch(topicID(t, cl, "nosess"), 0, 0, 0).RequestWith(ctx(t), cl)
	if err != nil || r.SessionID != 0 || len(answered(r)) != 1 {
		t.Fatalf("%v: session %d", err, r.SessionID)
	}
	produceSync(t, cl, &kgo.Record{Topic: "nosess", Value: []byte("y")})
	if recs := consumeN(t, tb.addr, "nosess", 1); len(recs) != 1 {
		t.Fatalf("consumed %d", len(recs))
	}
}
