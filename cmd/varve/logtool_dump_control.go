package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// KRaft's control records (Kafka's ControlRecordType 2 to 6), printed as
// Kafka's DumpLogSegments prints them: a name, then the record as its
// generated JsonConverter writes it (fields in schema order, camelCase
// names, a uuid as Kafka's Uuid.toString, base64url without padding):
//
//	LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}
//	SnapshotHeader {"version":0,"lastContainedLogTimestamp":1796147770500}
//	SnapshotFooter {"version":0}
//	KRaftVersion {"version":0,"kRaftVersion":1}
//	KRaftVoters {"version":0,"voters":[{"voterId":1,"voterDirectoryId":"...","endpoints":[{"name":"CONTROLLER","host":"127.0.0.1","port":9093}],"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}
//
// The values are flexible messages (KIP-482): compact arrays and strings
// (unsigned varint length + 1, 0 = null), and a tagged-field section
// closing every struct, which is skipped.
//
//	LeaderChangeMessage (v0-1): version i16 | leaderId i32
//	    | voters [voterId i32, voterDirectoryId uuid (v1+)] | grantingVoters (same)
//	SnapshotHeaderRecord (v0): version i16 | lastContainedLogTimestamp i64
//	SnapshotFooterRecord (v0): version i16
//	KRaftVersionRecord (v0):   version i16 | kRaftVersion i16
//	VotersRecord (v0): version i16 | voters [voterId i32 | voterDirectoryId uuid
//	    | endpoints [name string | host string | port u16]
//	    | kRaftVersionFeature {minSupportedVersion i16 | maxSupportedVersion i16}]
//
// LeaderChangeMessage is kmsg's; the four others, which kmsg lacks, are
// read here with kbin's bounds-checked Reader. As Kafka's, the readers
// take the schema's version 0 whatever the version field says (1 for a
// LeaderChangeMessage that says so, as kmsg reads it), and ignore bytes
// after the message.

// kraftControl is how each KRaft control record type is printed.
var kraftControl = map[int16]struct {
	label  string
	decode func([]byte) (any, error)
}{
	2: {"LeaderChange:", decodeLeaderChange},
	3: {"SnapshotHeader", decodeSnapshotHeader},
	4: {"SnapshotFooter", decodeSnapshotFooter},
	5: {"KRaftVersion", decodeKRaftVersion},
	6: {"KRaftVoters", decodeVoters},
}

// kraftControlRecord renders the value of a KRaft control record of type
// typ as Kafka's tool does; ok is false for a type that is not one.
func kraftControlRecord(typ int16, value []byte) (string, bool) {
	k, ok := kraftControl[typ]
	if !ok {
		return "", false
	}
	v, err := k.decode(value)
	if err != nil {
		return fmt.Sprintf("controlType: %s(%d) value not decoded: %v", controlTypeName(typ), typ, err), true
	}
	return k.label + " " + kafkaJSON(v), true
}

// kafkaJSON writes v as Kafka's JsonConverters do: compact, and without
// Go's escaping of <, > and &.
func kafkaJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // only plain structs of numbers and strings reach here
		return fmt.Sprintf("%q", err.Error())
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

type leaderChangeJSON struct {
	Version        int16       `json:"version"`
	LeaderID       int32       `json:"leaderId"`
	Voters         []voterJSON `json:"voters"`
	GrantingVoters []voterJSON `json:"grantingVoters"`
}

type voterJSON struct {
	VoterID          int32   `json:"voterId"`
	VoterDirectoryID *string `json:"voterDirectoryId,omitempty"` // v1+
}

func decodeLeaderChange(value []byte) (any, error) {
	var m kmsg.LeaderChangeMessage
	if err := m.ReadFrom(value); err != nil {
		return nil, err
	}
	voters := func(vs []kmsg.LeaderChangeMessageVoter) []voterJSON {
		out := make([]voterJSON, len(vs))
		for i, v := range vs {
			out[i].VoterID = v.VoterID
			if m.Version >= 1 {
				id := kafkaUUID(kadm.TopicID(v.VoterDirectoryID))
				out[i].VoterDirectoryID = &id
			}
		}
		return out
	}
	return leaderChangeJSON{Version: m.Version, LeaderID: m.LeaderID, Voters: voters(m.Voters), GrantingVoters: voters(m.GrantingVoters)}, nil
}

