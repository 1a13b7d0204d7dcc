// Command faults is the long soak of the fault tests: the chaos
// package's workload and checkers on a three-node cluster under random
// faults drawn from a seed, for as long as asked.
//
//	go run ./experiments/faults                      # 30 minutes, a new seed
//	go run ./experiments/faults --duration 3m --seed 42
//
// It needs root and nft (apt-get install nftables): it runs itself
// again in a private network namespace (chaos.RunInNetns), where three
// `varve server` processes live on 127.0.0.1-3 with chaos.ShortTimeouts
// and its clients connect from 127.0.0.4. A topic with replication
// factor 3 and min.insync.replicas=2 takes appends from idempotent
// acks=all producers and is read by group members and assigned
// consumers, while a schedule from -seed (replayable) applies, one at a
// time and each once every ISR is full again, faults drawn from every
// kind (SIGKILL, SIGSTOP past the session timeout, controlled shutdown
// and restart, a one-way or two-way cut, a node isolated) against a
// drawn node, a partition's leader, or the active controller. When the
// time is up it heals everything, waits for full ISRs, reads every
// partition from its start and runs every checker.
//
// Results go to <out>/<YYYY-MM-DD>/: summary.md (the command, the
// machine, the seed and schedule, what the appends and reads did, the
// checkers' verdict with the records of any anomaly, and every
// unavailability window with the faults in it), events.csv (every fault
// and heal), unavailability.csv, and throughput.csv (per second:
// appends acknowledged, and their median and p99 latency).
//
// The command exits non-zero when a checker finds an anomaly or the
// cluster does not recover (its ISRs are not full a minute after a
// fault healed): the summary says which, with the seed.
package main
