package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

// varve group describe GROUP... prints, as kafka-consumer-groups
// --describe does, one line per partition the group has committed or is
// assigned: the committed offset, the log end offset, the lag between
// them, and the member consuming it ("-" where there is none). --members
// prints the members instead, --state the group's state.

type groupDescribeOptions struct {
	members bool
	state   bool
}

func newGroupDescribeCmd(f *adminFlags) *cobra.Command {
	var o groupDescribeOptions
	cmd := &cobra.Command{
		Use:   "describe GROUP...",
		Short: "Describe groups: per-partition committed offset, log end offset and lag, and the members",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGroupDescribe(cmd, f, o, args)
		},
	}
	cmd.Flags().BoolVar(&o.members, "members", false, "list the members and how many partitions each has")
	cmd.Flags().BoolVar(&o.state, "state", false, "show the group's state, protocol and member count")
	return cmd
}

func runGroupDescribe(cmd *cobra.Command, f *adminFlags, o groupDescribeOptions, groups []string) error {
	ctx, adm, done, err := f.session(cmd)
	if err != nil {
		return err
	}
	defer done()
	lags, err := adm.Lag(ctx, groups...)
	if err != nil {
		return fmt.Errorf("describe groups: %w", err)
	}
	var errs []error
	out := cmd.OutOrStdout()
	for _, g := range groups {
		l, ok := lags[g]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("describe group %s: not described", g))
			continue
		case l.Error() != nil:
			errs = append(errs, fmt.Errorf("describe group %s: %w", g, l.Error()))
			continue
		case l.State == "Dead":
			errs = append(errs, fmt.Errorf("consumer group %s does not exist", g))
			continue
		}
		switch {
		case o.state:
			printGroupState(out, l)
		case o.members:
			printGroupMembers(out, l)
		default:
			printGroupLag(out, l)
		}
	}
	return errors.Join(errs...)
}

func printGroupLag(out io.Writer, l kadm.DescribedGroupLag) {
	if len(l.Members) == 0 {
		fmt.Fprintf(out, "Consumer group '%s' has no active members.\n", l.Group)
	}
	w := table(out)
	fmt.Fprintln(w, "GROUP\tTOPIC\tPARTITION\tCURRENT-OFFSET\tLOG-END-OFFSET\tLAG\tCONSUMER-ID\tHOST\tCLIENT-ID")
	for _, m := range l.Lag.Sorted() {
		current, lag := "-", "-"
		if m.Commit.At >= 0 {
			current = strconv.FormatInt(m.Commit.At, 10)
			if m.End.Err == nil {
				lag = strconv.FormatInt(m.Lag, 10)
			}
		}
		end := "-"
		if m.End.Err == nil {
			end = strconv.FormatInt(m.End.Offset, 10)
		}
		id, host, client := "-", "-", "-"
		if m.Member != nil {
			id, host, client = m.Member.MemberID, m.Member.ClientHost, m.Member.ClientID
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", l.Group, m.Topic, m.Partition, current, end, lag, id, host, client)
	}
	w.Flush()
	fmt.Fprintln(out)
}

func printGroupMembers(out io.Writer, l kadm.DescribedGroupLag) {
	w := table(out)
	fmt.Fprintln(w, "GROUP\tCONSUMER-ID\tGROUP-INSTANCE-ID\tHOST\tCLIENT-ID\t#PARTITIONS")
	for _, m := range l.Members {
		n := 0
		if a, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range a.Topics {
				n += len(t.Partitions)
			}
		}
		instance := "-"
		if m.InstanceID != nil {
			instance = *m.InstanceID
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\n", l.Group, m.MemberID, instance, m.ClientHost, m.ClientID, n)
	}
	w.Flush()
	fmt.Fprintln(out)
}

func printGroupState(out io.Writer, l kadm.DescribedGroupLag) {
	w := table(out)
	fmt.Fprintln(w, "GROUP\tCOORDINATOR (ID)\tASSIGNMENT-STRATEGY\tSTATE\t#MEMBERS")
	coord := fmt.Sprintf("%s:%d (%d)", l.Coordinator.Host, l.Coordinator.Port, l.Coordinator.NodeID)
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\n", l.Group, coord, dash(l.Protocol), l.State, len(l.Members))
	w.Flush()
	fmt.Fprintln(out)
}
