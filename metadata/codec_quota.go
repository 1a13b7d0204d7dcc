package metadata

import (
	"encoding/binary"
	"math"
)

// ClientQuotaRecord (api key 14), version 0, the only one Kafka has:
//
//	Entity      compact array of
//	  EntityType  compact string ("user", "client-id", "ip")
//	  EntityName  compact nullable string (null: the type's default)
//	  tagged fields
//	Key         compact string
//	Value       float64 (IEEE 754, big-endian)
//	Remove      bool
//	tagged fields

const keyClientQuota = 14

func init() {
	decoders[keyClientQuota] = decoder{0, decodeClientQuota}
}

func appendClientQuota(b []byte, r ClientQuotaRecord) []byte {
	b = header(b, keyClientQuota, 0)
	b = appendUvarint(b, uint32(len(r.Entity))+1)
	for _, e := range r.Entity {
		b = appendString(b, e.Type)
		b = appendNullableString(b, e.Name)
		b = append(b, 0)
	}
	b = appendString(b, r.Key)
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(r.Value))
	b = appendBool(b, r.Remove)
	return append(b, 0)
}

func decodeClientQuota(r *reader, _ uint32) Record {
	var rec ClientQuotaRecord
	// Each entity takes at least 3 bytes: two lengths and its tags.
	n, null := r.length("Entity", 3)
	if null {
		r.fail("Entity: null in a non-nullable array")
	}
	for range n {
		if r.err != nil {
			break
		}
		e := QuotaEntityData{Type: r.string("EntityType"), Name: r.nullableString("EntityName")}
		r.noTags()
		rec.Entity = append(rec.Entity, e)
	}
	rec.Key = r.string("Key")
	rec.Value = math.Float64frombits(uint64(r.int64()))
	rec.Remove = r.bool()
	r.noTags()
	return rec
}
