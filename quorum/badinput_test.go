package quorum

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/raftlog"
	"github.com/varve/varve/record"
)

// TestListenerBadInput: what the controller listener cannot serve
// closes the connection, as Kafka closes it for an API key it does not
// know or a request it cannot parse; the node keeps working.
func TestListenerBadInput(t *testing.T) {
	c := newTestCluster(t, 20<<20)
	c.active(5 * time.Second)
	cases := []struct {
		name string
		key  int16
		body []byte
	}{
		{"raft message that is not protobuf", RaftMessageKey, []byte{0xff, 0xff, 0xff}},
		{"raft message for another node", RaftMessageKey, []byte{0x10, 0x63}}, // to = 99
		{"unknown api key", 9999, nil},
		{"controller api cut short", 62, []byte{0, 0, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := netDialer{}.dial(c.nodes[0].Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			frame := vnet.AppendRequestHeader(make([]byte, 4), vnet.RequestHeader{Key: tc.key, Version: 0, CorrelationID: 7, ClientID: "bad"})
			frame = append(frame, tc.body...)
			binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
			if _, err := conn.Write(frame); err != nil {
				t.Fatal(err)
			}
			conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			if n, err := conn.Read(make([]byte, 16)); err != io.EOF {
				t.Fatalf("read %d bytes, err %v: want the connection closed", n, err)
			}
		})
	}
	c.waitUnfenced(10 * time.Second)
	createTopic(t, c.nodes[0].Client(), "still-works", 1, 1)
}

func TestParseVoters(t *testing.T) {
	v, err := ParseVoters("1@127.0.0.1:9093, 2@127.0.0.2:9093,3@[::1]:9093")
	if err != nil || len(v) != 3 || v[2].ID != 3 || v[2].Addr != "[::1]:9093" {
		t.Fatalf("got %v, %v", v, err)
	}
	for _, bad := range []string{"", "1@", "x@h:1", "1@h:1,1@h:2", "-1@h:1", "1:h:1"} {
		if _, err := ParseVoters(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestEntryLayout(t *testing.T) {
	if _, _, err := parseEntry([]byte{1, 2, 3}); err == nil {
		t.Fatal("an entry shorter than its header parsed")
	}
	if _, _, err := decodeSnapshot("c", []byte{1}); err == nil {
		t.Fatal("snapshot data shorter than its header parsed")
	}
	one := []metadata.Record{metadata.TopicRecord{Name: "t"}}
	data := encodeEntries(0x0102<<48|5, one)
	if len(data) != 1 {
		t.Fatalf("one record made %d entries", len(data))
	}
	id, rec, err := parseEntry(data[0])
	if err != nil || id != 0x0102<<48|5 || rec != one[0] {
		t.Fatalf("got id %x, %v, %v", id, rec, err)
	}
	if _, _, err := parseEntry(raftlog.EncodeData([]record.Header{{Key: ProposalHeader, Value: []byte{1}}},
		metadata.AppendRecord(nil, one[0]))); err == nil {
		t.Fatal("a 1-byte proposal header parsed")
	}
}

// Kafka: KIP-868. A change of several records is framed by
// BeginTransactionRecord and EndTransactionRecord, one record per
// entry, each entry's value exactly one record in Kafka's framing; the
// proposal id rides on the End alone.
func TestEntriesOfAChange(t *testing.T) {
	recs := []metadata.Record{metadata.TopicRecord{Name: "t"}, metadata.ConfigRecord{Name: "k", Value: new("v")}}
	data := encodeEntries(9, recs)
	want := []metadata.Record{metadata.BeginTransactionRecord{}, recs[0], recs[1], metadata.EndTransactionRecord{}}
	if len(data) != len(want) {
		t.Fatalf("%d entries, want %d", len(data), len(want))
	}
	for i, d := range data {
		id, rec, err := parseEntry(d)
		if err != nil || !cmp.Equal(rec, want[i]) {
			t.Fatalf("entry %d: %#v, %v; want %#v", i, rec, err, want[i])
		}
		if _, _, framed := raftlog.DecodeData(d); framed != (i == len(data)-1) || (id == 9) != framed {
			t.Fatalf("entry %d: id %d, headers %v", i, id, framed)
		}
		if i < len(data)-1 && !bytes.Equal(d, metadata.AppendRecord(nil, want[i])) {
			t.Fatalf("entry %d is not the record alone: %x", i, d)
		}
	}
}

// TestMetaPropertiesMismatch: a node refuses a metadata log dir
// formatted for another node or cluster. Kafka: MetaProperties checked
// at startup.
func TestMetaPropertiesMismatch(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NodeID, cfg.ClusterID, cfg.MetadataLogDir = 1, "one", t.TempDir()
	cfg.Voters = []Voter{{ID: 1, Addr: "127.0.0.1:1"}}
	cfg.Logger = testLogger()
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n.Stop(context.Background())
	cfg.ClusterID = "two"
	if _, err := New(cfg); !errors.Is(err, logdir.ErrMetaMismatch) {
		t.Fatalf("another cluster.id: %v, want logdir.ErrMetaMismatch", err)
	}
}
