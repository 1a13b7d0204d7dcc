package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// varve topic describe prints, as kafka-topics --describe does, a line
// per topic (id, partition count, replication factor, configs) and a line
// per partition (leader, replicas, ISR), plus each partition's earliest
// and latest offsets (ListOffsets). Configs are the topic's overrides
// (source DYNAMIC_TOPIC_CONFIG), or every config with --all.

func newTopicDescribeCmd(f *adminFlags) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "describe [TOPIC...]",
		Short: "Describe topics: partitions, leaders, replicas, ISR, offsets, configs",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTopicDescribe(cmd, f, all, args)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "show every config, not only the topic's overrides")
	return cmd
}

// topicView is what describe prints about one topic.
type topicView struct {
	detail  kadm.TopicDetail
	configs []kadm.Config
	starts  kadm.ListedOffsets
	ends    kadm.ListedOffsets
}

func runTopicDescribe(cmd *cobra.Command, f *adminFlags, all bool, topics []string) error {
	ctx, adm, done, err := f.session(cmd)
	if err != nil {
		return err
	}
	defer done()
	details, err := adm.ListTopics(ctx, topics...)
	if err != nil {
		return fmt.Errorf("describe topics: %w", err)
	}
	var errs []error
	for _, d := range details.Sorted() {
		if d.Err != nil {
			errs = append(errs, fmt.Errorf("describe topic %s: %w", d.Topic, d.Err))
			continue
		}
		v, err := loadTopicView(ctx, adm, d)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		v.print(cmd.OutOrStdout(), all)
	}
	return errors.Join(errs...)
}

// loadTopicView fetches the configs and offsets of one topic.
func loadTopicView(ctx context.Context, adm *kadm.Client, d kadm.TopicDetail) (topicView, error) {
	v := topicView{detail: d}
	rcs, err := adm.DescribeTopicConfigs(ctx, d.Topic)
	if err != nil {
		return v, fmt.Errorf("describe topic %s: configs: %w", d.Topic, err)
	}
	rc, err := rcs.On(d.Topic, nil)
	if err == nil {
		err = rc.Err
	}
	if err != nil {
		return v, fmt.Errorf("describe topic %s: configs: %w", d.Topic, err)
	}
	v.configs = rc.Configs
	if v.starts, err = adm.ListStartOffsets(ctx, d.Topic); err != nil {
		return v, fmt.Errorf("describe topic %s: earliest offsets: %w", d.Topic, err)
	}
	if v.ends, err = adm.ListEndOffsets(ctx, d.Topic); err != nil {
		return v, fmt.Errorf("describe topic %s: latest offsets: %w", d.Topic, err)
	}
	return v, nil
}

func (v topicView) print(w io.Writer, all bool) {
	d := v.detail
	fmt.Fprintf(w, "Topic: %s\tTopicId: %s\tPartitionCount: %d\tReplicationFactor: %d\tConfigs: %s\n",
		d.Topic, kafkaUUID(d.ID), len(d.Partitions), d.Partitions.NumReplicas(), configList(v.configs, all))
	for _, p := range d.Partitions.Sorted() {
		fmt.Fprintf(w, "\tTopic: %s\tPartition: %d\tLeader: %s\tReplicas: %s\tIsr: %s\tEarliest: %s\tLatest: %s\n",
			d.Topic, p.Partition, leader(p.Leader), ints(p.Replicas), ints(p.ISR),
			offsetOf(v.starts, d.Topic, p.Partition), offsetOf(v.ends, d.Topic, p.Partition))
	}
}

// kafkaUUID prints a topic id as Kafka's Uuid.toString does: URL-safe
// base64 without padding.
func kafkaUUID(id kadm.TopicID) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

func leader(id int32) string {
	if id < 0 {
		return "none"
	}
	return strconv.Itoa(int(id))
}

func ints(xs []int32) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(int(x))
	}
	return strings.Join(s, ",")
}

func offsetOf(l kadm.ListedOffsets, topic string, p int32) string {
	o, ok := l.Lookup(topic, p)
	switch {
	case !ok:
		return "?"
	case o.Err != nil:
		return "error(" + o.Err.Error() + ")"
	}
	return strconv.FormatInt(o.Offset, 10)
}

// configList formats configs as key=value,... sorted by key: the topic's
// overrides, or all of them.
func configList(cs []kadm.Config, all bool) string {
	var out []string
	for _, c := range cs {
		if !all && c.Source != kmsg.ConfigSourceDynamicTopicConfig {
			continue
		}
		v := c.MaybeValue()
		if c.Sensitive {
			v = "(sensitive)"
		}
		out = append(out, c.Key+"="+v)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}
