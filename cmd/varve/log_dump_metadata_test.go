package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/varve/varve/metadata"
	"github.com/varve/varve/quorum"
	"github.com/varve/varve/raftlog"
	"github.com/varve/varve/record"
)

// Kafka: kafka-dump-log --cluster-metadata-decoder prints each record
// of a metadata log as the metadata record it holds. varve log dump of
// a metadata log dir does so without the flag; raft's empty entry is a
// NoOpRecord, a change of several records is framed by KIP-868's
// transaction records, the proposal header is shown beside the record.
func TestDumpMetadataLog(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, quorum.MetadataLogDirName)
	st, err := raftlog.Open(dir, raftlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	topic := metadata.TopicRecord{Name: "orders", TopicID: metadata.TopicID{1}}
	data := [][]byte{
		nil,
		metadata.AppendRecord(nil, metadata.BeginTransactionRecord{}),
		metadata.AppendRecord(nil, topic),
		raftlog.EncodeData([]record.Header{{Key: quorum.ProposalHeader, Value: make([]byte, 8)}},
			metadata.AppendRecord(nil, metadata.EndTransactionRecord{})),
		[]byte("not a record"),
	}
	var ents []*raftpb.Entry
	for i, d := range data {
		ents = append(ents, &raftpb.Entry{Index: new(uint64(i + 1)), Term: new(uint64(1)), Data: d})
	}
	if err := st.Append(ents); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	out := runDump(t, root)
	for _, want := range []string{
		"| offset: 1 ", "payload: NoOpRecord {}",
		"| offset: 2 ", "payload: BeginTransactionRecord {Name:}",
		"| offset: 3 ", "payload: TopicRecord {Name:orders ",
		"| offset: 4 ", `payload: EndTransactionRecord {} headers: ["varve.proposal"=`,
		"| offset: 5 ", "payload: not a metadata record: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dump lacks %q:\n%s", want, out)
		}
	}
	// Elsewhere, --cluster-metadata-decoder decodes, and only it.
	buf, err := os.ReadFile(filepath.Join(dir, "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(seg, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := runDump(t, "--print-records", seg); strings.Contains(got, "TopicRecord") {
		t.Errorf("decoded as metadata without the flag:\n%s", got)
	}
	if got := runDump(t, "--cluster-metadata-decoder", seg); !strings.Contains(got, "payload: TopicRecord {Name:orders ") {
		t.Errorf("not decoded with --cluster-metadata-decoder:\n%s", got)
	}
}
