// Command replication measures replication alone, beside its models, in
// one run on one machine: three `varve server` processes in combined
// mode (internal/localcluster), each on its own loopback address.
//
//	go run ./experiments/replication            # full run, several minutes
//	go run ./experiments/replication -quick     # smoke run
//
// Before any node runs, the run calibrates the models' inputs on this
// machine: a 100-byte TCP ping-pong between two processes (the echo
// server is this binary as experiments/internal/pingpong's child), one loopback TCP stream
// of 1 MiB writes, sendfile(2) of a page-cached file to a loopback
// socket, a follower's append (segment.Log.AppendReplicated of 1 MiB
// fetches of 16-record batches of 1 KiB records; and of one small batch
// at a time, with and without flush.messages=1), and the disk model
// (diskmodel: fsync of 4 KiB). Each limit (loopback, sendfile, append
// rate) is the best of three tries: on a shared machine other work only
// ever takes capacity away from a measurement. The sendfile limit is
// measured again just before the catch-up, and the better figure kept.
//
// Cases, all on one cluster:
//
//	throughput  1 KiB records, acks=all, -producers franz-go clients, to a
//	            one-partition topic of replication factor 1 and 3 (the
//	            controller places them), -reps times each, alternating.
//	            Model: min(the leader's append rate, measured as RF1 on the
//	            same cluster; loopback bandwidth / 2 followers; a
//	            follower's append rate). CPU per MB of each node from
//	            /proc/<pid>/stat, by role, and of the producers.
//	latency     one 100-byte record at a time, acks=1 then acks=all, on a
//	            topic of replication factor 3, and on one with
//	            flush.messages=1. Model of acks=all: the acks=1 median plus
//	            one fetch round trip (the ping-pong) and the follower's
//	            append (plus diskmodel's fsync with flush.messages=1).
//	profile     -profile seconds of CPU profile of the leader and a
//	            follower (/debug/pprof on varve.metrics.listener) while
//	            producers keep a replicated topic busy.
//	catchup     a follower is stopped while -catch-up-bytes are produced
//	            (acks=1), then started; the time from its serving again to
//	            its return to the ISR, as a rate, against the sendfile limit.
//	catchup_throttled   with -throttle N (bytes/s), the same again on a
//	            topic whose follower.replication.throttled.replicas is
//	            "*", with the cluster default
//	            follower.replication.throttled.rate at N while the
//	            follower catches up (KIP-73): its rate against N.
//
// Every throughput, latency and catch-up case also records the machine's
// TCP retransmissions after a timeout (/proc/net/netstat TCPTimeouts):
// on loopback each costs at least the 200 ms minimum retransmission
// timeout, which a replication round trip then waits.
//
// Results go to results/<YYYY-MM-DD>/ (results/quick/ for -quick):
// results.csv (one row a figure), summary.md (medians beside models),
// ratios.png/.svg, network.json (this run's calibration), calibration.json
// (the disk model), and cpu_leader/cpu_follower .pprof and .txt. The
// machine is shared, so compare within one run, not across runs.
package main
