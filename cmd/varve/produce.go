package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/varve/varve/benchmarks/kafkabench"
)

// varve produce TOPIC: Kafka's console producer and kcat -P in one. Each
// line of stdin (without its '\n') is a record, or --value is sent
// --count times. With -K SEP a line is split at its first SEP into key
// and value (a line without SEP is all value, with a null key). Every
// --header key=value is added to every record. The producer uses Kafka's
// producer defaults: acks=all and idempotence on (turned off silently for
// acks 0 or 1, refused if asked for with them, as the Java client does).

// produceOptions are the flags of varve produce.
type produceOptions struct {
	clientFlags
	value       string
	hasValue    bool
	key         string
	count       int64
	keySep      string
	headers     []string
	partition   int32
	acks        string
	compression string
	idempotent  bool
	idemSet     bool
	linger      time.Duration
	batchMax    int32
}

func init() { rootCmd.AddCommand(newProduceCmd()) }

func newProduceCmd() *cobra.Command {
	var o produceOptions
	cmd := &cobra.Command{
		Use:   "produce TOPIC",
		Short: "Produce records from stdin lines (or --value) to a topic",
		Long: `Produce a record per line of stdin, or --value --count times, to TOPIC.
-K SEP splits each line into key SEP value. --header key=value (repeatable)
adds a header to every record. A summary goes to stderr.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.hasValue = cmd.Flags().Changed("value")
			o.idemSet = cmd.Flags().Changed("idempotent")
			return runProduce(cmd, o, args[0])
		},
	}
	addClientFlags(cmd, &o.clientFlags)
	f := cmd.Flags()
	f.StringVar(&o.value, "value", "", "send this value instead of reading stdin")
	f.StringVar(&o.key, "key", "", "key of every record (with --value or stdin; -K overrides it per line)")
	f.Int64VarP(&o.count, "count", "c", 0, "with --value: records to send (default 1); with stdin: stop after this many lines (0: all)")
	f.StringVarP(&o.keySep, "key-separator", "K", "", "split each line at the first SEP into key and value")
	f.StringArrayVarP(&o.headers, "header", "H", nil, "header key=value added to every record (repeatable)")
	f.Int32VarP(&o.partition, "partition", "p", -1, "partition to produce to (-1: the client's sticky/key-hash partitioner)")
	f.StringVar(&o.acks, "acks", "all", "acks: 0, 1 or all")
	f.StringVarP(&o.compression, "compression", "z", "none", "compression.type: none, gzip, snappy, lz4 or zstd")
	f.BoolVar(&o.idempotent, "idempotent", true, "enable.idempotence (needs acks=all; off by default with acks 0 or 1)")
	f.DurationVar(&o.linger, "linger", 0, "linger.ms: wait this long to fill a batch")
	f.Int32Var(&o.batchMax, "batch-max-bytes", 0, "maximum batch size in bytes (0: client default, about 1 MB)")
	return cmd
}

// producerConfig turns the flags into the shared producer settings.
func (o produceOptions) producerConfig() kafkabench.ProducerConfig {
	pc := kafkabench.ProducerConfig{Acks: o.acks, Compression: o.compression, Linger: o.linger, BatchMaxBytes: o.batchMax}
	if o.idemSet {
		pc.Idempotent = &o.idempotent
	}
	return pc
}

func runProduce(cmd *cobra.Command, o produceOptions, topic string) error {
	headers, err := parseHeaders(o.headers)
	if err != nil {
		return err
	}
	opts, err := o.producerConfig().Opts()
	if err != nil {
		return err
	}
	opts = append(opts, kgo.DefaultProduceTopic(topic))
	if o.partition >= 0 {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	ctx, cancel := commandContext(cmd, 0)
	defer cancel()
	cl, err := o.client(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	src := recordSource{o: o, headers: headers, in: bufio.NewReaderSize(cmd.InOrStdin(), 64<<10)}
	s := &produceSummary{topic: topic, start: time.Now()}
	err = produceAll(ctx, cl, &src, s)
	s.print(cmd.ErrOrStderr())
	return err
}

func parseHeaders(hs []string) ([]kgo.RecordHeader, error) {
	var out []kgo.RecordHeader
	for _, h := range hs {
		k, v, err := parseKV("header", h)
		if err != nil {
			return nil, err
		}
		out = append(out, kgo.RecordHeader{Key: k, Value: []byte(v)})
	}
	return out, nil
}

// recordSource yields the records to send, from --value or stdin lines.
type recordSource struct {
	o       produceOptions
	headers []kgo.RecordHeader
	in      *bufio.Reader
	n       int64
}

// next returns the next record, or io.EOF.
func (s *recordSource) next() (*kgo.Record, error) {
	if s.o.hasValue {
		if s.n >= max(s.o.count, 1) {
			return nil, io.EOF
		}
		s.n++
		return s.record(nil, []byte(s.o.value)), nil
	}
	if s.o.count > 0 && s.n >= s.o.count {
		return nil, io.EOF
	}
	line, err := s.in.ReadBytes('\n')
	if len(line) == 0 && err != nil {
		return nil, err
	}
	s.n++
	line = bytes.TrimSuffix(line, []byte{'\n'})
	if s.o.keySep != "" {
		if k, v, ok := bytes.Cut(line, []byte(s.o.keySep)); ok {
			return s.record(k, v), nil
		}
	}
	return s.record(nil, line), nil
}

func (s *recordSource) record(key, value []byte) *kgo.Record {
	if key == nil && s.o.key != "" {
		key = []byte(s.o.key)
	}
	return &kgo.Record{Key: key, Value: value, Headers: s.headers, Partition: s.o.partition}
}

// produceSummary counts what was sent; promises and the sender update it.
type produceSummary struct {
	topic string
	start time.Time
	mu    sync.Mutex // guards the fields below
	sent  int64
	bytes int64
	parts map[int32]int64
	errs  int64
	first error
}

func (s *produceSummary) done(r *kgo.Record, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.errs++
		if s.first == nil {
			s.first = err
		}
		return
	}
	if s.parts == nil {
		s.parts = map[int32]int64{}
	}
	s.sent++
	s.bytes += int64(len(r.Key) + len(r.Value))
	s.parts[r.Partition]++
}

// produceAll sends every record of src and waits for the acknowledgements.
func produceAll(ctx context.Context, cl *kgo.Client, src *recordSource, s *produceSummary) error {
	var readErr error
	for {
		r, err := src.next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				readErr = fmt.Errorf("read stdin: %w", err)
			}
			break
		}
		cl.Produce(ctx, r, s.done)
	}
	if err := cl.Flush(ctx); err != nil {
		return errors.Join(readErr, fmt.Errorf("produce to %s: %w", s.topic, err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.errs > 0 {
		readErr = errors.Join(readErr, fmt.Errorf("produce to %s: %d records failed, first: %w", s.topic, s.errs, s.first))
	}
	return readErr
}

// print writes the one-line summary.
func (s *produceSummary) print(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el := time.Since(s.start)
	fmt.Fprintf(w, "produced %d records (%d bytes) to %s in %s (%.0f records/s)", s.sent, s.bytes, s.topic,
		el.Round(time.Millisecond), float64(s.sent)/max(el.Seconds(), 1e-9))
	if len(s.parts) > 0 {
		fmt.Fprintf(w, ", partitions %s", partitionCounts(s.parts))
	}
	if s.errs > 0 {
		fmt.Fprintf(w, ", %d failed", s.errs)
	}
	fmt.Fprintln(w)
}

// partitionCounts formats per-partition counts as "0:3 1:2", by partition.
func partitionCounts(m map[int32]int64) string {
	ps := make([]int32, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d:%d", p, m[p])
	}
	return b.String()
}
