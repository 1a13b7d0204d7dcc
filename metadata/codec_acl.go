package metadata

// The ACL records: AccessControlEntryRecord and
// RemoveAccessControlEntryRecord (Kafka's
// metadata/src/main/resources/common/metadata/AccessControlEntryRecord.json
// and RemoveAccessControlEntryRecord.json, both version 0 only,
// flexible). The int8 codes are Kafka's ResourceType, PatternType,
// AclOperation and AclPermissionType.

// Api keys of the ACL records. Part of the format; never change.
const (
	keyAccessControlEntry       = 18
	keyRemoveAccessControlEntry = 19
)

// AccessControlEntryRecord adds an ACL under Id. Kafka:
// AccessControlEntryRecord (api key 18). A record naming an Id the image
// holds replaces that ACL, as Kafka's AclsDelta does.
type AccessControlEntryRecord struct {
	ID             [16]byte
	ResourceType   int8
	ResourceName   string
	PatternType    int8
	Principal      string
	Host           string
	Operation      int8
	PermissionType int8
}

// RemoveAccessControlEntryRecord removes the ACL with Id. Kafka:
// RemoveAccessControlEntryRecord (api key 19).
type RemoveAccessControlEntryRecord struct {
	ID [16]byte
}

func (AccessControlEntryRecord) isRecord()       {}
func (RemoveAccessControlEntryRecord) isRecord() {}

func init() {
	decoders[keyAccessControlEntry] = decoder{0, decodeAccessControlEntry}
	decoders[keyRemoveAccessControlEntry] = decoder{0, decodeRemoveAccessControlEntry}
}

// AccessControlEntryRecord, version 0:
//
//	Id              uuid
//	ResourceType    int8
//	ResourceName    compact string
//	PatternType     int8
//	Principal       compact string
//	Host            compact string
//	Operation       int8
//	PermissionType  int8
//	tagged fields   none
func appendAccessControlEntry(b []byte, r AccessControlEntryRecord) []byte {
	b = header(b, keyAccessControlEntry, 0)
	b = append(b, r.ID[:]...)
	b = append(b, byte(r.ResourceType))
	b = appendString(b, r.ResourceName)
	b = append(b, byte(r.PatternType))
	b = appendString(b, r.Principal)
	b = appendString(b, r.Host)
	b = append(b, byte(r.Operation), byte(r.PermissionType))
	return append(b, 0)
}

func decodeAccessControlEntry(r *reader, _ uint32) Record {
	var rec AccessControlEntryRecord
	rec.ID = r.uuid()
	rec.ResourceType = r.int8()
	rec.ResourceName = r.string("ResourceName")
	rec.PatternType = r.int8()
	rec.Principal = r.string("Principal")
	rec.Host = r.string("Host")
	rec.Operation, rec.PermissionType = r.int8(), r.int8()
	r.noTags()
	return rec
}

// RemoveAccessControlEntryRecord, version 0: Id uuid, no tagged fields.
func appendRemoveAccessControlEntry(b []byte, r RemoveAccessControlEntryRecord) []byte {
	b = header(b, keyRemoveAccessControlEntry, 0)
	return append(append(b, r.ID[:]...), 0)
}

func decodeRemoveAccessControlEntry(r *reader, _ uint32) Record {
	rec := RemoveAccessControlEntryRecord{ID: r.uuid()}
	r.noTags()
	return rec
}
