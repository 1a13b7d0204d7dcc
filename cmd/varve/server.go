package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
)

func init() {
	var overrides []string
	var logLevel string
	cmd := &cobra.Command{
		Use:   "server [server.properties] [--override key=value]...",
		Short: "Run a Varve node (broker with its embedded controller)",
		Long: `Run a Varve node. With no arguments it uses the defaults: data under
./varve-data, listening on 127.0.0.1:9092. A server.properties file uses
Kafka's property names; --override key=value wins over the file, as with
Kafka's kafka-server-start.sh. SIGTERM or SIGINT shuts down cleanly.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := ""
			if len(args) == 1 {
				file = args[0]
			}
			return runServer(file, overrides, logLevel)
		},
	}
	cmd.Flags().StringArrayVar(&overrides, "override", nil, "a property as key=value, overriding the file (repeatable)")
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	rootCmd.AddCommand(cmd)
}

func runServer(file string, overrides []string, level string) error {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lv}))
	slog.SetDefault(logger)
	cfg, err := loadServerConfig(file, overrides)
	if err != nil {
		return err
	}
	b, err := cluster.New(cfg, logger)
	if err != nil {
		return err
	}
	if err := b.Start(); err != nil {
		b.Shutdown(context.Background())
		return err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	s := <-sig
	logger.Info("shutting down", "signal", s.String())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return b.Shutdown(ctx)
}

func loadServerConfig(file string, overrides []string) (*config.Broker, error) {
	if file == "" {
		props := map[string]string{}
		for _, o := range overrides {
			k, v, ok := cutProperty(o)
			if !ok {
				return nil, fmt.Errorf("--override %q: want key=value", o)
			}
			props[k] = v
		}
		return config.Parse(props)
	}
	return config.ParseFile(file, overrides)
}

func cutProperty(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '=' {
			return s[:i], s[i+1:], i > 0
		}
	}
	return "", "", false
}
