package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"runtime/debug"
	"testing"
)

const testNow = 1_700_000_000_000

// rulesFor is a topic with Kafka 4.x's defaults: CreateTime, before.max
// unbounded, after.max one hour, max.message.bytes 1 MiB.
func rulesFor(compacted bool) ProduceRules {
	return ProduceRules{MaxBatchBytes: 1 << 20, Compacted: compacted, CheckTimestamps: true,
		Now: testNow, BeforeMaxMs: maxInt64, AfterMaxMs: 3_600_000}
}

// rawBatch assembles a batch around an uncompressed records section that
// is compressed with c; count is both RecordCount and LastOffsetDelta+1.
func rawBatch(t testing.TB, c Compression, count int32, recs []byte) []byte {
	t.Helper()
	h := BatchHeader{PartitionLeaderEpoch: -1, Magic: MagicV2, Attributes: int16(c),
		LastOffsetDelta: count - 1, BaseTimestamp: testNow, MaxTimestamp: testNow,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, RecordCount: count}
	b, err := appendBatch(nil, h, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recordsOf encodes records with the given offset deltas.
func recordsOf(deltas ...int32) []byte {
	var out []byte
	for _, d := range deltas {
		out = appendRecord(out, d, 0, &Record{Key: []byte("k"), Value: []byte("v")})
	}
	return out
}

func expectErr(t *testing.T, name string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got %v, want %v", name, err, want)
	}
}

// Kafka: LogValidator accepts what a producer builds, for every codec.
func TestValidateProducedAcceptsEveryCodec(t *testing.T) {
	for _, c := range allCodecs {
		recs := sampleRecords(300)
		for i := range recs {
			recs[i].Timestamp = testNow - int64(i)
			recs[i].Key = []byte("key")
		}
		b := buildBatch(t, c, recs)
		two := append(append([]byte(nil), b...), b...)
		if err := ValidateProduced(two, rulesFor(true)); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
	}
}

// Kafka: DefaultRecord.readFrom ("Invalid record size", "Found invalid
// record structure") and the batch iterator ("Incorrect declared batch
// size, records still remaining"): records that lie are INVALID_RECORD.
func TestValidateProducedRecordsThatLie(t *testing.T) {
	good := recordsOf(0, 1, 2)
	longer := append([]byte(nil), good...)
	longer[0] += 2 // the first record claims one more byte (zigzag)
	overlong := append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, good[1:]...)
	cases := map[string][]byte{
		"length one byte too long":   rawBatch(t, CompressionNone, 3, longer),
		"varint longer than 5":       rawBatch(t, CompressionNone, 3, overlong),
		"count above the records":    rawBatch(t, CompressionNone, 4, append(good, 0)),
		"count below the records":    rawBatch(t, CompressionNone, 2, good),
		"offset deltas out of order": rawBatch(t, CompressionNone, 3, recordsOf(0, 2, 1)),
		"offset deltas repeated":     rawBatch(t, CompressionNone, 3, recordsOf(0, 0, 1)),
		"lz4, count above":           rawBatch(t, CompressionLZ4, 4, append(good, recordsOf(3)[:4]...)),
		"zstd, count below":          rawBatch(t, CompressionZstd, 2, good),
		"gzip, length too long":      rawBatch(t, CompressionGzip, 3, longer),
		"key longer than the record": rawBatch(t, CompressionNone, 1, []byte{14, 0, 0, 0, 40, 'k', 2, 'v', 0, 0, 0, 0, 0, 0}),
		"header count too large":     rawBatch(t, CompressionNone, 1, []byte{12, 0, 0, 0, 2, 'k', 2, 'v', 100, 0, 0, 0, 0}),
	}
	for name, b := range cases {
		expectErr(t, name, ValidateProduced(b, rulesFor(false)), ErrInvalidRecord)
	}
}

// The gzip batch with garbage inside that was acknowledged and then broke
// every consumer: a payload that does not decompress is CORRUPT_MESSAGE.
func TestValidateProducedPayloadsThatDoNotDecompress(t *testing.T) {
	for _, c := range []Compression{CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd} {
		b := buildBatch(t, c, sampleRecords(50))
		garbage := append([]byte(nil), b...)
		for i := RecordsPos + 20; i < len(garbage); i += 7 {
			garbage[i] ^= 0x5a
		}
		truncated := append([]byte(nil), b[:len(b)-6]...)
		putLength(truncated)
		for name, bad := range map[string][]byte{"garbage": refreshCRC(garbage), "truncated": refreshCRC(truncated)} {
			err := ValidateProduced(bad, rulesFor(false))
			if !errors.Is(err, ErrCorruptBatch) || errors.Is(err, ErrShortBatch) {
				t.Fatalf("%v %s: %v, want a corrupt batch", c, name, err)
			}
		}
	}
}

// Kafka: LogValidator.validateKey: "Compacted topic cannot accept message
// without key", one RecordError per keyless record.
func TestValidateProducedKeylessRecordOnCompactedTopic(t *testing.T) {
	recs := sampleRecords(12)
	for i := range recs {
		recs[i].Timestamp = testNow
		recs[i].Key = []byte("k")
	}
	recs[3].Key, recs[7].Key = nil, nil
	b := buildBatch(t, CompressionLZ4, recs)
	if err := ValidateProduced(b, rulesFor(false)); err != nil {
		t.Fatalf("not compacted: %v", err)
	}
	err := ValidateProduced(b, rulesFor(true))
	var rej *RecordsRejectedError
	if !errors.As(err, &rej) || !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("compacted: %v", err)
	}
	if len(rej.Records) != 2 || rej.Records[0].Index != 3 || rej.Records[1].Index != 7 {
		t.Fatalf("record errors %+v, want indexes 3 and 7", rej.Records)
	}
}

