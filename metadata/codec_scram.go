package metadata

// The SCRAM credential records (KIP-554), both at version 0, the only
// one Kafka has:
//
// UserScramCredentialRecord (api key 11):
//
//	Name        compact string
//	Mechanism   int8 (1 SCRAM-SHA-256, 2 SCRAM-SHA-512)
//	Salt        compact bytes
//	StoredKey   compact bytes
//	ServerKey   compact bytes
//	Iterations  int32
//	tagged fields
//
// RemoveUserScramCredentialRecord (api key 22):
//
//	Name        compact string
//	Mechanism   int8
//	tagged fields
//
// Compact bytes are written as a compact string is: uvarint(length+1),
// then the bytes.

const (
	keyUserScramCredential       = 11
	keyRemoveUserScramCredential = 22
)

func init() {
	decoders[keyUserScramCredential] = decoder{0, decodeUserScramCredential}
	decoders[keyRemoveUserScramCredential] = decoder{0, decodeRemoveUserScramCredential}
}

func appendUserScramCredential(b []byte, r UserScramCredentialRecord) []byte {
	b = header(b, keyUserScramCredential, 0)
	b = appendString(b, r.Name)
	b = append(b, byte(r.Mechanism))
	b = appendBytes(b, r.Salt)
	b = appendBytes(b, r.StoredKey)
	b = appendBytes(b, r.ServerKey)
	b = appendInt32(b, r.Iterations)
	return append(b, 0)
}

func decodeUserScramCredential(r *reader, _ uint32) Record {
	rec := UserScramCredentialRecord{Name: r.string("Name"), Mechanism: ScramMechanism(r.int8())}
	rec.Salt, rec.StoredKey, rec.ServerKey = r.bytes("Salt"), r.bytes("StoredKey"), r.bytes("ServerKey")
	rec.Iterations = r.int32()
	r.noTags()
	return rec
}

func appendRemoveUserScramCredential(b []byte, r RemoveUserScramCredentialRecord) []byte {
	b = header(b, keyRemoveUserScramCredential, 0)
	b = appendString(b, r.Name)
	b = append(b, byte(r.Mechanism))
	return append(b, 0)
}

func decodeRemoveUserScramCredential(r *reader, _ uint32) Record {
	rec := RemoveUserScramCredentialRecord{Name: r.string("Name"), Mechanism: ScramMechanism(r.int8())}
	r.noTags()
	return rec
}

func appendBytes(b, p []byte) []byte {
	b = appendUvarint(b, uint32(len(p))+1)
	return append(b, p...)
}

// bytes reads non-nullable compact bytes into a copy; empty gives nil.
func (r *reader) bytes(field string) []byte {
	n, null := r.length(field, 1)
	if null {
		r.fail("%s: null in non-nullable bytes", field)
	}
	if n == 0 || r.err != nil {
		return nil
	}
	return append([]byte(nil), r.take(n)...)
}
