package raftlog

import (
	"bytes"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/varve/varve/record"
)

// Kafka: a KRaft metadata record's value is one metadata record alone
// (MetadataRecordSerde); whatever else the writer needs goes in record
// headers, which Kafka's readers ignore. Data written by EncodeData is
// stored as its value with its headers, and every entry, even Data that
// only looks like EncodeData's, reads back byte for byte, with the size
// raft counted.
func TestEntryHeaders(t *testing.T) {
	framed := EncodeData([]record.Header{{Key: "varve.proposal", Value: []byte{1, 2}}}, []byte("value"))
	cases := []struct {
		name      string
		data      []byte
		wantValue []byte
		headers   []string
	}{
		{"framed", framed, []byte("value"), []string{"varve.proposal"}},
		{"plain", []byte("plain"), []byte("plain"), nil},
		{"marker alone", []byte{headersMarker}, []byte{headersMarker}, []string{RawHeader}},
		{"not canonical", []byte{headersMarker, 0x81, 0x00, 1, 'k', 0, 'v'}, nil, []string{RawHeader}},
		{"reserved key", EncodeData([]record.Header{{Key: EntryTypeHeader, Value: []byte("1")}}, nil), nil, []string{RawHeader}},
		{"empty", nil, noOpValue, []string{EmptyHeader}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := &raftpb.Entry{Index: new(uint64(7)), Term: new(uint64(2)), Data: tc.data}
			b, err := encodeEntry(nil, e, 1)
			if err != nil {
				t.Fatal(err)
			}
			h, err := record.ValidateBatch(b)
			if err != nil {
				t.Fatal(err)
			}
			recs, err := record.DecodeBatch(b, nil)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, hd := range recs[0].Headers {
				keys = append(keys, hd.Key)
			}
			if tc.wantValue == nil {
				tc.wantValue = tc.data
			}
			if !bytes.Equal(recs[0].Value, tc.wantValue) || len(keys) != len(tc.headers) || (len(keys) > 0 && keys[0] != tc.headers[0]) {
				t.Fatalf("record value %q headers %v, want %q %v", recs[0].Value, keys, tc.wantValue, tc.headers)
			}
			got, err := entryOf(h, recs[0])
			if err != nil || !sameEntry(got, e) || proto.Size(got) != proto.Size(e) {
				t.Fatalf("read back %v, %v; want %v", got, err, e)
			}
		})
	}
	// raft's empty conf change (leaving a joint configuration) is a
	// NoOpRecord too, and keeps its type.
	cc := &raftpb.Entry{Index: new(uint64(8)), Term: new(uint64(2)), Type: raftpb.EntryConfChangeV2.Enum()}
	b, err := encodeEntry(nil, cc, 1)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := record.ValidateBatch(b)
	recs, _ := record.DecodeBatch(b, nil)
	if got, err := entryOf(h, recs[0]); err != nil || !sameEntry(got, cc) || !bytes.Equal(recs[0].Value, noOpValue) {
		t.Fatalf("empty conf change read back %v, %v (value %x)", got, err, recs[0].Value)
	}
	hs, v, ok := DecodeData(framed)
	if !ok || len(hs) != 1 || string(hs[0].Value) != "\x01\x02" || string(v) != "value" {
		t.Fatalf("DecodeData = %v %q %v", hs, v, ok)
	}
}
