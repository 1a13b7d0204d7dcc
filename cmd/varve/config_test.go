package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

func configCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := &cobra.Command{Use: "varve", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(newConfigCmd(), newTopicCmd())
	var out, errOut bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return out.String(), err
}

func mustConfigCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, err := configCLI(t, args...)
	if err != nil {
		t.Fatalf("varve %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// line returns the table line starting with name, its fields split.
func line(out, name string) []string {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == name {
			return f
		}
	}
	return nil
}

// Kafka: kafka-configs --describe/--alter for topics, brokers, the
// broker defaults and broker loggers (KIP-226, KIP-412), shown as a
// table with each value's source.
func TestConfigCommand(t *testing.T) {
	b := startVarve(t)
	mustConfigCLI(t, "topic", "create", "t1", "-b", b)
	if out := mustConfigCLI(t, "config", "set", "--broker-defaults", "log.retention.ms=60000", "-b", b); out != "Altered configs of the broker defaults.\n" {
		t.Errorf("set printed %q", out)
	}
	mustConfigCLI(t, "config", "set", "--broker", "1", "log.retention.bytes=9000", "message.max.bytes=50000", "-b", b)
	mustConfigCLI(t, "config", "set", "--topic", "t1", "segment.bytes=100000", "-b", b)

	out := mustConfigCLI(t, "config", "describe", "--broker", "1", "-b", b)
	if f := line(out, "log.retention.bytes"); strings.Join(f, " ") != "log.retention.bytes 9000 dynamic broker yes" {
		t.Errorf("broker describe line %v in\n%s", f, out)
	}
	if f := line(out, "log.retention.ms"); strings.Join(f, " ") != "log.retention.ms 60000 dynamic default yes" {
		t.Errorf("broker describe line %v", f)
	}
	if line(out, "num.partitions") != nil {
		t.Error("describe without --all lists a default")
	}
	if !strings.HasPrefix(out, "NAME") {
		t.Errorf("no header:\n%s", out)
	}
	all := mustConfigCLI(t, "config", "describe", "--broker", "1", "--all", "--synonyms", "-b", b)
	if f := line(all, "num.partitions"); strings.Join(f, " ") != "num.partitions 1 default no" {
		t.Errorf("--all line %v", f)
	}
	if !strings.Contains(all, "  log.retention.bytes  ") && !strings.Contains(all, "\n  log.retention.bytes") {
		t.Errorf("--synonyms lists no synonym:\n%s", all)
	}
	defs := mustConfigCLI(t, "config", "describe", "--broker-defaults", "-b", b)
	if line(defs, "log.retention.ms") == nil || line(defs, "log.retention.bytes") != nil {
		t.Errorf("broker defaults:\n%s", defs)
	}
	top := mustConfigCLI(t, "config", "describe", "--topic", "t1", "-b", b)
	if f := line(top, "segment.bytes"); len(f) < 3 || f[1] != "100000" || f[2] != "topic" {
		t.Errorf("topic line %v", f)
	}
	if f := line(top, "retention.ms"); len(f) < 4 || f[1] != "60000" || f[2] != "dynamic" || f[3] != "default" {
		t.Errorf("topic retention.ms line %v: the broker default should show through", f)
	}
	mustConfigCLI(t, "config", "delete", "--broker", "1", "log.retention.bytes", "-b", b)
	if line(mustConfigCLI(t, "config", "describe", "--broker", "1", "-b", b), "log.retention.bytes") != nil {
		t.Error("log.retention.bytes still listed after delete")
	}
	mustConfigCLI(t, "config", "set", "--broker-logger", "1", "root=WARN", "-b", b)
	if f := line(mustConfigCLI(t, "config", "describe", "--broker-logger", "1", "-b", b), "root"); len(f) < 3 || f[1] != "WARN" {
		t.Errorf("logger line %v", f)
	}
	if _, err := configCLI(t, "config", "set", "--broker", "1", "num.partitions=4", "-b", b); err == nil ||
		!strings.Contains(err.Error(), "Cannot update these configs dynamically: Set(num.partitions)") {
		t.Errorf("a read-only config: %v", err)
	}
	if _, err := configCLI(t, "config", "describe", "--topic", "t1", "--broker", "1", "-b", b); err == nil {
		t.Error("two targets accepted")
	}
}
