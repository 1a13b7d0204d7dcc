package main

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// varve group list|describe|delete|reset-offsets: Kafka's
// kafka-consumer-groups over kadm, for any Kafka-protocol broker.

func init() { rootCmd.AddCommand(newGroupCmd()) }

func newGroupCmd() *cobra.Command {
	var f adminFlags
	cmd := &cobra.Command{
		Use:   "group",
		Short: "List, describe (with lag), delete consumer groups and reset their offsets",
	}
	addAdminFlags(cmd, &f)
	cmd.AddCommand(newGroupListCmd(&f), newGroupDescribeCmd(&f), newGroupDeleteCmd(&f), newGroupResetCmd(&f))
	return cmd
}

func newGroupListCmd(f *adminFlags) *cobra.Command {
	var states []string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List groups (ListGroups): name, state, protocol type",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runGroupList(cmd, f, states)
		},
	}
	cmd.Flags().StringSliceVar(&states, "state", nil, "only groups in these states (Empty, Stable, PreparingRebalance, CompletingRebalance, Dead)")
	return cmd
}

func runGroupList(cmd *cobra.Command, f *adminFlags, states []string) error {
	ctx, adm, done, err := f.session(cmd)
	if err != nil {
		return err
	}
	defer done()
	groups, err := adm.ListGroups(ctx, states...)
	if err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	w := table(cmd.OutOrStdout())
	fmt.Fprintln(w, "GROUP\tSTATE\tPROTOCOL-TYPE")
	for _, g := range groups.Sorted() {
		fmt.Fprintf(w, "%s\t%s\t%s\n", g.Group, g.State, dash(g.ProtocolType))
	}
	return w.Flush()
}

func newGroupDeleteCmd(f *adminFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "delete GROUP...",
		Short: "Delete groups and their committed offsets (DeleteGroups; only groups without members)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGroupDelete(cmd, f, args)
		},
	}
}

func runGroupDelete(cmd *cobra.Command, f *adminFlags, groups []string) error {
	ctx, adm, done, err := f.session(cmd)
	if err != nil {
		return err
	}
	defer done()
	resps, err := adm.DeleteGroups(ctx, groups...)
	if err != nil {
		return fmt.Errorf("delete groups: %w", err)
	}
	var errs []error
	for _, g := range groups {
		r := resps[g]
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("delete group %s: %w", g, r.Err))
			continue
		}
		fmt.Fprintf(cmd.OutOrStdout(), "Deleted group %s.\n", g)
	}
	return errors.Join(errs...)
}

// table is the tab-aligned writer the group commands print with.
func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

// dash prints "-" for an empty field, as kafka-consumer-groups does.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
