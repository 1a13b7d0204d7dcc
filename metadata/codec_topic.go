package metadata

// The topic records: TopicRecord, PartitionRecord, PartitionChangeRecord,
// RemoveTopicRecord and ConfigRecord.

// TopicRecord (api key 2), version 0: Name string, TopicId uuid.
func appendTopic(b []byte, r TopicRecord) []byte {
	b = header(b, keyTopic, 0)
	b = appendString(b, r.Name)
	b = append(b, r.TopicID[:]...)
	return append(b, 0)
}

func decodeTopic(r *reader, _ uint32) Record {
	rec := TopicRecord{Name: r.string("Name"), TopicID: r.uuid()}
	r.noTags()
	return rec
}

// RemoveTopicRecord (api key 9), version 0: TopicId uuid.
func decodeRemoveTopic(r *reader, _ uint32) Record {
	rec := RemoveTopicRecord{TopicID: r.uuid()}
	r.noTags()
	return rec
}

// ConfigRecord (api key 4), version 0: ResourceType int8, ResourceName
// string, Name string, Value nullable string (null deletes).
func appendConfig(b []byte, r ConfigRecord) []byte {
	b = header(b, keyConfig, 0)
	b = append(b, byte(r.ResourceType))
	b = appendString(b, r.ResourceName)
	b = appendString(b, r.Name)
	b = appendNullableString(b, r.Value)
	return append(b, 0)
}

func decodeConfig(r *reader, _ uint32) Record {
	var rec ConfigRecord
	rec.ResourceType = ConfigResourceType(r.int8())
	rec.ResourceName, rec.Name = r.string("ResourceName"), r.string("Name")
	rec.Value = r.nullableString("Value")
	r.noTags()
	return rec
}

// PartitionRecord (api key 3), versions 0-2:
//
//	PartitionId                  int32
//	TopicId                      uuid
//	Replicas, Isr                []int32
//	RemovingReplicas             []int32
//	AddingReplicas               []int32
//	Leader                       int32
//	LeaderEpoch                  int32
//	PartitionEpoch               int32
//	Directories                  []uuid, v1+: written empty, Kafka's
//	                             default, which its reader takes as every
//	                             replica's directory unknown
//	                             (DirectoryId.MIGRATING); read and dropped
//	                             (Varve does not assign replicas to
//	                             directories, KIP-858)
//	tag 0 LeaderRecoveryState    int8, default 0 (left out when 0)
//	tag 1 EligibleLeaderReplicas nullable []int32, v2+
//	tag 2 LastKnownElr           nullable []int32, v2+
//
// The ELR fields (KIP-966) are written null, Kafka's default, and read
// and dropped: Varve does not finalize eligible.leader.replicas.version,
// under which Kafka keeps them empty too.
func appendPartition(b []byte, r PartitionRecord) []byte {
	b = header(b, keyPartition, writePartitionVersion)
	b = appendInt32(b, r.PartitionID)
	b = append(b, r.TopicID[:]...)
	b = appendInt32s(b, r.Replicas)
	b = appendInt32s(b, r.ISR)
	b = appendInt32s(b, r.RemovingReplicas)
	b = appendInt32s(b, r.AddingReplicas)
	b = appendInt32(b, r.Leader)
	b = appendInt32(b, r.LeaderEpoch)
	b = appendInt32(b, r.PartitionEpoch)
	b = appendUvarint(b, 1) // Directories: empty
	var fields []taggedField
	if r.LeaderRecovery != Recovered {
		fields = append(fields, taggedField{0, func(p []byte) []byte { return append(p, byte(r.LeaderRecovery)) }})
	}
	return appendTags(b, fields)
}

