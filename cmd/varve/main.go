// Command varve is Varve's one binary: the storage tools today, the
// server and the Kafka-client tools as they arrive.
//
//	varve log dump DIR|FILE   print segments, batches and index entries
//	varve log bench           run the storage benchmarks against the disk model
//	varve log compact DIR     run one compaction pass over a partition directory
//	varve cluster up          run a local cluster of N server processes until Ctrl-C
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// rootCmd is the top of the command tree; each subcommand lives in its
// own file and adds itself in an init function.
var rootCmd = &cobra.Command{
	Use:           "varve",
	Short:         "Varve: a Kafka-compatible distributed commit log",
	SilenceUsage:  true,
	SilenceErrors: true,
}

// logCmd groups the tools that work on log directories.
var logCmd = &cobra.Command{
	Use:   "log",
	Short: "Work with log directories: dump, bench, compact",
}

func init() { rootCmd.AddCommand(logCmd) }

func main() {
	if err := rootCmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "varve:", err)
		os.Exit(1)
	}
}
