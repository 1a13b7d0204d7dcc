package group

import (
	"encoding/binary"
	"errors"
	"slices"
)

// KIP-848 consumer group records in __consumer_offsets, Kafka's formats
// (group-coordinator's ConsumerGroup*Key/Value). A key opens with an
// int16 that is the record type, then the key's fields in the
// non-flexible encoding (strings: int16 length + bytes). A value opens
// with its version (int16 = 0), then the fields in the flexible
// encoding: compact strings (uvarint length+1; 0 for null), compact
// arrays (uvarint count+1), 16-byte uuids, and a tagged-field section
// (uvarint count, then tag, size, bytes per field) closing each struct.
// A null value is a tombstone.
//
//	type 3 ConsumerGroupMetadata            key: group
//	       value: epoch int32 | tags {0: metadata_hash int64}
//	type 5 ConsumerGroupMemberMetadata      key: group | member_id
//	       value: instance_id nstring | rack_id nstring | client_id string
//	       | client_host string | subscribed_topic_names []string
//	       | subscribed_topic_regex nstring | rebalance_timeout_ms int32
//	       | server_assignor nstring
//	       | tags {0: classic_member_metadata: session_timeout_ms int32
//	         | supported_protocols []{name string | metadata bytes | tags}
//	         | tags} (set for a member of the classic protocol)
//	type 6 ConsumerGroupTargetAssignmentMetadata  key: group
//	       value: assignment_epoch int32 | tags
//	type 7 ConsumerGroupTargetAssignmentMember    key: group | member_id
//	       value: []{topic_id uuid | partitions []int32 | tags} | tags
//	type 8 ConsumerGroupCurrentMemberAssignment   key: group | member_id
//	       value: member_epoch int32 | previous_member_epoch int32
//	       | state int8 | assigned []TopicPartitions
//	       | pending_revocation []TopicPartitions | tags
//	type 16 ConsumerGroupRegularExpression  key: group | regular_expression
//	       value: topics []string | version int64 | timestamp int64 (ms)
//	       | tags
//
// Type 4 (partition metadata, replaced by the metadata hash in Kafka
// 4.1) is neither written nor read.
const (
	cgMetadataKey       = 3
	cgMemberKey         = 5
	cgTargetMetadataKey = 6
	cgTargetMemberKey   = 7
	cgCurrentKey        = 8
	cgRegexKey          = 16
)

// errShortRecord is a consumer group record cut short.
var errShortRecord = errors.New("consumer group record: truncated")

