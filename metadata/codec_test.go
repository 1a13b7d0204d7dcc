package metadata

import (
	"bytes"
	"encoding/hex"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// Kafka: MetadataRecordSerde, ApiMessageAndVersion. Every record type
// comes back from its bytes as it went in, and AppendRecord appends.
func TestRecordRoundTrip(t *testing.T) {
	for _, name := range slices.Sorted(maps.Keys(recordGens)) {
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				rec := recordGens[name](t)
				prefix := []byte("prefix")
				b := AppendRecord(slices.Clone(prefix), rec)
				if !bytes.HasPrefix(b, prefix) {
					t.Fatalf("AppendRecord overwrote dst: %x", b)
				}
				got, err := DecodeRecord(b[len(prefix):])
				if err != nil {
					t.Fatalf("DecodeRecord(%x): %v", b[len(prefix):], err)
				}
				if d := cmp.Diff(rec, got); d != "" {
					t.Fatalf("round trip (-want +got):\n%s", d)
				}
			})
		})
	}
}

func ptr[T any](v T) *T { return &v }

// The bytes of records written by hand from Kafka's schemas
// (metadata/src/main/resources/common/metadata/*.json) and its
// generated message format: frame 01, api key, version, fields, tags.
func TestRecordBytes(t *testing.T) {
	id := TopicID{0x50, 0xd0, 5, 0x80, 0x8c, 0x4a, 0x4d, 0x31, 0xac, 0x0c, 0x9d, 0x97, 0x44, 0xfe, 0xde, 0x26}
	idHex := hex.EncodeToString(id[:])
	tests := []struct {
		name string
		rec  Record
		want string // hex, spaces ignored
	}{
		{"TopicRecord", TopicRecord{Name: "fixture", TopicID: id},
			"01 02 00  08 66697874757265  " + idHex + "  00"},
		{"RemoveTopicRecord", RemoveTopicRecord{TopicID: id}, "01 09 00 " + idHex + " 00"},
		{"ConfigRecord delete", ConfigRecord{ResourceType: ConfigResourceTopic, ResourceName: "t", Name: "a"},
			"01 04 00  02  02 74  02 61  00  00"},
		{"ConfigRecord set", ConfigRecord{ResourceType: ConfigResourceBroker, Name: "a", Value: ptr("")},
			"01 04 00  04  01  02 61  01  00"},
		{"FeatureLevelRecord", FeatureLevelRecord{Name: "metadata.version", FeatureLevel: 33},
			"01 0c 00  11 6d657461646174612e76657273696f6e  0021  00"},
		{"ProducerIdsRecord", ProducerIdsRecord{BrokerID: 1, BrokerEpoch: 12, NextProducerID: 1000},
			"01 0f 00  00000001  000000000000000c  00000000000003e8  00"},
		{"FenceBrokerRecord", FenceBrokerRecord{BrokerID: 2, BrokerEpoch: 3}, "01 07 00 00000002 0000000000000003 00"},
		{"UnfenceBrokerRecord", UnfenceBrokerRecord{BrokerID: 2, BrokerEpoch: 3}, "01 08 00 00000002 0000000000000003 00"},
		// Version 0, the Fenced tag only.
		{"BrokerRegistrationChangeRecord unfence", BrokerRegistrationChangeRecord{BrokerID: 1, BrokerEpoch: 12, Fenced: UnfenceBroker},
			"01 11 00  00000001  000000000000000c  01  00 01 ff"},
		// Version 1 for the InControlledShutdown tag.
		{"BrokerRegistrationChangeRecord shutdown", BrokerRegistrationChangeRecord{BrokerID: 1, BrokerEpoch: 12, InControlledShutdown: true},
			"01 11 01  00000001  000000000000000c  01  01 01 01"},
		{"RegisterBrokerRecord", RegisterBrokerRecord{BrokerID: 1, BrokerEpoch: 2, Fenced: true,
			Endpoints: []Endpoint{{Listener: "A", Host: "h", Port: 60027, SecurityProtocol: "SASL_SSL"}}},
			"01 00 04  00000001  00  " + strings.Repeat("00", 16) + "  0000000000000002" +
				"  02  02 41  02 68  ea7b  0003  00" + // one endpoint
				"  01  00  01  00  00"}, // no features, null rack, fenced, not in shutdown, no tags
		{"PartitionRecord", PartitionRecord{PartitionID: 1, TopicID: id, Replicas: []int32{1, 2}, ISR: []int32{2},
			Leader: 2, LeaderRecovery: Recovering, LeaderEpoch: 3, PartitionEpoch: 4},
			"01 03 02  00000001  " + idHex + "  03 00000001 00000002  02 00000002  01  01" +
				"  00000002  00000003  00000004  01  01 00 01 01"}, // no directories; tag 0 recovering
		{"PartitionChangeRecord", PartitionChangeRecord{PartitionID: 0, TopicID: id, Leader: -1, ISR: []int32{},
			AddingReplicas: []int32{5}, LeaderRecovery: ptr(Recovered)},
			"01 05 02  00000000  " + idHex + "  04  00 01 01  01 04 ffffffff  04 05 02 00000005  05 01 00"},
		{"PartitionChangeRecord no change", PartitionChangeRecord{PartitionID: 7, TopicID: id, Leader: NoLeaderChange},
			"01 05 02  00000007  " + idHex + "  00"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, err := hex.DecodeString(strings.ReplaceAll(tc.want, " ", ""))
			if err != nil {
				t.Fatal(err)
			}
			if got := AppendRecord(nil, tc.rec); !bytes.Equal(got, want) {
				t.Fatalf("AppendRecord:\n got %x\nwant %x", got, want)
			}
		})
	}
}

