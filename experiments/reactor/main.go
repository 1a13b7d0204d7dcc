package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "reactor:", err)
		os.Exit(2)
	}
	switch cfg.role {
	case "server":
		err = serverMain(cfg, os.Stdin, os.Stdout)
	case "loadgen":
		err = loadgenMain(cfg, os.Stdin, os.Stdout)
	case "":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		var dir string
		dir, err = run(ctx, cfg)
		if err == nil {
			fmt.Println("results in", dir)
		}
	default:
		err = fmt.Errorf("unknown -role %q", cfg.role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "reactor:", cfg.role, err)
		os.Exit(1)
	}
}
