package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka: DumpLogSegments prints KRaft's control records with their
// fields (LeaderChange, SnapshotHeader, SnapshotFooter, KRaftVersion,
// KRaftVoters), each as its JsonConverter writes it. Each kind is
// checked on a file Kafka 4.4.0 wrote (internal/kafkafixtures): the
// expected lines are the ones Kafka's own tool printed for those files,
// character for character.
func TestDumpKRaftControlRecordsKafkaWrote(t *testing.T) {
	const (
		staticLog  = "kafka-4.4.0-metadata/__cluster_metadata-0/00000000000000000000.log"
		staticSnap = "kafka-4.4.0-metadata/__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"
		dynLog     = "kafka-4.4.0-standalone/__cluster_metadata-0/00000000000000000000.log"
		dynSnap    = "kafka-4.4.0-standalone/__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"
	)
	voters := `KRaftVoters {"version":0,"voters":[{"voterId":1,"voterDirectoryId":"mSBHtYL9R1GVyNo8bTJ1JQ",` +
		`"endpoints":[{"name":"CONTROLLER","host":"127.0.0.1","port":43841}],` +
		`"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}`
	for _, tc := range []struct {
		kind, rel string
		want      []string // whole record lines, in order
	}{
		{"LeaderChange", staticLog, []string{
			`| offset: 0 CreateTime: 1796147774427 keySize: 4 valueSize: 19 sequence: -1 headerKeys: [] LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}`,
			`| offset: 42 CreateTime: 1796147787426 keySize: 4 valueSize: 19 sequence: -1 headerKeys: [] LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}`}},
		{"SnapshotHeader", staticSnap, []string{
			`| offset: 0 CreateTime: 1796147770545 keySize: 4 valueSize: 11 sequence: -1 headerKeys: [] SnapshotHeader {"version":0,"lastContainedLogTimestamp":1796147770500}`}},
		{"SnapshotFooter", staticSnap, []string{
			`| offset: 7 CreateTime: 1796147770576 keySize: 4 valueSize: 3 sequence: -1 headerKeys: [] SnapshotFooter {"version":0}`}},
		{"KRaftVersion", dynSnap, []string{
			`| offset: 1 CreateTime: 1796179493425 keySize: 4 valueSize: 5 sequence: -1 headerKeys: [] KRaftVersion {"version":0,"kRaftVersion":1}`}},
		{"KRaftVoters", dynSnap, []string{
			`| offset: 2 CreateTime: 1796179493425 keySize: 4 valueSize: 55 sequence: -1 headerKeys: [] ` + voters}},
		{"control batch of a dynamic quorum's leader", dynLog, []string{
			`| offset: 0 CreateTime: 1796179502239 keySize: 4 valueSize: 19 sequence: -1 headerKeys: [] LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}`,
			`| offset: 1 CreateTime: 1796179502239 keySize: 4 valueSize: 5 sequence: -1 headerKeys: [] KRaftVersion {"version":0,"kRaftVersion":1}`,
			`| offset: 2 CreateTime: 1796179502239 keySize: 4 valueSize: 55 sequence: -1 headerKeys: [] ` + voters}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			lines := strings.Split(dumpOneKafkaFile(t, tc.rel), "\n")
			for _, w := range tc.want {
				prefix, _, _ := strings.Cut(w, " CreateTime")
				got := ""
				for _, l := range lines {
					if strings.HasPrefix(l, prefix+" ") {
						got = l
						break
					}
				}
				if got != w {
					t.Errorf("record line\n got: %s\nwant: %s", got, w)
				}
			}
		})
	}
}

// Kafka: KIP-853 LeaderChangeMessage v1 carries each voter's directory
// id, which LeaderChangeMessageJsonConverter writes as Kafka's
// Uuid.toString.
func TestLeaderChangeV1PrintsDirectoryIDs(t *testing.T) {
	m := kmsg.NewLeaderChangeMessage()
	m.Version, m.LeaderID = 1, 2
	v := kmsg.NewLeaderChangeMessageVoter()
	v.VoterID, v.VoterDirectoryID = 2, [16]byte{0x99, 0x20, 0x47, 0xb5, 0x82, 0xfd, 0x47, 0x51, 0x95, 0xc8, 0xda, 0x3c, 0x6d, 0x32, 0x75, 0x25}
	m.Voters, m.GrantingVoters = []kmsg.LeaderChangeMessageVoter{v}, []kmsg.LeaderChangeMessageVoter{}
	got, ok := kraftControlRecord(2, m.AppendTo(nil))
	want := `LeaderChange: {"version":1,"leaderId":2,"voters":[{"voterId":2,"voterDirectoryId":"mSBHtYL9R1GVyNo8bTJ1JQ"}],"grantingVoters":[]}`
	if !ok || got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// A control record whose value is cut short, or whose arrays claim more
// than the value holds, is reported in place and the dump goes on.
func TestKRaftControlRecordTruncated(t *testing.T) {
	for _, tc := range []struct {
		typ   int16
		value []byte
	}{
		{2, []byte{0, 0, 0, 0}},
		{3, []byte{0, 0, 0, 0, 1}},
		{4, []byte{0}},
		{5, []byte{0, 0, 0}},
		{6, []byte{0, 0, 0xff, 0xff, 0xff, 0x7f}}, // a voters array of 2^28-2
		{6, []byte{0, 0, 2, 0, 0, 0, 1}},          // one voter, cut in its id
	} {
		got, ok := kraftControlRecord(tc.typ, tc.value)
		if !ok || !strings.Contains(got, "value not decoded") || !strings.HasPrefix(got, "controlType: "+controlTypeName(tc.typ)) {
			t.Errorf("type %d, value %x: %q", tc.typ, tc.value, got)
		}
	}
	if _, ok := kraftControlRecord(7, nil); ok {
		t.Error("type 7 is not a KRaft control record")
	}
}

// FuzzKRaftControlRecord: no value makes the readers panic or allocate
// past what the value holds, and what they print is JSON.
func FuzzKRaftControlRecord(f *testing.F) {
	f.Add(int16(3), []byte{0, 0, 0, 0, 1, 0x22, 0x33, 0x44, 0x55, 0x66, 0})
	f.Add(int16(5), []byte{0, 0, 0, 1, 0})
	f.Add(int16(6), []byte{0, 0, 2, 0, 0, 0, 1, 0x99, 0x20, 0x47, 0xb5, 0x82, 0xfd, 0x47, 0x51, 0x95, 0xc8, 0xda, 0x3c, 0x6d,
		0x32, 0x75, 0x25, 2, 11, 'C', 'O', 'N', 'T', 'R', 'O', 'L', 'L', 'E', 'R', 10, '1', '2', '7', '.', '0', '.', '0', '.', '1',
		0xab, 0x41, 0, 0, 0, 0, 1, 0, 0, 0})
	f.Add(int16(2), []byte{0, 1, 0, 0, 0, 2, 1, 1, 0})
	f.Fuzz(func(t *testing.T, typ int16, value []byte) {
		got, ok := kraftControlRecord(typ, value)
		if !ok || strings.HasPrefix(got, "controlType: ") {
			return
		}
		_, js, _ := strings.Cut(got, " ")
		if !json.Valid([]byte(js)) {
			t.Fatalf("not JSON: %s", got)
		}
	})
}
