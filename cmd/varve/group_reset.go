package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

// varve group reset-offsets GROUP: kafka-consumer-groups --reset-offsets.
// It computes a new committed offset for each partition of the chosen
// topics (--topic T or T:0,1,...; --all-topics for those the group has
// committed): --to-earliest, --to-latest, --to-offset N (clamped to the
// partition's range, as Kafka does) or --to-datetime T (the first record
// at or after T; the log end if none). As Kafka's tool, it only prints
// the plan unless --execute is given, and refuses a group that has
// members: offsets of a live group belong to its members.

type groupResetOptions struct {
	topics    []string
	allTopics bool
	earliest  bool
	latest    bool
	datetime  string
	offset    int64
	execute   bool
	dryRun    bool
}

func newGroupResetCmd(f *adminFlags) *cobra.Command {
	var o groupResetOptions
	cmd := &cobra.Command{
		Use:   "reset-offsets GROUP (--topic T[:P,...]... | --all-topics) (--to-earliest | --to-latest | --to-offset N | --to-datetime T) [--execute]",
		Short: "Reset a group's committed offsets (only a group without members); prints the plan unless --execute",
		Long: `Reset the committed offsets of GROUP, which must have no active members.
--to-datetime takes Kafka's format, YYYY-MM-DDTHH:mm:SS[.sss], in local time
unless a zone is given (Z, +01:00), or RFC 3339. Without --execute the new
offsets are printed and nothing is changed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(cmd); err != nil {
				return err
			}
			return runGroupReset(cmd, f, o, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&o.topics, "topic", nil, "topic, or topic:partition,partition,... (repeatable)")
	fl.BoolVar(&o.allTopics, "all-topics", false, "every topic the group has committed offsets for")
	fl.BoolVar(&o.earliest, "to-earliest", false, "reset to each partition's log start offset")
	fl.BoolVar(&o.latest, "to-latest", false, "reset to each partition's log end offset")
	fl.StringVar(&o.datetime, "to-datetime", "", "reset to the first record at or after this time")
	fl.Int64Var(&o.offset, "to-offset", 0, "reset to this offset")
	fl.BoolVar(&o.execute, "execute", false, "commit the new offsets")
	fl.BoolVar(&o.dryRun, "dry-run", false, "only print the new offsets (the default)")
	return cmd
}

func (o *groupResetOptions) validate(cmd *cobra.Command) error {
	n := 0
	for _, set := range []bool{o.earliest, o.latest, o.datetime != "", cmd.Flags().Changed("to-offset")} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return fmt.Errorf("give exactly one of --to-earliest, --to-latest, --to-offset, --to-datetime: %w", errUsage)
	case len(o.topics) == 0 && !o.allTopics:
		return fmt.Errorf("give --topic or --all-topics: %w", errUsage)
	case len(o.topics) > 0 && o.allTopics:
		return fmt.Errorf("--topic and --all-topics: give one: %w", errUsage)
	case o.execute && o.dryRun:
		return fmt.Errorf("--execute and --dry-run: give one: %w", errUsage)
	}
	return nil
}

func runGroupReset(cmd *cobra.Command, f *adminFlags, o groupResetOptions, groupID string) error {
	ctx, adm, done, err := f.session(cmd)
	if err != nil {
		return err
	}
	defer done()
	if err := requireInactive(ctx, adm, groupID); err != nil {
		return err
	}
	parts, err := o.partitions(ctx, adm, groupID)
	if err != nil {
		return err
	}
	plan, err := o.targets(ctx, adm, parts)
	if err != nil {
		return err
	}
	w := table(cmd.OutOrStdout())
	fmt.Fprintln(w, "GROUP\tTOPIC\tPARTITION\tNEW-OFFSET")
	for _, off := range plan.Sorted() {
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\n", groupID, off.Topic, off.Partition, off.At)
	}
	w.Flush()
	if !o.execute {
		if !o.dryRun {
			fmt.Fprintln(cmd.ErrOrStderr(), "Nothing was changed: add --execute to commit these offsets.")
		}
		return nil
	}
	resps, err := adm.CommitOffsets(ctx, groupID, plan)
	if err == nil {
		err = resps.Error()
	}
	if err != nil {
		return fmt.Errorf("commit offsets of group %s: %w", groupID, err)
	}
	return nil
}

// requireInactive refuses a group with members, as Kafka's tool does
// (the broker would refuse their commit anyway: UNKNOWN_MEMBER_ID).
func requireInactive(ctx context.Context, adm *kadm.Client, groupID string) error {
	ds, err := adm.DescribeGroups(ctx, groupID)
	if err != nil {
		return fmt.Errorf("describe group %s: %w", groupID, err)
	}
	d, ok := ds[groupID]
	switch {
	case !ok:
		return fmt.Errorf("describe group %s: not described", groupID)
	case d.Err != nil:
		return fmt.Errorf("describe group %s: %w", groupID, d.Err)
	case d.State != "Empty" && d.State != "Dead":
		return fmt.Errorf("assignments can only be reset if group %s is inactive, but its state is %s", groupID, d.State)
	}
	return nil
}

// partitions resolves --topic and --all-topics to topic -> partitions.
func (o groupResetOptions) partitions(ctx context.Context, adm *kadm.Client, groupID string) (map[string][]int32, error) {
	out := map[string][]int32{}
	if o.allTopics {
		committed, err := adm.FetchOffsets(ctx, groupID)
		if err == nil {
			err = committed.Error()
		}
		if err != nil {
			return nil, fmt.Errorf("fetch offsets of group %s: %w", groupID, err)
		}
		committed.Each(func(r kadm.OffsetResponse) { out[r.Topic] = append(out[r.Topic], r.Partition) })
		return out, nil
	}
	var names []string
	for _, spec := range o.topics {
		name, ps, err := parseTopicSpec(spec)
		if err != nil {
			return nil, err
		}
		names = append(names, name)
		out[name] = append(out[name], ps...)
	}
	details, err := adm.ListTopics(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("list topics: %w", err)
	}
	for name, ps := range out {
		d, ok := details[name]
		if !ok || d.Err != nil {
			return nil, fmt.Errorf("topic %s: %w", name, errors.Join(errors.New("not found"), d.Err))
		}
		if len(ps) == 0 {
			out[name] = slices.Sorted(func(yield func(int32) bool) {
				for p := range d.Partitions {
					if !yield(p) {
						return
					}
				}
			})
		}
	}
	return out, nil
}

// parseTopicSpec splits "topic" or "topic:0,1,2".
func parseTopicSpec(spec string) (string, []int32, error) {
	name, list, hasList := strings.Cut(spec, ":")
	if name == "" {
		return "", nil, fmt.Errorf("--topic %q: empty topic name: %w", spec, errUsage)
	}
	if !hasList {
		return name, nil, nil
	}
	var ps []int32
	for _, s := range strings.Split(list, ",") {
		p, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
		if err != nil || p < 0 {
			return "", nil, fmt.Errorf("--topic %q: bad partition %q: %w", spec, s, errUsage)
		}
		ps = append(ps, int32(p))
	}
	return name, ps, nil
}

// targets computes the new offset of every partition.
func (o groupResetOptions) targets(ctx context.Context, adm *kadm.Client, parts map[string][]int32) (kadm.Offsets, error) {
	topics := make([]string, 0, len(parts))
	for t := range parts {
		topics = append(topics, t)
	}
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("list start offsets: %w", err)
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("list end offsets: %w", err)
	}
	var byTime kadm.ListedOffsets
	if o.datetime != "" {
		ms, err := parseResetTime(o.datetime)
		if err != nil {
			return nil, err
		}
		if byTime, err = adm.ListOffsetsAfterMilli(ctx, ms, topics...); err != nil {
			return nil, fmt.Errorf("list offsets by time: %w", err)
		}
	}
	plan := kadm.Offsets{}
	for t, ps := range parts {
		for _, p := range ps {
			at, err := o.target(t, p, starts, ends, byTime)
			if err != nil {
				return nil, err
			}
			plan.Add(kadm.Offset{Topic: t, Partition: p, At: at, LeaderEpoch: -1})
		}
	}
	return plan, nil
}

// target is one partition's new offset.
func (o groupResetOptions) target(topic string, p int32, starts, ends, byTime kadm.ListedOffsets) (int64, error) {
	start, ok1 := starts.Lookup(topic, p)
	end, ok2 := ends.Lookup(topic, p)
	if !ok1 || !ok2 || start.Err != nil || end.Err != nil {
		return 0, fmt.Errorf("offsets of %s[%d]: %w", topic, p, errors.Join(errors.New("not listed"), start.Err, end.Err))
	}
	switch {
	case o.earliest:
		return start.Offset, nil
	case o.latest:
		return end.Offset, nil
	case o.datetime != "":
		at, ok := byTime.Lookup(topic, p)
		if !ok || at.Err != nil || at.Offset < 0 {
			return end.Offset, nil // no record at or after the time
		}
		return at.Offset, nil
	}
	return min(max(o.offset, start.Offset), end.Offset), nil
}

// parseResetTime reads Kafka's --to-datetime format (local time unless
// a zone is given) or RFC 3339, to Unix milliseconds.
func parseResetTime(s string) (int64, error) {
	for _, layout := range []string{"2006-01-02T15:04:05.000Z07:00", "2006-01-02T15:04:05Z07:00", time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixMilli(), nil
		}
	}
	for _, layout := range []string{"2006-01-02T15:04:05.000", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, fmt.Errorf("--to-datetime %q: want YYYY-MM-DDTHH:mm:SS[.sss][zone]: %w", s, errUsage)
}
