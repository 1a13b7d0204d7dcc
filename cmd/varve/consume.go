package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"
)

// varve consume TOPIC: kcat -C and Kafka's console consumer in one. It
// prints each record with --format (kcat's -f, default the value and a
// newline), from --offset (default latest, as the console consumer; or
// --from-beginning), on every partition or only --partition, and stops
// after --count records or, with --exit (kcat's -e), once it has reached
// the end of every partition.
//
// Without --group it assigns the partitions itself (no group
// coordinator needed). With --group it joins that consumer group with
// kgo's group consumer, starts from the group's committed offsets (or
// --offset where there are none) and commits what it printed; that needs
// a broker with groups (FindCoordinator, JoinGroup, SyncGroup, Heartbeat,
// OffsetFetch, OffsetCommit), which Varve's broker serves.
//
// --exit compares each partition's position with its high watermark (at
// start, then as fetches report it). With --group it waits for every
// partition of the topic, including those assigned to other members; a
// partition whose last offsets are transaction markers never reaches its
// high watermark, so --exit does not end there.

// consumeOptions are the flags of varve consume.
type consumeOptions struct {
	clientFlags
	format        string
	offset        string
	fromBeginning bool
	partition     int32
	count         int64
	exit          bool
	group         string
}

func init() { rootCmd.AddCommand(newConsumeCmd()) }

