package metadata

// Records that frame changes of the metadata rather than change it
// (KIP-868 metadata transactions, and the active controller's no-op).
// Apply leaves the image as it is for each of them: a reader of the log
// uses them to apply a change that spans several records at once, or
// to drop it.
const (
	keyNoOp             = 20
	keyBeginTransaction = 23
	keyEndTransaction   = 24
	keyAbortTransaction = 25
)

// NoOpRecord changes nothing. Kafka: NoOpRecord (api key 20), which
// Kafka's active controller writes to advance the log's high watermark.
type NoOpRecord struct{}

// BeginTransactionRecord opens a metadata transaction: the records up to
// the next EndTransactionRecord apply together, or not at all if an
// AbortTransactionRecord comes first. Kafka: BeginTransactionRecord
// (api key 23); Name is its optional description (tagged field 0; ""
// is written as absent).
type BeginTransactionRecord struct {
	Name string
}

// EndTransactionRecord closes the open metadata transaction, whose
// records then apply. Kafka: EndTransactionRecord (api key 24).
type EndTransactionRecord struct{}

// AbortTransactionRecord drops the open metadata transaction's records.
// Kafka: AbortTransactionRecord (api key 25); Reason is its optional
// description (tagged field 0; "" is written as absent).
type AbortTransactionRecord struct {
	Reason string
}

func (NoOpRecord) isRecord()             {}
func (BeginTransactionRecord) isRecord() {}
func (EndTransactionRecord) isRecord()   {}
func (AbortTransactionRecord) isRecord() {}

// IsControl reports whether rec frames changes (a transaction marker or
// a no-op) rather than changing the image.
func IsControl(rec Record) bool {
	switch rec.(type) {
	case NoOpRecord, BeginTransactionRecord, EndTransactionRecord, AbortTransactionRecord:
		return true
	}
	return false
}

func init() {
	decoders[keyNoOp] = decoder{0, func(r *reader, _ uint32) Record { r.noTags(); return NoOpRecord{} }}
	decoders[keyEndTransaction] = decoder{0, func(r *reader, _ uint32) Record { r.noTags(); return EndTransactionRecord{} }}
	decoders[keyBeginTransaction] = decoder{0, func(r *reader, _ uint32) Record {
		return BeginTransactionRecord{Name: readTaggedString(r, "Name")}
	}}
	decoders[keyAbortTransaction] = decoder{0, func(r *reader, _ uint32) Record {
		return AbortTransactionRecord{Reason: readTaggedString(r, "Reason")}
	}}
}

// appendTxnRecord appends one of the records of this file.
func appendTxnRecord(dst []byte, rec Record) ([]byte, bool) {
	switch r := rec.(type) {
	case NoOpRecord:
		return append(header(dst, keyNoOp, 0), 0), true
	case EndTransactionRecord:
		return append(header(dst, keyEndTransaction, 0), 0), true
	case BeginTransactionRecord:
		return appendTaggedString(header(dst, keyBeginTransaction, 0), r.Name), true
	case AbortTransactionRecord:
		return appendTaggedString(header(dst, keyAbortTransaction, 0), r.Reason), true
	}
	return dst, false
}

// appendTaggedString appends a tagged-field section holding s as the
// nullable string of tag 0, or no field when s is "" (Kafka's default,
// null, is not written).
func appendTaggedString(dst []byte, s string) []byte {
	if s == "" {
		return appendTags(dst, nil)
	}
	return appendTags(dst, []taggedField{{0, func(b []byte) []byte { return appendString(b, s) }}})
}

// readTaggedString reads a tagged-field section whose tag 0 is a
// nullable string; null or absent is "".
func readTaggedString(r *reader, field string) string {
	var s string
	r.tags(func(tag uint32, sub *reader) bool {
		if tag != 0 {
			return false
		}
		if p := sub.nullableString(field); p != nil {
			s = *p
		}
		return true
	})
	return s
}