// Kafka: KIP-937 message.timestamp.before.max.ms / after.max.ms: a
// CreateTime outside [now-before, now+after] is INVALID_TIMESTAMP, and a
// LogAppendTime topic checks nothing.
func TestValidateProducedTimestampBounds(t *testing.T) {
	rules := rulesFor(false)
	rules.BeforeMaxMs = 86_400_000
	recs := []Record{{Timestamp: testNow}, {Timestamp: testNow + 3_600_001}, {Timestamp: testNow - 86_400_001},
		{Timestamp: testNow + 3_600_000}, {Timestamp: testNow - 86_400_000}}
	b := buildBatch(t, CompressionZstd, recs)
	err := ValidateProduced(b, rules)
	var rej *RecordsRejectedError
	if !errors.As(err, &rej) || !errors.Is(err, ErrInvalidTimestamp) {
		t.Fatalf("got %v, want INVALID_TIMESTAMP", err)
	}
	if len(rej.Records) != 2 || rej.Records[0].Index != 1 || rej.Records[1].Index != 2 {
		t.Fatalf("record errors %+v, want indexes 1 and 2", rej.Records)
	}
	rules.CheckTimestamps = false
	if err := ValidateProduced(b, rules); err != nil {
		t.Fatalf("LogAppendTime topic: %v", err)
	}
	// Long.MAX before.max.ms (the default) accepts any past timestamp.
	old := buildBatch(t, CompressionNone, []Record{{Timestamp: -1 << 60}})
	if err := ValidateProduced(old, rulesFor(false)); err != nil {
		t.Fatalf("default before.max.ms: %v", err)
	}
}

// Kafka: LogValidator.validateBatch for AppendOrigin.CLIENT.
func TestValidateProducedProducerBits(t *testing.T) {
	ctl := buildBatch(t, CompressionNone, []Record{{Timestamp: testNow}})
	ctl[AttributesPos+1] |= AttrControl
	txn := buildBatch(t, CompressionNone, []Record{{Timestamp: testNow}})
	txn[AttributesPos+1] |= AttrTransactional
	for name, b := range map[string][]byte{"control batch": refreshCRC(ctl), "transactional without producer id": refreshCRC(txn)} {
		expectErr(t, name, ValidateProduced(b, rulesFor(false)), ErrInvalidRecord)
	}
}

// Trailing bytes after the last batch are CORRUPT_MESSAGE, never a torn
// tail (which the broker used to answer with UNKNOWN_SERVER_ERROR).
func TestValidateProducedTrailingBytes(t *testing.T) {
	b := buildBatch(t, CompressionNone, []Record{{Timestamp: testNow}})
	for _, tail := range [][]byte{{0}, make([]byte, 11), b[:30]} {
		err := ValidateProduced(append(append([]byte(nil), b...), tail...), rulesFor(false))
		if !errors.Is(err, ErrCorruptBatch) || errors.Is(err, ErrShortBatch) {
			t.Fatalf("%d trailing bytes: %v", len(tail), err)
		}
	}
	expectErr(t, "empty", ValidateProduced(nil, rulesFor(false)), ErrCorruptBatch)
}

// A 2 KB batch of zeros that decompresses to 60 MiB fails at
// max.message.bytes having held one window (and, for zstd, the history
// its frame declares, at most zstdMaxWindow), not 60 MiB.
func TestValidateProducedDecompressionBomb(t *testing.T) {
	for _, c := range []Compression{CompressionGzip, CompressionLZ4, CompressionZstd, CompressionSnappy} {
		b := buildBatch(t, c, []Record{{Timestamp: testNow, Value: make([]byte, 60<<20)}})
		var v Validator
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := v.Validate(b, rulesFor(false))
		runtime.ReadMemStats(&after)
		expectErr(t, c.String(), err, ErrBatchTooLarge)
		bound := uint64(4 << 20)
		if c == CompressionZstd {
			bound += zstdMaxWindow // the history the frame declares, at most zstdMaxWindow
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > bound {
			t.Fatalf("%v: validating the bomb allocated %d bytes", c, grew)
		}
	}
}

// A record far larger than the window streams through it.
func TestValidateProducedStreamsLargeRecords(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 200_000) // 3.2 MB
	rules := rulesFor(true)
	rules.MaxBatchBytes = 8 << 20
	for _, c := range allCodecs {
		b := buildBatch(t, c, []Record{{Timestamp: testNow, Key: []byte("k"), Value: big,
			Headers: []Header{{Key: "h", Value: big[:100_000]}}}, {Timestamp: testNow, Key: []byte("k2")}})
		if err := ValidateProduced(b, rules); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
	}
}

// A warm Validator allocates nothing for a valid append. The collector is
// off while allocations are counted: a collection empties the sync.Pools
// inside the zstd decoder, whose refill is not the validator's doing (on
// a loaded machine one ran in the middle of the count).
func TestValidatorDoesNotAllocatePerRecord(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates; counted without it")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for _, c := range allCodecs {
		b := buildBatch(t, c, sampleRecords(500))
		var v Validator
		rules := rulesFor(false)
		rules.CheckTimestamps = false
		if err := v.Validate(b, rules); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(20, func() { _ = v.Validate(b, rules) }); n > 0 {
			t.Errorf("%v: %.1f allocations per validation", c, n)
		}
	}
}

func refreshCRC(b []byte) []byte {
	resealCRC(b)
	return b
}

func putLength(b []byte) {
	binary.BigEndian.PutUint32(b[LengthPos:], uint32(len(b)-LogOverhead))
}
