package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The Kafka-client tools (topic, produce, consume, bench) use franz-go
// and work against any broker that speaks Kafka's protocol. Each takes
// --brokers; this file holds what they share.

// defaultBrokers is where a single Varve node listens by default.
const defaultBrokers = "127.0.0.1:9092"

// errUsage marks a bad flag value or argument.
var errUsage = errors.New("usage")

// clientFlags are the connection flags every client tool takes.
type clientFlags struct {
	brokers []string
}

// addClientFlags registers --brokers on cmd.
func addClientFlags(cmd *cobra.Command, c *clientFlags) {
	cmd.Flags().StringSliceVarP(&c.brokers, "brokers", "b", []string{defaultBrokers},
		"bootstrap brokers, host:port[,host:port...]")
}

// addPersistentClientFlags registers --brokers on cmd and its subcommands.
func addPersistentClientFlags(cmd *cobra.Command, c *clientFlags) {
	cmd.PersistentFlags().StringSliceVarP(&c.brokers, "brokers", "b", []string{defaultBrokers},
		"bootstrap brokers, host:port[,host:port...]")
}

// client makes a franz-go client for the brokers.
func (c *clientFlags) client(opts ...kgo.Opt) (*kgo.Client, error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.brokers...)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", strings.Join(c.brokers, ","), err)
	}
	return cl, nil
}

// admin makes a kadm client; close it with the returned kgo client.
func (c *clientFlags) admin() (*kadm.Client, *kgo.Client, error) {
	cl, err := c.client()
	if err != nil {
		return nil, nil, err
	}
	return kadm.NewClient(cl), cl, nil
}

// commandContext is cmd's context, cancelled by SIGINT or SIGTERM and,
// when timeout > 0, after timeout.
func commandContext(cmd *cobra.Command, timeout time.Duration) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	if timeout <= 0 {
		return ctx, stop
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	return ctx, func() { cancel(); stop() }
}

// parseKV splits "key=value" at the first '='; flag names the option in
// the error.
func parseKV(flag, s string) (string, string, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return "", "", fmt.Errorf("--%s %q: want key=value: %w", flag, s, errUsage)
	}
	return k, v, nil
}

// adminFlags are the flags of the admin commands (topic, group): the
// client's, and how long a command may take.
type adminFlags struct {
	clientFlags
	timeout time.Duration
}

// addAdminFlags adds them to a command and its subcommands.
func addAdminFlags(cmd *cobra.Command, f *adminFlags) {
	addPersistentClientFlags(cmd, &f.clientFlags)
	cmd.PersistentFlags().DurationVar(&f.timeout, "timeout", 30*time.Second, "give up after this long")
}

// session opens an admin client for one command, with the command's
// context bounded by --timeout; done releases both.
func (f *adminFlags) session(cmd *cobra.Command) (context.Context, *kadm.Client, func(), error) {
	ctx, cancel := commandContext(cmd, f.timeout)
	adm, cl, err := f.admin()
	if err != nil {
		cancel()
		return nil, nil, nil, err
	}
	return ctx, adm, func() { cl.Close(); cancel() }, nil
}
