// Command metadata measures the cluster's metadata operations on three
// `varve server` processes (package localcluster, combined mode, one
// node per loopback address), as issue 13's benchmarks ask:
//
//	go run ./experiments/metadata            # full run
//	go run ./experiments/metadata -quick     # smoke run
//
// Cases:
//
//	create     topic creations per second through kadm (replication
//	           factor 3; 1 and 10 partitions per topic), sequential (one
//	           CreateTopics of one topic at a time) and batched (100
//	           topics per CreateTopics); a fresh cluster for each, since
//	           every created partition stays in the image.
//	propagate  metadata propagation at 10, 1,000 and 10,000 partitions
//	           in the cluster (-sizes; 100,000 is skipped, with its
//	           reason, when the open-files limit or vm.max_map_count
//	           cannot hold that many logs per process). Each probe sends
//	           one change straight to the active controller (package
//	           quorum's Client on the controller listener): a
//	           CreateTopics of one topic (replication factor 3), or an
//	           IncrementalAlterConfigs of a topic's retention.ms. While
//	           it runs, one goroutine per broker polls that broker with
//	           Metadata (or DescribeConfigs) back to back on its own
//	           connection; the propagation to a broker is the time from
//	           the controller's answer (sent only after the entry has
//	           applied on the controller) to the first answer of that
//	           broker that shows the change. Nothing is subtracted: a
//	           poll's own round trip is in the figure, and the
//	           controller's own broker can show the change before its
//	           answer reaches us (a negative figure).
//
// The raft entry rate (records per second the quorum commits) and the
// replica manager's image application are Go benchmarks: see
// quorum/bench_test.go and cluster/replicas_bench_test.go.
//
// Results go to results/<YYYY-MM-DD>/ (results/quick/ for -quick):
// create.csv (one row per case), propagate.csv (one row per probe and
// broker), summary.md, and the plots propagation.{png,svg} and
// create.{png,svg}. The machine is shared: compare within one run.
//
// One goroutine drives the cases; each probe adds a poller per broker
// for its duration.
package main
