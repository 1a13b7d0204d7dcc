package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

// varve topic alter-config sets and deletes topic-level configs with
// IncrementalAlterConfigs, as kafka-configs --alter --entity-type topics
// --add-config/--delete-config does: configs not named keep their values.

// alterConfigOptions are the flags of varve topic alter-config.
type alterConfigOptions struct {
	set []string
	del []string
}

func newTopicAlterConfigCmd(f *adminFlags) *cobra.Command {
	var o alterConfigOptions
	cmd := &cobra.Command{
		Use:   "alter-config TOPIC... (--set key=value | --delete key)...",
		Short: "Set or delete topic configs (IncrementalAlterConfigs)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTopicAlterConfig(cmd, f, o, args)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&o.set, "set", nil, "set a config, key=value (repeatable)")
	fl.StringArrayVar(&o.del, "delete", nil, "delete a config override, back to the broker default (repeatable)")
	return cmd
}

// alterations turns the flags into kadm's incremental operations.
func (o alterConfigOptions) alterations() ([]kadm.AlterConfig, error) {
	var acs []kadm.AlterConfig
	for _, s := range o.set {
		k, v, err := parseKV("set", s)
		if err != nil {
			return nil, err
		}
		acs = append(acs, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: &v})
	}
	for _, k := range o.del {
		acs = append(acs, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
	}
	if len(acs) == 0 {
		return nil, fmt.Errorf("alter-config: nothing to do, give --set or --delete: %w", errUsage)
	}
	return acs, nil
}

func runTopicAlterConfig(cmd *cobra.Command, f *adminFlags, o alterConfigOptions, topics []string) error {
	acs, err := o.alterations()
	if err != nil {
		return err
	}
	ctx, adm, done, err := f.session(cmd)
	if err != nil {
		return err
	}
	defer done()
	resps, err := adm.AlterTopicConfigs(ctx, acs, topics...)
	if err != nil {
		return fmt.Errorf("alter configs: %w", err)
	}
	var errs []error
	for _, r := range resps {
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("alter configs of topic %s: %w%s", r.Name, r.Err, detail(r.ErrMessage)))
			continue
		}
		fmt.Fprintf(cmd.OutOrStdout(), "Altered configs of topic %s.\n", r.Name)
	}
	return errors.Join(errs...)
}
