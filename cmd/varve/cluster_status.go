package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// varve cluster status: the controller quorum (DescribeQuorum, which any
// broker forwards to the active controller, as kafka-metadata-quorum
// uses it), the live brokers, and the partitions without a leader or
// with fewer in-sync replicas than replicas, from Metadata.

func newClusterStatusCmd() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the controller quorum, the brokers and the partitions that need attention",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, err := cf.client()
			if err != nil {
				return err
			}
			defer cl.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), 15*time.Second)
			defer cancel()
			return clusterStatus(ctx, cmd.OutOrStdout(), cl)
		},
	}
	addClientFlags(cmd, &cf)
	return cmd
}

func clusterStatus(ctx context.Context, out io.Writer, cl *kgo.Client) error {
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("DescribeQuorum: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		msg := ""
		if resp.ErrorMessage != nil {
			msg = *resp.ErrorMessage
		}
		fmt.Fprintf(out, "quorum: %v %s\n", err, msg)
	} else {
		printQuorum(out, resp)
	}
	md, err := kadm.NewClient(cl).Metadata(ctx)
	if err != nil {
		return fmt.Errorf("Metadata: %w", err)
	}
	printBrokersAndPartitions(out, md)
	return nil
}

func printQuorum(out io.Writer, resp *kmsg.DescribeQuorumResponse) {
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				fmt.Fprintf(out, "quorum: %v\n", err)
				continue
			}
			fmt.Fprintf(out, "quorum: leader %d, epoch %d, high watermark %d\n", p.LeaderID, p.LeaderEpoch, p.HighWatermark)
			now := time.Now().UnixMilli()
			show := func(kind string, rs []kmsg.DescribeQuorumResponseTopicPartitionReplicaState) {
				for _, r := range rs {
					fetched := "never"
					if r.LastFetchTimestamp >= 0 {
						fetched = fmt.Sprintf("%d ms ago", max(now-r.LastFetchTimestamp, 0))
					}
					fmt.Fprintf(out, "  %-8s %-4d log end %-8d lag %-6d last fetch %s\n", kind, r.ReplicaID, r.LogEndOffset,
						max(p.HighWatermark-r.LogEndOffset, 0), fetched)
				}
			}
			show("voter", p.CurrentVoters)
			show("observer", p.Observers)
		}
	}
}

func printBrokersAndPartitions(out io.Writer, md kadm.Metadata) {
	fmt.Fprintf(out, "brokers (unfenced): %d\n", len(md.Brokers))
	for _, b := range md.Brokers {
		rack := ""
		if b.Rack != nil {
			rack = " rack " + *b.Rack
		}
		fmt.Fprintf(out, "  %-4d %s:%d%s\n", b.NodeID, b.Host, b.Port, rack)
	}
	total, offline, under := 0, 0, 0
	var lines []string
	for _, t := range md.Topics.Sorted() {
		for _, p := range t.Partitions.Sorted() {
			total++
			switch {
			case p.Leader < 0:
				offline++
				lines = append(lines, fmt.Sprintf("  %s-%d: no leader (replicas %v, isr %v)", t.Topic, p.Partition, p.Replicas, p.ISR))
			case len(p.ISR) < len(p.Replicas):
				under++
				lines = append(lines, fmt.Sprintf("  %s-%d: under-replicated, leader %d (replicas %v, isr %v)", t.Topic, p.Partition, p.Leader, p.Replicas, p.ISR))
			}
		}
	}
	fmt.Fprintf(out, "partitions: %d, without a leader: %d, under-replicated: %d\n", total, offline, under)
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Fprintln(out, l)
	}
}
