package cluster

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/pagecache"
	"github.com/varve/varve/replica"
)

// The hand-written Fetch response encoder must produce exactly what
// kmsg's generated encoder (from Kafka's FetchResponse.json) produces,
// with the regions' bytes in place, at every version served.
func TestFetchEncodingMatchesKmsg(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "records"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data := bytes.Repeat([]byte("0123456789abcdef"), 300)
	f.Write(data)
	topics := []fetchTopic{
		{name: "orders", id: [16]byte{1, 2, 3}, parts: []fetchPart{
			{partition: 0, hw: 100, logStart: 5, records: pagecache.Region{File: f, Off: 10, Len: 1000}},
			{partition: 1, errorCode: 1, hw: -1, logStart: -1},
			{partition: 2, hw: 7, logStart: 0, records: pagecache.Region{File: f, Off: 0, Len: 4800}},
		}},
		{name: "empty", id: [16]byte{9}, parts: []fetchPart{{partition: 3, hw: 0, logStart: 0}}},
	}
	for v := int16(4); v <= 17; v++ {
		got := flatten(t, encodeFetchResponse(v, fetchHead{}, topics, nil))
		want := kmsgFetch(v, fetchHead{}, topics, data, nil)
		if !bytes.Equal(got, want) {
			t.Fatalf("v%d: %d bytes, kmsg encodes %d bytes", v, len(got), len(want))
		}
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(v)
		if err := resp.ReadFrom(got); err != nil {
			t.Fatalf("v%d: kmsg cannot read it back: %v", v, err)
		}
	}
}

func flatten(t *testing.T, parts []vnet.Part) []byte {
	var out []byte
	for _, p := range parts {
		if p.Region != nil {
			b, err := p.Region.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b...)
		} else {
			out = append(out, p.Bytes...)
		}
	}
	return out
}

// Kafka: KIP-595's DivergingEpoch (v12+) and KIP-951's CurrentLeader
// (v12+ as a tag) and NodeEndpoints (v16+) in the hand-written encoder
// as kmsg encodes them.
func TestFetchEncodingTaggedFieldsMatchKmsg(t *testing.T) {
	rack := "r1"
	topics := []fetchTopic{{name: "moved", id: [16]byte{4}, parts: []fetchPart{
		{partition: 0, hw: 10, logStart: 0, diverging: &replica.EpochEnd{Epoch: 3, EndOffset: 42}},
		{partition: 1, errorCode: 6, hw: -1, logStart: -1, currentLeader: &[2]int32{2, 7}},
		{partition: 2, hw: 10, logStart: 0, diverging: &replica.EpochEnd{Epoch: 1, EndOffset: 5}, currentLeader: &[2]int32{3, 1}},
	}}}
	brokers := []kmsg.FetchResponseBroker{{NodeID: 2, Host: "127.0.0.2", Port: 9092}, {NodeID: 3, Host: "h3", Port: 19092, Rack: &rack}}
	for v := int16(12); v <= 17; v++ {
		var bs []kmsg.FetchResponseBroker
		if v >= 16 {
			bs = brokers
		}
		got := flatten(t, encodeFetchResponse(v, fetchHead{}, topics, bs))
		want := kmsgFetch(v, fetchHead{}, topics, nil, bs)
		if !bytes.Equal(got, want) {
			t.Fatalf("v%d: %x\nkmsg encodes %x", v, got, want)
		}
	}
}

func kmsgFetch(v int16, head fetchHead, topics []fetchTopic, data []byte, brokers []kmsg.FetchResponseBroker) []byte {
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(v)
	resp.ErrorCode, resp.SessionID = head.errorCode, head.sessionID
	for _, ft := range topics {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic, rt.TopicID = ft.name, ft.id
		for _, fp := range ft.parts {
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.HighWatermark = fp.partition, fp.errorCode, fp.hw
			rp.LastStableOffset, rp.LogStartOffset = fp.hw, fp.logStart
			rp.RecordBatches = []byte{} // empty, not null, as the encoder writes
			if fp.records.Len > 0 {
				rp.RecordBatches = data[fp.records.Off : fp.records.Off+fp.records.Len]
			}
			if fp.diverging != nil {
				rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset = fp.diverging.Epoch, fp.diverging.EndOffset
			}
			rp.PreferredReadReplica = fp.preferredReadReplica()
			if fp.currentLeader != nil {
				rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = fp.currentLeader[0], fp.currentLeader[1]
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	resp.Brokers = brokers
	return resp.AppendTo(nil)
}

// Kafka: KIP-227's top-level ErrorCode and SessionID (v7+) and KIP-392's
// PreferredReadReplica (v11+) as kmsg encodes them.
func TestFetchEncodingSessionAndPreferredReplica(t *testing.T) {
	topics := []fetchTopic{{name: "near", id: [16]byte{5}, parts: []fetchPart{
		{partition: 0, hw: 10, logStart: 0, preferred: 3 + 1},
		{partition: 1, hw: 11, logStart: 0},
	}}}
	for v := int16(7); v <= 17; v++ {
		for _, head := range []fetchHead{{sessionID: 12345}, {errorCode: 70}} {
			got := flatten(t, encodeFetchResponse(v, head, topics, nil))
			want := kmsgFetch(v, head, topics, nil, nil)
			if !bytes.Equal(got, want) {
				t.Fatalf("v%d %+v: %x\nkmsg encodes %x", v, head, got, want)
			}
			resp := kmsg.NewPtrFetchResponse()
			resp.SetVersion(v)
			if err := resp.ReadFrom(got); err != nil {
				t.Fatal(err)
			}
			if resp.SessionID != head.sessionID || resp.ErrorCode != head.errorCode {
				t.Fatalf("v%d: read back session %d error %d", v, resp.SessionID, resp.ErrorCode)
			}
			if pr := resp.Topics[0].Partitions[0].PreferredReadReplica; v >= 11 && pr != 3 {
				t.Fatalf("v%d: PreferredReadReplica %d, want 3", v, pr)
			}
		}
	}
}
