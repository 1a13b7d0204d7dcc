package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/migrate"
)

// migrateCmd groups the migrations of data written by other software.
var migrateCmd = &cobra.Command{
	Use:   "migrate",
	Short: "Prepare a Varve node to serve data another system wrote",
}

func init() {
	rootCmd.AddCommand(migrateCmd)
	migrateCmd.AddCommand(newMigrateFromKafkaCmd())
}

func newMigrateFromKafkaCmd() *cobra.Command {
	var metadataDir string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "from-kafka LOGDIR [--metadata-dir DIR] [--dry-run]",
		Short: "Adopt a stopped single-node Kafka's log dir: topics, ids, configs, producer ids",
		Long: `Reads a stopped KRaft Kafka node's metadata log (__cluster_metadata-0 in
--metadata-dir, Kafka's metadata.log.dir, by default LOGDIR) and LOGDIR's
meta.properties and partition directories, and writes the Varve node's
metadata file into LOGDIR, so that "varve server" with log.dirs=LOGDIR and
Kafka's node.id serves the same topics (ids, partitions, configs), SCRAM
credentials and ACLs, handing out producer ids above Kafka's. Kafka's files
are not modified. It refuses, writing nothing, what it cannot carry over:
partitions with replicas on other nodes, partitions missing from LOGDIR,
stray partition directories, metadata records it does not know, client
quotas and delegation tokens, a log dir Kafka still runs on.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := migrate.Build(args[0], metadataDir)
			if err != nil {
				return err
			}
			p.Print(cmd.OutOrStdout())
			if dryRun {
				if len(p.Refusals) > 0 {
					return migrate.ErrRefused
				}
				fmt.Fprintln(cmd.OutOrStdout(), "dry run: nothing written")
				return nil
			}
			if err := p.Write(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\nstart the node with: varve server --override log.dirs=%s --override node.id=%d\n",
				filepath.Join(p.LogDir, cluster.MetadataFile), p.LogDir, p.NodeID)
			return nil
		},
	}
	cmd.Flags().StringVar(&metadataDir, "metadata-dir", "", "Kafka's metadata.log.dir (default: LOGDIR)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the plan and write nothing")
	return cmd
}
