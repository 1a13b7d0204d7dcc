// Command attacks measures what a hostile client can make a varve server
// hold: the broker's peak resident memory under each attack of the
// hardening issue, at 1x and 10x the attack as first reproduced, beside a
// documented ceiling, and whether the broker still serves afterwards.
//
//	go run ./experiments/attacks            # full run: every attack at 1x and 10x, ~10 minutes
//	go run ./experiments/attacks -quick     # smoke run: 1x only, attacks a quarter the size
//	go run ./experiments/attacks -attacks partial-frames,fetch-amplification -scales 1
//
// The ceiling (-ceiling) is the memory the broker is given (-gomemlimit,
// 2 GiB): queued.max.request.bytes, unset, bounds the bytes of requests
// being read and queued to half of GOMEMLIMIT (package net), and the Go
// runtime lets garbage accumulate up to GOMEMLIMIT before it collects
// harder, so a broker holding a full request pool may rightly peak
// between the pool and the limit, but not past it. A bound holds when
// the 10x attack peaks about as high as the 1x one although it sends ten
// times the bytes.
//
// # Attacks (at 1x)
//
//   - partial-frames: 24 connections each send a 90 MiB size prefix and
//     then as much of an 89 MiB body as the broker reads in the attack
//     window, never finishing the request.
//   - fetch-amplification: 4 connections each send one Fetch (v4) naming
//     partition 0 of one topic 400,000 times (6 MB) with max_wait 20 s, so
//     the fetches park.
//   - downconvert-bomb: 40 zstd batches whose one record is 60 MiB of
//     zeros (a few KiB compressed) are produced to a topic that allows
//     them (max.message.bytes=100 MiB), then 2 old clients fetch them with
//     Fetch v2, which makes the broker down-convert to magic 1.
//   - group-metadata: 40 JoinGroup requests, each in its own new group,
//     carrying 8 MiB of protocol metadata.
//   - autocreate-storm: one Metadata request naming 3,000 unknown topics
//     with auto-creation allowed.
//
// Each attack at each scale runs against a fresh `varve server` child
// (GOMEMLIMIT from -gomemlimit, the memory an operator gives the process),
// whose VmRSS is sampled every 20 ms. A watchdog kills the child past
// -kill-at, standing in for a container's memory limit, and the run is
// reported as killed. After the attack the connections are closed and the
// broker must answer ApiVersions and acknowledge and return one produced
// record within 10 s ("serves after").
//
// # Outputs
//
// results/<YYYY-MM-DD>/ (results/quick/ for -quick): attacks.csv (one row
// per attack and scale), peak_rss.png/.svg (peak RSS per attack, 1x and
// 10x, with the ceiling), summary.md (the table and the verdict: every
// run under -ceiling and serving afterwards).
package main
