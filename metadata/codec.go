package metadata

import (
	"errors"
	"fmt"
)

// Errors of DecodeRecord and DecodeEntry.
var (
	// ErrCorruptRecord: the bytes are not a record (truncated, a length
	// past the end, trailing bytes, a value out of its range).
	ErrCorruptRecord = errors.New("corrupt metadata record")
	// ErrUnsupportedRecord: a well-framed record of an api key or
	// version this package does not read.
	ErrUnsupportedRecord = errors.New("unsupported metadata record")
)

// A record in Kafka's binary format: Kafka's ApiMessageAndVersion as
// MetadataRecordSerde (AbstractApiMessageSerde) writes it into the
// value of a record of the metadata log, __cluster_metadata-0, and of
// its snapshots:
//
//	frame version   uvarint, 1
//	api key         uvarint, the record type (the table below)
//	version         uvarint, the record's version
//	fields          the record's fields in Kafka's generated message
//	                format, flexible (codec_wire.go), ending with the
//	                record's tagged fields
//
// Nothing follows the fields: Kafka refuses trailing bytes, and so does
// DecodeRecord. These numbers are part of the format and never change.
const frameVersion = 1

// Kafka's api keys of the metadata records this package reads and
// writes (the "apiKey" of each metadata/src/main/resources/common/
// metadata/*.json schema).
const (
	keyRegisterBroker           = 0
	keyTopic                    = 2
	keyPartition                = 3
	keyConfig                   = 4
	keyPartitionChange          = 5
	keyFenceBroker              = 7
	keyUnfenceBroker            = 8
	keyRemoveTopic              = 9
	keyFeatureLevel             = 12
	keyProducerIds              = 15
	keyBrokerRegistrationChange = 17
)

// The versions written are those Kafka 4.4 writes at its latest
// production metadata.version (4.4-IV2): RegisterBrokerRecord 4,
// PartitionRecord 2, PartitionChangeRecord 2, BrokerRegistrationChange-
// Record 0 (1 when it marks a controlled shutdown, as Kafka's
// ClusterControlManager writes it), every other record 0. DecodeRecord
// reads every version of Kafka's schemas up to those, and up to 3 for
// BrokerRegistrationChangeRecord.
const (
	writeRegisterBrokerVersion  = 4
	writePartitionVersion       = 2
	writePartitionChangeVersion = 2
	brokerChangeShutdownVersion = 1 // the first with InControlledShutdown
	maxBrokerChangeVersion      = 3 // Kafka 4.3+: CordonedLogDirs (KIP-1066)
)

// AppendRecord appends rec in Kafka's format to dst.
//
// rec holds values Kafka can write: an endpoint's port fits in 16 bits
// and its security protocol is one of Kafka's (PLAINTEXT, SSL,
// SASL_PLAINTEXT, SASL_SSL; another is written as -1, which no reader
// takes), names and values are at most 32767 bytes, and a leader
// recovery state is 0 or 1. The controller and config refuse other
// values before they reach a record, as Kafka's do.
func AppendRecord(dst []byte, rec Record) []byte {
	switch r := rec.(type) {
	case RegisterBrokerRecord:
		return appendRegisterBroker(dst, r)
	case BrokerRegistrationChangeRecord:
		return appendBrokerChange(dst, r)
	case FenceBrokerRecord:
		return appendBrokerIDEpoch(header(dst, keyFenceBroker, 0), r.BrokerID, r.BrokerEpoch)
	case UnfenceBrokerRecord:
		return appendBrokerIDEpoch(header(dst, keyUnfenceBroker, 0), r.BrokerID, r.BrokerEpoch)
	case TopicRecord:
		return appendTopic(dst, r)
	case PartitionRecord:
		return appendPartition(dst, r)
	case PartitionChangeRecord:
		return appendPartitionChange(dst, r)
	case RemoveTopicRecord:
		dst = header(dst, keyRemoveTopic, 0)
		return append(append(dst, r.TopicID[:]...), 0)
	case ConfigRecord:
		return appendConfig(dst, r)
	case ProducerIdsRecord:
		return appendProducerIDs(dst, r)
	case FeatureLevelRecord:
		return appendFeatureLevel(dst, r)
	case UserScramCredentialRecord:
		return appendUserScramCredential(dst, r)
	case RemoveUserScramCredentialRecord:
		return appendRemoveUserScramCredential(dst, r)
	case ClientQuotaRecord:
		return appendClientQuota(dst, r)
	case AccessControlEntryRecord:
		return appendAccessControlEntry(dst, r)
	case RemoveAccessControlEntryRecord:
		return appendRemoveAccessControlEntry(dst, r)
	}
	if b, ok := appendTxnRecord(dst, rec); ok {
		return b
	}
	// Record is closed: every implementation is listed above.
	panic(fmt.Sprintf("metadata: AppendRecord of unknown record type %T", rec))
}

