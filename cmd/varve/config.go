package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// varve config describe|set|delete: Kafka's kafka-configs for topics,
// brokers (one node, or the cluster-wide defaults) and broker loggers,
// over DescribeConfigs and IncrementalAlterConfigs. describe prints an
// aligned table with where each value comes from.

func init() { rootCmd.AddCommand(newConfigCmd()) }

// configTarget is the resource a config command works on: exactly one
// of its flags.
type configTarget struct {
	topic          string
	broker         int32
	brokerDefaults bool
	brokerLogger   int32
}

func addConfigTargetFlags(cmd *cobra.Command, t *configTarget) {
	fl := cmd.Flags()
	fl.StringVar(&t.topic, "topic", "", "a topic")
	fl.Int32Var(&t.broker, "broker", -1, "one broker, by node id")
	fl.BoolVar(&t.brokerDefaults, "broker-defaults", false, "the cluster-wide broker defaults")
	fl.Int32Var(&t.brokerLogger, "broker-logger", -1, "a broker's loggers, by node id")
}

// resource returns the target's type and name.
func (t configTarget) resource() (kmsg.ConfigResourceType, string, error) {
	var rt kmsg.ConfigResourceType
	var name string
	n := 0
	if t.topic != "" {
		rt, name, n = kmsg.ConfigResourceTypeTopic, t.topic, n+1
	}
	if t.broker >= 0 {
		rt, name, n = kmsg.ConfigResourceTypeBroker, strconv.Itoa(int(t.broker)), n+1
	}
	if t.brokerDefaults {
		rt, name, n = kmsg.ConfigResourceTypeBroker, "", n+1
	}
	if t.brokerLogger >= 0 {
		rt, name, n = kmsg.ConfigResourceTypeBrokerLogger, strconv.Itoa(int(t.brokerLogger)), n+1
	}
	if n != 1 {
		return 0, "", fmt.Errorf("give exactly one of --topic, --broker, --broker-defaults, --broker-logger: %w", errUsage)
	}
	return rt, name, nil
}

// describeName is how messages name a resource.
func describeName(rt kmsg.ConfigResourceType, name string) string {
	switch {
	case rt == kmsg.ConfigResourceTypeTopic:
		return "topic " + name
	case rt == kmsg.ConfigResourceTypeBrokerLogger:
		return "the loggers of broker " + name
	case name == "":
		return "the broker defaults"
	}
	return "broker " + name
}

func newConfigCmd() *cobra.Command {
	var f adminFlags
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Describe and change topic, broker and broker logger configs (kafka-configs)",
	}
	addAdminFlags(cmd, &f)
	cmd.AddCommand(newConfigDescribeCmd(&f), newConfigSetCmd(&f), newConfigDeleteCmd(&f))
	return cmd
}

func newConfigDescribeCmd(f *adminFlags) *cobra.Command {
	var t configTarget
	var all, synonyms bool
	cmd := &cobra.Command{
		Use:   "describe (--topic T | --broker N | --broker-defaults | --broker-logger N)",
		Short: "Show configs with their source (DescribeConfigs); only those set unless --all",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runConfigDescribe(cmd, f, t, all, synonyms)
		},
	}
	addConfigTargetFlags(cmd, &t)
	cmd.Flags().BoolVar(&all, "all", false, "also the configs at their default")
	cmd.Flags().BoolVar(&synonyms, "synonyms", false, "list each config's synonyms, highest precedence first")
	return cmd
}

func runConfigDescribe(cmd *cobra.Command, f *adminFlags, t configTarget, all, synonyms bool) error {
	rt, name, err := t.resource()
	if err != nil {
		return err
	}
	ctx, cl, done, err := f.kafkaSession(cmd)
	if err != nil {
		return err
	}
	defer done()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms = synonyms
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = rt, name
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("describe configs: %w", err)
	}
	if len(resp.Resources) != 1 {
		return fmt.Errorf("describe configs: %d resources in the answer", len(resp.Resources))
	}
	r := resp.Resources[0]
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		return fmt.Errorf("describe configs of %s: %w%s", describeName(rt, name), err, detail(ptrString(r.ErrorMessage)))
	}
	return printConfigs(cmd.OutOrStdout(), r.Configs, all, synonyms)
}