func decodePartition(r *reader, version uint32) Record {
	var rec PartitionRecord
	rec.PartitionID, rec.TopicID = r.int32(), r.uuid()
	rec.Replicas, rec.ISR = r.int32s("Replicas"), r.int32s("Isr")
	rec.RemovingReplicas, rec.AddingReplicas = r.int32s("RemovingReplicas"), r.int32s("AddingReplicas")
	rec.Leader, rec.LeaderEpoch, rec.PartitionEpoch = r.int32(), r.int32(), r.int32()
	if version >= 1 {
		r.skipUUIDs("Directories")
	}
	r.tags(func(tag uint32, sub *reader) bool {
		switch {
		case tag == 0:
			rec.LeaderRecovery = decodeRecoveryState(sub)
		case (tag == 1 || tag == 2) && version >= 2:
			sub.nullableInt32s("ELR")
		default:
			return false
		}
		return true
	})
	return rec
}

func decodeRecoveryState(r *reader) LeaderRecoveryState {
	switch s := LeaderRecoveryState(r.int8()); s {
	case Recovered, Recovering:
		return s
	default:
		r.fail("leader recovery state %d", s)
		return 0
	}
}

// PartitionChangeRecord (api key 5), versions 0-2; every field but the
// first two is tagged, and left out when it keeps its default, which
// means "no change":
//
//	PartitionId                  int32
//	TopicId                      uuid
//	tag 0 Isr                    nullable []int32, default null
//	tag 1 Leader                 int32, default -2 (NoLeaderChange)
//	tag 2 Replicas               nullable []int32, default null
//	tag 3 RemovingReplicas       nullable []int32, default null
//	tag 4 AddingReplicas         nullable []int32, default null
//	tag 5 LeaderRecoveryState    int8, default -1 (Varve's nil)
//	tag 6 EligibleLeaderReplicas nullable []int32, v2+: read and dropped
//	tag 7 LastKnownElr           nullable []int32, v2+: read and dropped
//	tag 8 Directories            nullable []uuid, v1+: read and dropped
//
// A slice Varve holds nil is written null (no change); an empty,
// non-nil one is written as an empty array (cleared).
func appendPartitionChange(b []byte, r PartitionChangeRecord) []byte {
	b = header(b, keyPartitionChange, writePartitionChangeVersion)
	b = appendInt32(b, r.PartitionID)
	b = append(b, r.TopicID[:]...)
	var fields []taggedField // in ascending tag order
	list := func(tag uint32, s []int32) {
		if s != nil {
			fields = append(fields, taggedField{tag, func(p []byte) []byte { return appendInt32s(p, s) }})
		}
	}
	list(0, r.ISR)
	if r.Leader != NoLeaderChange {
		fields = append(fields, taggedField{1, func(p []byte) []byte { return appendInt32(p, r.Leader) }})
	}
	list(2, r.Replicas)
	list(3, r.RemovingReplicas)
	list(4, r.AddingReplicas)
	if s := r.LeaderRecovery; s != nil && *s != -1 {
		fields = append(fields, taggedField{5, func(p []byte) []byte { return append(p, byte(*s)) }})
	}
	return appendTags(b, fields)
}

func decodePartitionChange(r *reader, version uint32) Record {
	rec := PartitionChangeRecord{PartitionID: r.int32(), TopicID: r.uuid(), Leader: NoLeaderChange}
	r.tags(func(tag uint32, sub *reader) bool {
		switch {
		case tag == 0:
			rec.ISR = sub.nullableInt32s("Isr")
		case tag == 1:
			rec.Leader = sub.int32()
		case tag == 2:
			rec.Replicas = sub.nullableInt32s("Replicas")
		case tag == 3:
			rec.RemovingReplicas = sub.nullableInt32s("RemovingReplicas")
		case tag == 4:
			rec.AddingReplicas = sub.nullableInt32s("AddingReplicas")
		case tag == 5:
			rec.LeaderRecovery = decodeRecoveryChange(sub)
		case (tag == 6 || tag == 7) && version >= 2:
			sub.nullableInt32s("ELR")
		case tag == 8 && version >= 1:
			sub.skipUUIDs("Directories")
		default:
			return false
		}
		return true
	})
	return rec
}

// decodeRecoveryChange reads tag 5: -1 is no change.
func decodeRecoveryChange(r *reader) *LeaderRecoveryState {
	if r.remaining() == 1 && int8(r.b[r.off]) == -1 {
		r.int8()
		return nil
	}
	s := decodeRecoveryState(r)
	return &s
}
