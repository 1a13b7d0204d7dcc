package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/varve/varve/benchmarks/kafkabench"
)

// startCluster starts an in-process kfake cluster (franz-go's fake Kafka)
// with one broker on loopback and returns its --brokers value.
func startCluster(t *testing.T) string {
	t.Helper()
	k, err := kafkabench.StartKfake(1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return strings.Join(k.Addrs, ",")
}

// varve runs one command line of the client tools on a fresh command
// tree (flags do not leak between runs) and returns stdout and stderr.
func varve(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	root := &cobra.Command{Use: "varve", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(newTopicCmd(), newProduceCmd(), newConsumeCmd(), newClientBenchCmd())
	var out, errOut bytes.Buffer
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&errOut)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// mustVarve is varve that fails the test on an error.
func mustVarve(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := varve(t, stdin, args...)
	if err != nil {
		t.Fatalf("varve %s: %v\nstderr: %s", strings.Join(args, " "), err, errOut)
	}
	return out
}