// Older versions Kafka wrote, and fields Varve drops, still decode.
func TestDecodeOlderVersions(t *testing.T) {
	id := strings.Repeat("11", 16)
	tests := []struct {
		name string
		in   string
		want Record
	}{
		// RegisterBrokerRecord v0: no IsMigratingZkBroker, no
		// InControlledShutdown; one feature; rack "r".
		{"RegisterBrokerRecord v0", "01 00 00  00000003  " + id + "  0000000000000009  01" +
			"  02  11 6d657461646174612e76657273696f6e 0001 0021 00  02 72  00  00",
			RegisterBrokerRecord{BrokerID: 3, IncarnationID: [16]byte{0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11},
				BrokerEpoch: 9, Rack: "r"}},
		// RegisterBrokerRecord v3 with LogDirs (tag 0) set.
		{"RegisterBrokerRecord v3 log dirs", "01 00 03  00000003  01  " + id + "  0000000000000009  01  01  00  01  01" +
			"  01 00 11 02 " + id,
			RegisterBrokerRecord{BrokerID: 3, IncarnationID: [16]byte{0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11},
				BrokerEpoch: 9, Fenced: true, InControlledShutdown: true}},
		// PartitionRecord v0: no Directories.
		{"PartitionRecord v0", "01 03 00  00000000  " + id + "  02 00000001  02 00000001  01  01  00000001  00000000  00000000  00",
			PartitionRecord{TopicID: TopicID{0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11},
				Replicas: []int32{1}, ISR: []int32{1}, Leader: 1}},
		// PartitionRecord v2 with one directory and the ELR tags.
		{"PartitionRecord v2 elr", "01 03 02  00000000  " + id + "  02 00000001  02 00000001  01  01  00000001  00000000  00000000" +
			"  02 " + id + "  02  01 01 01  02 05 02 00000001",
			PartitionRecord{TopicID: TopicID{0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11},
				Replicas: []int32{1}, ISR: []int32{1}, Leader: 1}},
		// PartitionChangeRecord v1 with Directories (tag 8) and a
		// LeaderRecoveryState of -1 written out.
		{"PartitionChangeRecord v1", "01 05 01  00000002  " + id + "  02  05 01 ff  08 11 02 " + id,
			PartitionChangeRecord{PartitionID: 2, TopicID: TopicID{0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11},
				Leader: NoLeaderChange}},
		// BrokerRegistrationChangeRecord v3 with LogDirs and a null
		// CordonedLogDirs, and an unknown tag 9, which is skipped.
		{"BrokerRegistrationChangeRecord v3", "01 11 03  00000001  0000000000000002  03  02 01 01  03 01 00  09 02 abcd",
			BrokerRegistrationChangeRecord{BrokerID: 1, BrokerEpoch: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := hex.DecodeString(strings.ReplaceAll(tc.in, " ", ""))
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeRecord(b)
			if err != nil {
				t.Fatalf("DecodeRecord(%x): %v", b, err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatalf("(-want +got):\n%s", d)
			}
		})
	}
}

// Bytes that are no record give an error, never a panic (Kafka:
// MetadataParseException); each case names the error it must wrap.
func TestDecodeRecordErrors(t *testing.T) {
	id := strings.Repeat("00", 16)
	tests := []struct {
		name, in string
		want     error
	}{
		{"empty", "", ErrCorruptRecord},
		{"frame version 2", "02 02 00 02 61 " + id + " 00", ErrCorruptRecord},
		{"unknown api key", "01 1b 00 00", ErrUnsupportedRecord}, // RegisterControllerRecord (27)
		{"api key past int16", "01 ffff03 00 00", ErrUnsupportedRecord},
		{"version too new", "01 02 01 02 61 " + id + " 00", ErrUnsupportedRecord},
		{"varint of 6 bytes", "01 8080808080 00", ErrCorruptRecord},
		{"trailing byte", "01 02 00 02 61 " + id + " 00 00", ErrCorruptRecord},
		{"null name", "01 02 00 00 " + id + " 00", ErrCorruptRecord},
		{"string past the end", "01 02 00 10 61 " + id + " 00", ErrCorruptRecord},
		{"array count past the end", "01 03 02 00000000 " + id + " ffffffff0f", ErrCorruptRecord},
		{"null replicas", "01 03 02 00000000 " + id + " 00 01 01 01 00000001 00000000 00000000 01 00", ErrCorruptRecord},
		{"tag size past the end", "01 05 02 00000000 " + id + " 01 00 7f", ErrCorruptRecord},
		{"tag with bytes left over", "01 05 02 00000000 " + id + " 01 01 05 ffffffff00", ErrCorruptRecord},
		{"leader recovery 2", "01 05 02 00000000 " + id + " 01 05 01 02", ErrCorruptRecord},
		{"in controlled shutdown 2", "01 11 01 00000001 0000000000000002 01 01 01 02", ErrCorruptRecord},
		{"unknown security protocol", "01 00 04 00000001 00 " + id + " 0000000000000002 02 02 41 02 68 0001 0009 00 01 00 01 00 00", ErrCorruptRecord},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := hex.DecodeString(strings.ReplaceAll(tc.in, " ", ""))
			if err != nil {
				t.Fatal(err)
			}
			rec, err := DecodeRecord(b)
			if !errors.Is(err, tc.want) {
				t.Fatalf("DecodeRecord(%x) = %+v, %v; want %v", b, rec, err, tc.want)
			}
		})
	}
}

