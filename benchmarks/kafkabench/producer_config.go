package kafkabench

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ProducerConfig holds the producer settings the benchmarks and `varve
// produce` share, under the names of Kafka's producer configs.
type ProducerConfig struct {
	// Acks is Kafka's acks: "0", "1", "all" or its alias "-1".
	Acks string
	// Idempotent is enable.idempotence. Nil means Kafka's default: on
	// when acks=all, silently off otherwise (the Java client does the
	// same). Explicitly true with acks other than all is an error, as in
	// the Java client.
	Idempotent *bool
	// Compression is compression.type: none, gzip, snappy, lz4 or zstd.
	Compression string
	// BatchMaxBytes caps a batch (kgo's ProducerBatchMaxBytes; 0 keeps
	// the client default of about 1 MB).
	BatchMaxBytes int32
	// Linger is linger.ms (0: send as soon as a request slot is free).
	Linger time.Duration
	// MaxInFlight is max.in.flight.requests.per.connection for a
	// non-idempotent producer (0 keeps kgo's default of 1). An
	// idempotent kgo producer always allows 5, as Kafka does.
	MaxInFlight int
	// MaxBufferedRecords bounds the records a client holds unacknowledged
	// (0 keeps kgo's default of 10,000); Produce blocks beyond it.
	MaxBufferedRecords int
}

// ErrConfig marks a setting that cannot be used.
var ErrConfig = errors.New("invalid setting")

// ParseAcks parses Kafka's acks setting.
func ParseAcks(s string) (kgo.Acks, error) {
	switch strings.ToLower(s) {
	case "0":
		return kgo.NoAck(), nil
	case "1":
		return kgo.LeaderAck(), nil
	case "all", "-1":
		return kgo.AllISRAcks(), nil
	}
	return kgo.Acks{}, fmt.Errorf("acks %q (want 0, 1 or all): %w", s, ErrConfig)
}

// ParseCompression parses Kafka's compression.type.
func ParseCompression(s string) (kgo.CompressionCodec, error) {
	switch strings.ToLower(s) {
	case "", "none":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.CompressionCodec{}, fmt.Errorf("compression %q (want none, gzip, snappy, lz4 or zstd): %w", s, ErrConfig)
}

// idempotent resolves enable.idempotence against acks, as the Java
// client's ProducerConfig does.
func (c ProducerConfig) idempotent() (bool, error) {
	all := c.Acks == "" || strings.EqualFold(c.Acks, "all") || c.Acks == "-1"
	switch {
	case c.Idempotent == nil:
		return all, nil
	case *c.Idempotent && !all:
		return false, fmt.Errorf("acks=%s with the idempotent producer: it needs acks=all: %w", c.Acks, ErrConfig)
	}
	return *c.Idempotent, nil
}

// Opts turns c into kgo producer options.
func (c ProducerConfig) Opts() ([]kgo.Opt, error) {
	acks, err := ParseAcks(orDefault(c.Acks, "all"))
	if err != nil {
		return nil, err
	}
	codec, err := ParseCompression(c.Compression)
	if err != nil {
		return nil, err
	}
	idem, err := c.idempotent()
	if err != nil {
		return nil, err
	}
	opts := []kgo.Opt{kgo.RequiredAcks(acks), kgo.ProducerBatchCompression(codec), kgo.ProducerLinger(c.Linger)}
	if !idem {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	if c.BatchMaxBytes > 0 {
		opts = append(opts, kgo.ProducerBatchMaxBytes(c.BatchMaxBytes))
	}
	if c.MaxInFlight > 0 {
		opts = append(opts, kgo.MaxProduceRequestsInflightPerBroker(c.MaxInFlight))
	}
	if c.MaxBufferedRecords > 0 {
		opts = append(opts, kgo.MaxBufferedRecords(c.MaxBufferedRecords))
	}
	return opts, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
