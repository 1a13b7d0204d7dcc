package main

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// varve topic create|list|describe|delete|alter-config: Kafka's
// kafka-topics and kafka-configs (topic entity) over kadm.

func init() { rootCmd.AddCommand(newTopicCmd()) }

func newTopicCmd() *cobra.Command {
	var f adminFlags
	cmd := &cobra.Command{
		Use:   "topic",
		Short: "Create, list, describe, delete topics and alter their configs (any Kafka-protocol broker)",
	}
	addAdminFlags(cmd, &f)
	cmd.AddCommand(newTopicCreateCmd(&f), newTopicListCmd(&f), newTopicDescribeCmd(&f),
		newTopicDeleteCmd(&f), newTopicAlterConfigCmd(&f))
	return cmd
}

// topicCreateOptions are the flags of varve topic create.
type topicCreateOptions struct {
	partitions  int32
	replication int16
	configs     []string
	ifNotExists bool
}

func newTopicCreateCmd(f *adminFlags) *cobra.Command {
	var o topicCreateOptions
	cmd := &cobra.Command{
		Use:   "create TOPIC...",
		Short: "Create topics (CreateTopics)",
		Long: `Create topics with --partitions and --replication-factor (-1 takes the
broker's num.partitions and default.replication.factor, as Kafka 2.4+ does)
and topic-level configs given as --config key=value, repeated.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTopicCreate(cmd, f, o, args)
		},
	}
	fl := cmd.Flags()
	fl.Int32VarP(&o.partitions, "partitions", "p", -1, "partitions (-1: the broker's num.partitions)")
	fl.Int16VarP(&o.replication, "replication-factor", "r", -1, "replicas per partition (-1: the broker's default.replication.factor)")
	fl.StringArrayVarP(&o.configs, "config", "c", nil, "topic config key=value (repeatable), e.g. cleanup.policy=compact")
	fl.BoolVar(&o.ifNotExists, "if-not-exists", false, "succeed if the topic already exists")
	return cmd
}

func runTopicCreate(cmd *cobra.Command, f *adminFlags, o topicCreateOptions, topics []string) error {
	configs := map[string]*string{}
	for _, c := range o.configs {
		k, v, err := parseKV("config", c)
		if err != nil {
			return err
		}
		configs[k] = &v
	}
	ctx, adm, done, err := f.session(cmd)
	if err != nil {
		return err
	}
	defer done()
	resps, err := adm.CreateTopics(ctx, o.partitions, o.replication, configs, topics...)
	if err != nil {
		return fmt.Errorf("create topics: %w", err)
	}
	var errs []error
	for _, t := range topics {
		r := resps[t]
		switch {
		case r.Err == nil:
			fmt.Fprintf(cmd.OutOrStdout(), "Created topic %s.\n", t)
		case o.ifNotExists && errors.Is(r.Err, kerr.TopicAlreadyExists):
		default:
			errs = append(errs, fmt.Errorf("create topic %s: %w%s", t, r.Err, detail(r.ErrMessage)))
		}
	}
	return errors.Join(errs...)
}

// detail formats a broker's error message, if it sent one.
func detail(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + msg
}

func newTopicListCmd(f *adminFlags) *cobra.Command {
	var excludeInternal bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List topics (Metadata), one per line, sorted",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTopicList(cmd, f, excludeInternal)
		},
	}
	cmd.Flags().BoolVar(&excludeInternal, "exclude-internal", false, "leave out internal topics such as __consumer_offsets")
	return cmd
}

func runTopicList(cmd *cobra.Command, f *adminFlags, excludeInternal bool) error {
	ctx, adm, done, err := f.session(cmd)
	if err != nil {
		return err
	}
	defer done()
	details, err := adm.ListTopicsWithInternal(ctx)
	if err != nil {
		return fmt.Errorf("list topics: %w", err)
	}
	return printTopicNames(cmd.OutOrStdout(), details, excludeInternal)
}

func printTopicNames(w io.Writer, details kadm.TopicDetails, excludeInternal bool) error {
	var names []string
	for name, d := range details {
		if d.Err == nil && !(excludeInternal && d.IsInternal) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
}

func newTopicDeleteCmd(f *adminFlags) *cobra.Command {
	var ifExists bool
	cmd := &cobra.Command{
		Use:   "delete TOPIC...",
		Short: "Delete topics (DeleteTopics)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTopicDelete(cmd, f, ifExists, args)
		},
	}
	cmd.Flags().BoolVar(&ifExists, "if-exists", false, "succeed if a topic does not exist")
	return cmd
}

func runTopicDelete(cmd *cobra.Command, f *adminFlags, ifExists bool, topics []string) error {
	ctx, adm, done, err := f.session(cmd)
	if err != nil {
		return err
	}
	defer done()
	resps, err := adm.DeleteTopics(ctx, topics...)
	if err != nil {
		return fmt.Errorf("delete topics: %w", err)
	}
	var errs []error
	for _, t := range topics {
		r := resps[t]
		switch {
		case r.Err == nil:
			fmt.Fprintf(cmd.OutOrStdout(), "Deleted topic %s.\n", t)
		case ifExists && errors.Is(r.Err, kerr.UnknownTopicOrPartition):
		default:
			errs = append(errs, fmt.Errorf("delete topic %s: %w%s", t, r.Err, detail(r.ErrMessage)))
		}
	}
	return errors.Join(errs...)
}
