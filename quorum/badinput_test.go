package quorum

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/varve/varve/logdir"
	vnet "github.com/varve/varve/net"
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
	data := encodeEntry(0x0102<<48|5, nil)
	id, recs, err := parseEntry(data)
	if err != nil || id != 0x0102<<48|5 || len(recs) != 0 {
		t.Fatalf("got id %x, %d records, %v", id, len(recs), err)
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