// cgKey encodes a consumer group record key: type, group and, for member
// records, the member id.
func cgKey(typ int16, groupID string, memberID ...string) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(typ))
	b = appendString(b, groupID)
	for _, m := range memberID {
		b = appendString(b, m)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// flex builds a flexible-version value.
type flex struct{ b []byte }

func newValue() *flex { return &flex{b: []byte{0, 0}} } // version 0

func (f *flex) i8(v int8)   { f.b = append(f.b, byte(v)) }
func (f *flex) i32(v int32) { f.b = binary.BigEndian.AppendUint32(f.b, uint32(v)) }
func (f *flex) i64(v int64) { f.b = binary.BigEndian.AppendUint64(f.b, uint64(v)) }
func (f *flex) uv(v int)    { f.b = binary.AppendUvarint(f.b, uint64(v)) }
func (f *flex) str(s string) {
	f.uv(len(s) + 1)
	f.b = append(f.b, s...)
}
func (f *flex) nstr(s *string) {
	if s == nil {
		f.uv(0)
		return
	}
	f.str(*s)
}
func (f *flex) noTags() { f.uv(0) }

// parts encodes a partition set as []TopicPartitions, topics by id and
// partitions ascending.
func (f *flex) parts(ps partSet) {
	byTopic := ps.byTopic()
	f.uv(len(byTopic) + 1)
	for _, t := range byTopic {
		f.b = append(f.b, t.id[:]...)
		f.uv(len(t.partitions) + 1)
		for _, p := range t.partitions {
			f.i32(p)
		}
		f.noTags()
	}
}

// reader decodes a value; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) need(n int) []byte {
	if r.err != nil || len(r.b) < n {
		r.err = errShortRecord
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}
func (r *reader) i8() int8 {
	if b := r.need(1); b != nil {
		return int8(b[0])
	}
	return 0
}
func (r *reader) i16() int16 {
	if b := r.need(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}
func (r *reader) i32() int32 {
	if b := r.need(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}
func (r *reader) i64() int64 {
	if b := r.need(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}
func (r *reader) uv() int {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > uint64(len(r.b))+1 { // a length never exceeds what is left
		r.err = errShortRecord
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}
func (r *reader) nstr() *string {
	n := r.uv()
	if n == 0 || r.err != nil {
		return nil
	}
	s := string(r.need(n - 1))
	return &s
}
func (r *reader) str() string {
	if s := r.nstr(); s != nil {
		return *s
	}
	return ""
}

// oldString reads a non-flexible string (keys).
func (r *reader) oldString() string {
	n := r.i16()
	if n < 0 {
		r.err = errShortRecord
		return ""
	}
	return string(r.need(int(n)))
}

// tags reads a tagged-field section, handing each field to fn.
func (r *reader) tags(fn func(tag int, data []byte)) {
	for n := r.uv(); n > 0 && r.err == nil; n-- {
		tag, size := r.uv(), r.uv()
		data := r.need(size)
		if r.err == nil && fn != nil {
			fn(tag, data)
		}
	}
}

func (r *reader) parts() partSet {
	ps := partSet{}
	for n := r.uv() - 1; n > 0 && r.err == nil; n-- {
		var id TopicID
		copy(id[:], r.need(16))
		for m := r.uv() - 1; m > 0 && r.err == nil; m-- {
			ps.add(id, r.i32())
		}
		r.tags(nil)
	}
	return ps
}

// cgMetadataValue encodes the group epoch and its subscription
// metadata hash (tag 0, KIP-1101).
func cgMetadataValue(epoch int32, hash int64) []byte {
	f := newValue()
	f.i32(epoch)
	f.uv(1)
	f.uv(0)
	f.uv(8)
	f.i64(hash)
	return f.b
}

func cgMemberValue(m *cmember) []byte {
	f := newValue()
	f.nstr(nullable(m.instanceID))
	f.nstr(nullable(m.rackID))
	f.str(m.clientID)
	f.str(m.clientHost)
	f.uv(len(m.topics) + 1)
	for _, t := range m.topics {
		f.str(t)
	}
	f.str(m.regex) // Kafka writes "" for a member without one
	f.i32(m.rebalanceTimeout)
	f.nstr(nullable(m.assignor))
	if m.classic == nil {
		f.noTags()
		return f.b
	}
	cm := &flex{} // tag 0: ClassicMemberMetadata
	cm.i32(m.classic.sessionTimeout)
	cm.uv(len(m.classic.protocols) + 1)
	for _, p := range m.classic.protocols {
		cm.str(p.name)
		cm.uv(len(p.metadata) + 1)
		cm.b = append(cm.b, p.metadata...)
		cm.noTags()
	}
	cm.noTags()
	f.uv(1)
	f.uv(0)
	f.uv(len(cm.b))
	f.b = append(f.b, cm.b...)
	return f.b
}

// readClassicMeta decodes ConsumerGroupMemberMetadataValue's tag 0.
func readClassicMeta(b []byte) (*classicMeta, error) {
	r := &reader{b: b}
	cm := &classicMeta{sessionTimeout: r.i32()}
	for n := r.uv() - 1; n > 0 && r.err == nil; n-- {
		name := r.str()
		md := r.need(max(r.uv()-1, 0)) // null metadata reads as empty
		r.tags(nil)
		cm.protocols = append(cm.protocols, protocol{name: name, metadata: slices.Clone(md)})
	}
	r.tags(nil)
	return cm, r.err
}

func cgTargetMetadataValue(epoch int32) []byte {
	f := newValue()
	f.i32(epoch)
	f.noTags()
	return f.b
}

func cgTargetMemberValue(ps partSet) []byte {
	f := newValue()
	f.parts(ps)
	f.noTags()
	return f.b
}

func cgCurrentValue(m *cmember) []byte {
	f := newValue()
	f.i32(m.epoch)
	f.i32(m.prevEpoch)
	f.i8(int8(m.state))
	f.parts(m.assigned)
	f.parts(m.revoking)
	f.noTags()
	return f.b
}

// cgRegexKeyBytes is the key of a regular expression's resolution.
func cgRegexKeyBytes(groupID, expr string) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(cgRegexKey))
	b = appendString(b, groupID)
	return appendString(b, expr)
}

func cgRegexValue(r *resolvedRegex) []byte {
	f := newValue()
	f.uv(len(r.topics) + 1)
	for _, t := range r.topics {
		f.str(t)
	}
	f.i64(r.version)
	f.i64(r.timestamp)
	f.noTags()
	return f.b
}

func readCGRegex(b []byte) (*resolvedRegex, error) {
	r := valueReader(b)
	out := &resolvedRegex{topics: []string{}}
	for n := r.uv() - 1; n > 0 && r.err == nil; n-- {
		out.topics = append(out.topics, r.str())
	}
	out.version, out.timestamp = r.i64(), r.i64()
	r.tags(nil)
	slices.Sort(out.topics)
	out.topics = slices.Compact(out.topics)
	return out, r.err
}

// cgRecordKey is a decoded consumer group key.
type cgRecordKey struct {
	typ             int16
	group, memberID string
	regex           string // type 16
}

func readCGKey(b []byte) (cgRecordKey, error) {
	r := &reader{b: b}
	k := cgRecordKey{typ: r.i16()}
	k.group = r.oldString()
	switch k.typ {
	case cgMetadataKey, cgTargetMetadataKey:
	case cgRegexKey:
		k.regex = r.oldString()
	default:
		k.memberID = r.oldString()
	}
	return k, r.err
}

// valueReader opens a value, checking its version.
func valueReader(b []byte) *reader {
	r := &reader{b: b}
	if v := r.i16(); v != 0 && r.err == nil {
		r.err = errors.New("consumer group record: unknown value version")
	}
	return r
}

func readCGMetadata(b []byte) (epoch int32, hash int64, err error) {
	r := valueReader(b)
	epoch = r.i32()
	r.tags(func(tag int, data []byte) {
		if tag == 0 && len(data) == 8 {
			hash = int64(binary.BigEndian.Uint64(data))
		}
	})
	return epoch, hash, r.err
}

func readCGMember(id string, b []byte) (*cmember, error) {
	r := valueReader(b)
	m := &cmember{id: id}
	m.instanceID, m.rackID = derefString(r.nstr()), derefString(r.nstr())
	m.clientID, m.clientHost = r.str(), r.str()
	for n := r.uv() - 1; n > 0 && r.err == nil; n-- {
		m.topics = append(m.topics, r.str())
	}
	m.regex = derefString(r.nstr())
	m.rebalanceTimeout = r.i32()
	m.assignor = derefString(r.nstr())
	r.tags(func(tag int, data []byte) {
		if tag == 0 && r.err == nil {
			m.classic, r.err = readClassicMeta(data)
		}
	})
	slices.Sort(m.topics)
	return m, r.err
}

func readCGEpoch(b []byte) (int32, error) {
	r := valueReader(b)
	e := r.i32()
	r.tags(nil)
	return e, r.err
}

func readCGTargetMember(b []byte) (partSet, error) {
	r := valueReader(b)
	ps := r.parts()
	r.tags(nil)
	return ps, r.err
}

func readCGCurrent(m *cmember, b []byte) error {
	r := valueReader(b)
	m.epoch, m.prevEpoch, m.state = r.i32(), r.i32(), memberState(r.i8())
	m.assigned, m.revoking = r.parts(), r.parts()
	r.tags(nil)
	return r.err
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