// Every proper prefix of a record is truncated: an error, not a record.
func TestDecodeRecordTruncated(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := AppendRecord(nil, genRecord(t))
		n := rapid.IntRange(0, len(b)-1).Draw(t, "cut")
		if rec, err := DecodeRecord(b[:n]); !errors.Is(err, ErrCorruptRecord) {
			t.Fatalf("DecodeRecord of %d of %d bytes = %+v, %v", n, len(b), rec, err)
		}
	})
}

// A raft entry holds a change's records in order.
func TestEntryRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		recs := rapid.SliceOfN(rapid.Custom(genRecord), 0, 8).Draw(t, "records")
		b := AppendEntry([]byte("x"), recs)
		got, err := DecodeEntry(b[1:])
		if err != nil {
			t.Fatalf("DecodeEntry: %v", err)
		}
		if len(recs) == 0 {
			recs = []Record{}
		}
		if d := cmp.Diff(recs, got); d != "" {
			t.Fatalf("(-want +got):\n%s", d)
		}
		n := rapid.IntRange(1, len(b)-2).Draw(t, "cut")
		if _, err := DecodeEntry(b[1 : 1+n]); err == nil {
			t.Fatalf("DecodeEntry of %d of %d bytes: no error", n, len(b)-1)
		}
	})
}

func TestDecodeEntryErrors(t *testing.T) {
	topic := "0102000261" + strings.Repeat("00", 17) // TopicRecord "a", 22 (0x16) bytes
	tests := []struct{ name, in string }{
		{"version 1", "01 00"},
		{"count past the end", "00 ffffffff07"},
		{"count beyond the records", "00 02 16 " + topic},
		{"length past the end", "00 01 17 " + topic},
		{"trailing bytes", "00 01 16 " + topic + " 00"},
		{"record trailing bytes", "00 01 17 " + topic + " 00"},
		{"record of unknown api key", "00 01 04 011b0000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := hex.DecodeString(strings.ReplaceAll(tc.in, " ", ""))
			if err != nil {
				t.Fatal(err)
			}
			if recs, err := DecodeEntry(b); err == nil {
				t.Fatalf("DecodeEntry(%x) = %+v, no error", b, recs)
			}
		})
	}
	b, _ := hex.DecodeString("0001" + "16" + topic)
	if recs, err := DecodeEntry(b); err != nil || len(recs) != 1 {
		t.Fatalf("DecodeEntry(%x) = %+v, %v; want one TopicRecord", b, recs, err)
	}
	if recs, err := DecodeEntry(nil); err != nil || recs != nil {
		t.Fatalf("DecodeEntry(nil) = %v, %v; want no records", recs, err)
	}
}

// Kafka's record types this package does not read are named in the
// error, and RecordHeader reads their api key and version: a dump or a
// migration can say which record it met, not just that it met one.
func TestUnsupportedRecordNamed(t *testing.T) {
	raw := []byte{frameVersion, 27, 0, 0} // RegisterControllerRecord v0, its fields cut
	_, err := DecodeRecord(raw)
	if !errors.Is(err, ErrUnsupportedRecord) || !strings.Contains(err.Error(), "api key 27 version 0 (RegisterControllerRecord)") {
		t.Fatalf("err %v", err)
	}
	if key, version, ok := RecordHeader(raw); !ok || key != 27 || version != 0 {
		t.Fatalf("RecordHeader: %d %d %v", key, version, ok)
	}
	if _, _, ok := RecordHeader([]byte{frameVersion, 27}); ok {
		t.Fatal("RecordHeader of a cut header: ok")
	}
	if RecordTypeName(99) != "" || RecordTypeName(2) != "TopicRecord" {
		t.Fatal("RecordTypeName")
	}
}