func header(dst []byte, key, version uint32) []byte {
	dst = appendUvarint(dst, frameVersion)
	dst = appendUvarint(dst, key)
	return appendUvarint(dst, version)
}

// decoder reads one record's fields at a version.
type decoder struct {
	maxVersion uint32
	decode     func(r *reader, version uint32) Record
}

var decoders = map[uint32]decoder{
	keyRegisterBroker:           {writeRegisterBrokerVersion, decodeRegisterBroker},
	keyTopic:                    {0, decodeTopic},
	keyPartition:                {writePartitionVersion, decodePartition},
	keyConfig:                   {0, decodeConfig},
	keyPartitionChange:          {writePartitionChangeVersion, decodePartitionChange},
	keyFenceBroker:              {0, decodeFenceBroker},
	keyUnfenceBroker:            {0, decodeUnfenceBroker},
	keyRemoveTopic:              {0, decodeRemoveTopic},
	keyFeatureLevel:             {0, decodeFeatureLevel},
	keyProducerIds:              {0, decodeProducerIDs},
	keyBrokerRegistrationChange: {maxBrokerChangeVersion, decodeBrokerChange},
}

// DecodeRecord decodes one record written by AppendRecord or by Kafka.
// b must hold the record exactly. An api key or version it does not
// read is ErrUnsupportedRecord; bytes that are no record are
// ErrCorruptRecord. The record shares no memory with b.
func DecodeRecord(b []byte) (Record, error) {
	r := &reader{b: b}
	frame, key, version := r.uvarint(), r.uvarint(), r.uvarint()
	if r.err != nil {
		return nil, fmt.Errorf("decode metadata record header: %w", r.err)
	}
	if frame != frameVersion {
		return nil, fmt.Errorf("%w: frame version %d, want %d", ErrCorruptRecord, frame, frameVersion)
	}
	d, ok := decoders[key]
	if !ok || version > d.maxVersion {
		if name := RecordTypeName(uint64(key)); name != "" {
			return nil, fmt.Errorf("%w: api key %d version %d (%s)", ErrUnsupportedRecord, key, version, name)
		}
		return nil, fmt.Errorf("%w: api key %d version %d", ErrUnsupportedRecord, key, version)
	}
	rec := d.decode(r, version)
	if r.err == nil && r.remaining() != 0 {
		r.fail("%d bytes of trailing data", r.remaining())
	}
	if r.err != nil {
		return nil, fmt.Errorf("decode metadata record api key %d version %d: %w", key, version, r.err)
	}
	return rec, nil
}

// recordTypeNames are the names of Kafka 4.x's metadata record types by
// api key (Kafka's MetadataRecordType), those this package reads and
// those it does not.
var recordTypeNames = map[uint64]string{
	0: "RegisterBrokerRecord", 1: "UnregisterBrokerRecord", 2: "TopicRecord",
	3: "PartitionRecord", 4: "ConfigRecord", 5: "PartitionChangeRecord",
	7: "FenceBrokerRecord", 8: "UnfenceBrokerRecord", 9: "RemoveTopicRecord",
	10: "DelegationTokenRecord", 11: "UserScramCredentialRecord", 12: "FeatureLevelRecord",
	14: "ClientQuotaRecord", 15: "ProducerIdsRecord", 17: "BrokerRegistrationChangeRecord",
	18: "AccessControlEntryRecord", 19: "RemoveAccessControlEntryRecord", 20: "NoOpRecord",
	21: "ZkMigrationStateRecord", 22: "RemoveUserScramCredentialRecord",
	23: "BeginTransactionRecord", 24: "EndTransactionRecord", 25: "AbortTransactionRecord",
	26: "RemoveDelegationTokenRecord", 27: "RegisterControllerRecord", 28: "ClearElrRecord",
	29: "UnregisterControllerRecord",
}

// RecordTypeName is the name Kafka gives the metadata record type of api
// key, "" for a key Kafka 4.x does not have.
func RecordTypeName(key uint64) string { return recordTypeNames[key] }

// RecordHeader reads the api key and version at the start of a record
// (after its frame version), ok false when b is too short for them.
func RecordHeader(b []byte) (key, version uint64, ok bool) {
	r := &reader{b: b}
	_, k, v := r.uvarint(), r.uvarint(), r.uvarint()
	return uint64(k), uint64(v), r.err == nil
}