func newConsumeCmd() *cobra.Command {
	var o consumeOptions
	cmd := &cobra.Command{
		Use:   "consume TOPIC",
		Short: "Print records of a topic (kcat-style --format)",
		Long: `Print the records of TOPIC. --format takes kcat's tokens: %t topic,
%p partition, %o offset, %T timestamp (ms), %k key, %K key length, %v (or %s)
value, %S value length, %h headers (k=v,...), %% and the escapes \n \t \r \\.
--offset takes earliest, latest, N, -N (N before the end) or @T (first record
at or after T ms). --group needs a broker with consumer groups.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.fromBeginning && cmd.Flags().Changed("offset") {
				return fmt.Errorf("--from-beginning and --offset: give one: %w", errUsage)
			}
			return runConsume(cmd, o, args[0])
		},
	}
	addClientFlags(cmd, &o.clientFlags)
	f := cmd.Flags()
	f.StringVarP(&o.format, "format", "f", defaultFormat, "output format, kcat's -f tokens")
	f.StringVarP(&o.offset, "offset", "o", "latest", "start at earliest, latest, N, -N or @timestamp-ms")
	f.BoolVar(&o.fromBeginning, "from-beginning", false, "start at the earliest offset (--offset earliest)")
	f.Int32VarP(&o.partition, "partition", "p", -1, "consume only this partition (-1: all)")
	f.Int64VarP(&o.count, "count", "c", 0, "exit after this many records (0: no limit)")
	f.BoolVarP(&o.exit, "exit", "e", false, "exit once the end of every partition is reached")
	f.StringVarP(&o.group, "group", "G", "", "join this consumer group (needs a broker with groups)")
	return cmd
}

func runConsume(cmd *cobra.Command, o consumeOptions, topic string) error {
	format, err := parseRecordFormat(o.format)
	if err != nil {
		return err
	}
	if o.fromBeginning {
		o.offset = "earliest"
	}
	spec, err := parseOffsetSpec(o.offset)
	if err != nil {
		return err
	}
	if o.group != "" && o.partition >= 0 {
		return fmt.Errorf("--group and --partition: a group member is assigned its partitions: %w", errUsage)
	}
	ctx, cancel := commandContext(cmd, 0)
	defer cancel()
	ranges, err := o.startRanges(ctx, topic, spec)
	if err != nil {
		return err
	}
	cl, err := o.client(o.consumerOpts(topic, spec, ranges)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	c := newRecordPrinter(cmd.OutOrStdout(), format, o, ranges)
	err = c.run(ctx, cl)
	if o.group != "" {
		err = errors.Join(err, commitPrinted(cl))
	}
	return err
}

// startRanges resolves each partition's start position and end offset.
func (o consumeOptions) startRanges(ctx context.Context, topic string, spec offsetSpec) (map[int32]partitionRange, error) {
	adm, cl, err := o.admin()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ranges, err := resolveOffsets(ctx, adm, topic, o.partition, spec)
	if err != nil {
		return nil, err
	}
	if o.group != "" {
		err = committedPositions(ctx, adm, o.group, topic, ranges)
	}
	return ranges, err
}

// consumerOpts assigns the partitions at their positions, or joins the group.
func (o consumeOptions) consumerOpts(topic string, spec offsetSpec, ranges map[int32]partitionRange) []kgo.Opt {
	// A position out of range (retention moved the start, or N is past
	// the end) resets to the start for earliest, to the end otherwise,
	// as the console consumer's auto.offset.reset would.
	reset := kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd())
	if spec.kind == offsetEarliest {
		reset = kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())
	}
	if o.group != "" {
		return []kgo.Opt{kgo.ConsumerGroup(o.group), kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(spec.resetOffset()), kgo.AutoCommitMarks()}
	}
	assign := map[int32]kgo.Offset{}
	for p, r := range ranges {
		assign[p] = kgo.NewOffset().At(r.pos)
	}
	return []kgo.Opt{kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign}), reset}
}

// commitTimeout bounds the final commit of a group member.
const commitTimeout = 10 * time.Second

// commitPrinted commits the offsets of the records printed by a group member.
func commitPrinted(cl *kgo.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	if err := cl.CommitMarkedOffsets(ctx); err != nil {
		return fmt.Errorf("commit offsets: %w", err)
	}
	return nil
}

// recordPrinter prints fetched records and knows when to stop.
type recordPrinter struct {
	out     *bufio.Writer
	format  recordFormat
	buf     []byte
	limit   int64 // 0: none
	printed int64
	exit    bool
	group   bool
	pos     map[int32]int64 // next offset to print, per partition
	hwm     map[int32]int64 // high watermark, per partition
}

func newRecordPrinter(w io.Writer, f recordFormat, o consumeOptions, ranges map[int32]partitionRange) *recordPrinter {
	p := &recordPrinter{out: bufio.NewWriterSize(w, 64<<10), format: f, limit: o.count, exit: o.exit,
		group: o.group != "", pos: map[int32]int64{}, hwm: map[int32]int64{}}
	for part, r := range ranges {
		p.pos[part], p.hwm[part] = r.pos, r.end
	}
	return p
}

// finished reports whether --count or --exit is satisfied.
func (p *recordPrinter) finished() bool {
	if p.limit > 0 && p.printed >= p.limit {
		return true
	}
	if !p.exit {
		return false
	}
	for part, pos := range p.pos {
		if pos < p.hwm[part] {
			return false
		}
	}
	return true
}

// run polls and prints until finished, ctx ends, or a fetch fails.
func (p *recordPrinter) run(ctx context.Context, cl *kgo.Client) error {
	defer p.out.Flush()
	for !p.finished() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil // interrupted: what was printed stands
		}
		if err := fetchError(fs); err != nil {
			return err
		}
		fs.EachPartition(func(ftp kgo.FetchTopicPartition) { p.partition(cl, ftp) })
		if err := p.out.Flush(); err != nil {
			return fmt.Errorf("write records: %w", err)
		}
	}
	return nil
}

// partition prints one partition's records, up to the --count limit.
func (p *recordPrinter) partition(cl *kgo.Client, ftp kgo.FetchTopicPartition) {
	if ftp.HighWatermark > p.hwm[ftp.Partition] {
		p.hwm[ftp.Partition] = ftp.HighWatermark
	}
	for _, r := range ftp.Records {
		if p.limit > 0 && p.printed >= p.limit {
			return
		}
		p.buf = p.format.appendRecord(p.buf[:0], r)
		p.out.Write(p.buf) // errors surface at Flush
		p.printed++
		p.pos[r.Partition] = r.Offset + 1
		if p.group {
			cl.MarkCommitRecords(r)
		}
	}
}

// fetchError returns the first error of a poll that is not the client
// closing or the context ending.
func fetchError(fs kgo.Fetches) error {
	var err error
	fs.EachError(func(t string, part int32, e error) {
		if err == nil && !errors.Is(e, context.Canceled) && !errors.Is(e, kgo.ErrClientClosed) {
			err = fmt.Errorf("fetch %s[%d]: %w", t, part, e)
		}
	})
	return err
}