// printConfigs prints one line per config: name, value, source and
// whether it can change at run time; synonyms indented below.
func printConfigs(out io.Writer, cs []kmsg.DescribeConfigsResponseResourceConfig, all, synonyms bool) error {
	w := table(out)
	fmt.Fprintln(w, "NAME\tVALUE\tSOURCE\tDYNAMIC")
	for _, c := range cs {
		if !all && c.Source == kmsg.ConfigSourceDefaultConfig {
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", c.Name, configValue(c.Value, c.IsSensitive), sourceName(c.Source), yesNo(!c.ReadOnly))
		if !synonyms {
			continue
		}
		for _, s := range c.ConfigSynonyms {
			fmt.Fprintf(w, "  %s\t%s\t%s\t\n", s.Name, configValue(s.Value, c.IsSensitive), sourceName(s.Source))
		}
	}
	return w.Flush()
}

func configValue(v *string, sensitive bool) string {
	switch {
	case sensitive:
		return "(sensitive)"
	case v == nil:
		return "(null)"
	case *v == "":
		return `""`
	}
	return *v
}

// sourceName is a short name for a config source.
func sourceName(s kmsg.ConfigSource) string {
	switch s {
	case kmsg.ConfigSourceDynamicTopicConfig:
		return "topic"
	case kmsg.ConfigSourceDynamicBrokerConfig:
		return "dynamic broker"
	case kmsg.ConfigSourceDynamicDefaultBrokerConfig:
		return "dynamic default"
	case kmsg.ConfigSourceStaticBrokerConfig:
		return "static"
	case kmsg.ConfigSourceDefaultConfig:
		return "default"
	case kmsg.ConfigSourceDynamicBrokerLoggerConfig:
		return "logger"
	}
	return s.String()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func ptrString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func newConfigSetCmd(f *adminFlags) *cobra.Command {
	var t configTarget
	cmd := &cobra.Command{
		Use:   "set (--topic T | --broker N | --broker-defaults | --broker-logger N) key=value...",
		Short: "Set configs (IncrementalAlterConfigs SET); others keep their values",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var ops []kmsg.IncrementalAlterConfigsRequestResourceConfig
			for _, a := range args {
				k, v, err := parseKV("set", a)
				if err != nil {
					return err
				}
				op := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
				op.Name, op.Value, op.Op = k, &v, kmsg.IncrementalAlterConfigOpSet
				ops = append(ops, op)
			}
			return runConfigAlter(cmd, f, t, ops)
		},
	}
	addConfigTargetFlags(cmd, &t)
	return cmd
}

func newConfigDeleteCmd(f *adminFlags) *cobra.Command {
	var t configTarget
	cmd := &cobra.Command{
		Use:   "delete (--topic T | --broker N | --broker-defaults | --broker-logger N) key...",
		Short: "Delete configs, back to the level below (IncrementalAlterConfigs DELETE)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var ops []kmsg.IncrementalAlterConfigsRequestResourceConfig
			for _, k := range args {
				op := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
				op.Name, op.Op = k, kmsg.IncrementalAlterConfigOpDelete
				ops = append(ops, op)
			}
			return runConfigAlter(cmd, f, t, ops)
		},
	}
	addConfigTargetFlags(cmd, &t)
	return cmd
}

func runConfigAlter(cmd *cobra.Command, f *adminFlags, t configTarget, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) error {
	rt, name, err := t.resource()
	if err != nil {
		return err
	}
	ctx, cl, done, err := f.kafkaSession(cmd)
	if err != nil {
		return err
	}
	defer done()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.Configs = rt, name, ops
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("alter configs: %w", err)
	}
	var errs []error
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			errs = append(errs, fmt.Errorf("alter configs of %s: %w%s", describeName(rt, name), err, detail(ptrString(r.ErrorMessage))))
			continue
		}
		fmt.Fprintf(cmd.OutOrStdout(), "Altered configs of %s.\n", describeName(rt, name))
	}
	if len(resp.Resources) == 0 {
		errs = append(errs, errors.New("alter configs: no resource in the answer"))
	}
	return errors.Join(errs...)
}

// kafkaSession is session with the franz-go client itself, for requests
// kadm has no call for (broker loggers, read_only).
func (f *adminFlags) kafkaSession(cmd *cobra.Command) (context.Context, *kgo.Client, func(), error) {
	ctx, cancel := commandContext(cmd, f.timeout)
	cl, err := f.client()
	if err != nil {
		cancel()
		return nil, nil, nil, err
	}
	return ctx, cl, func() { cl.Close(); cancel() }, nil
}