// errTruncated: a value shorter than its message.
var errTruncated = errors.New("value truncated")

// flexReader reads a flexible message with kbin's Reader, which turns
// invalid (and returns zeros) once a read passes the end.
type flexReader struct{ kbin.Reader }

// skipTags skips a tagged-field section.
func (r *flexReader) skipTags() {
	for n := r.Uvarint(); n > 0 && r.Ok(); n-- {
		r.Uvarint() // tag
		r.Span(int(r.Uvarint()))
	}
}

// arrayLen reads a compact array's length; null reads as empty. Elements
// are appended one at a time, each read checked, so a length larger than
// the value allocates nothing beyond what the value holds.
func (r *flexReader) arrayLen() int {
	return max(int(r.CompactArrayLen()), 0)
}

func (r *flexReader) done(v any) (any, error) {
	if !r.Ok() {
		return nil, errTruncated
	}
	return v, nil
}

type snapshotHeaderJSON struct {
	Version                   int16 `json:"version"`
	LastContainedLogTimestamp int64 `json:"lastContainedLogTimestamp"`
}

func decodeSnapshotHeader(value []byte) (any, error) {
	r := flexReader{kbin.Reader{Src: value}}
	v := snapshotHeaderJSON{Version: r.Int16(), LastContainedLogTimestamp: r.Int64()}
	r.skipTags()
	return r.done(v)
}

type snapshotFooterJSON struct {
	Version int16 `json:"version"`
}

func decodeSnapshotFooter(value []byte) (any, error) {
	r := flexReader{kbin.Reader{Src: value}}
	v := snapshotFooterJSON{Version: r.Int16()}
	r.skipTags()
	return r.done(v)
}

type kraftVersionJSON struct {
	Version      int16 `json:"version"`
	KRaftVersion int16 `json:"kRaftVersion"`
}

func decodeKRaftVersion(value []byte) (any, error) {
	r := flexReader{kbin.Reader{Src: value}}
	v := kraftVersionJSON{Version: r.Int16(), KRaftVersion: r.Int16()}
	r.skipTags()
	return r.done(v)
}

type votersJSON struct {
	Version int16             `json:"version"`
	Voters  []votersVoterJSON `json:"voters"`
}

type votersVoterJSON struct {
	VoterID             int32            `json:"voterId"`
	VoterDirectoryID    string           `json:"voterDirectoryId"`
	Endpoints           []endpointJSON   `json:"endpoints"`
	KRaftVersionFeature versionRangeJSON `json:"kRaftVersionFeature"`
}

type endpointJSON struct {
	Name string `json:"name"`
	Host string `json:"host"`
	Port uint16 `json:"port"`
}

type versionRangeJSON struct {
	MinSupportedVersion int16 `json:"minSupportedVersion"`
	MaxSupportedVersion int16 `json:"maxSupportedVersion"`
}

func decodeVoters(value []byte) (any, error) {
	r := flexReader{kbin.Reader{Src: value}}
	v := votersJSON{Version: r.Int16(), Voters: []votersVoterJSON{}}
	for n := r.arrayLen(); n > 0 && r.Ok(); n-- {
		v.Voters = append(v.Voters, r.voter())
	}
	r.skipTags()
	return r.done(v)
}

func (r *flexReader) voter() votersVoterJSON {
	v := votersVoterJSON{VoterID: r.Int32(), VoterDirectoryID: kafkaUUID(kadm.TopicID(r.Uuid())), Endpoints: []endpointJSON{}}
	for n := r.arrayLen(); n > 0 && r.Ok(); n-- {
		e := endpointJSON{Name: r.CompactString(), Host: r.CompactString(), Port: r.Uint16()}
		r.skipTags()
		v.Endpoints = append(v.Endpoints, e)
	}
	v.KRaftVersionFeature = versionRangeJSON{MinSupportedVersion: r.Int16(), MaxSupportedVersion: r.Int16()}
	r.skipTags() // the feature struct's
	r.skipTags() // the voter's
	return v
}
