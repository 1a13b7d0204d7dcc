// Command brokerbench measures issue 7's broker figures in one run on one
// machine: `varve bench`'s workloads against a `varve server` child
// process and, side by side, against franz-go's in-memory fake cluster
// (kfake) as the reference point.
//
//	go run ./experiments/brokerbench            # full run, a few minutes
//	go run ./experiments/brokerbench -quick     # smoke run
//
// Cases:
//
//	produce      100 B and 1 KiB records, acks=1 and acks=all, 1 and 4 producers
//	sync         one record per request (a produce round trip each), beside a
//	             bare TCP ping-pong of 100 bytes on loopback in this process,
//	             with the Reactor and with the goroutine-per-connection server,
//	             requests handed to the handler pool or served inline
//	consume      one consumer from the start of a topic of -consume-bytes (2 GiB)
//	groupcommit  log.flush.interval.messages=1 (an fsync before every
//	             acknowledgement), acks=all, 1, 4 and 16 producers each sending
//	             one record per request to one partition: whether concurrent
//	             producers share fsyncs
//
// Every Varve case also reports the broker's CPU seconds per GB produced or
// consumed, from the server's Prometheus metrics (process_cpu_seconds_total
// and the broker byte counters). Results go to results/<YYYY-MM-DD>/ (results/quick/ for -quick):
// results.csv and summary.md, with the load average before and after; the
// machine is shared, so compare brokers within one run, not across runs.
package main
