// Package fetchsession is Kafka's incremental fetch sessions (KIP-227):
// the broker's session cache and the per-request contexts it hands out
// (Kafka's FetchSessionCache, FetchManager and FetchContext), and the
// fetching side's session handler (Kafka's FetchSessionHandler) that
// turns "the partitions I want now" into a full or an incremental
// request.
//
// A fetch session remembers, on the broker, the partitions a fetcher
// asks for and what it was last told of each (high watermark, log start
// offset). An incremental request names only the partitions whose fetch
// parameters changed (and, in ForgottenTopicsData, those to drop); an
// incremental response names only the partitions with something new:
// records, a changed high watermark or log start offset, an error, a
// diverging epoch or a preferred read replica. A follower of a thousand
// quiet partitions then sends and receives a few bytes per round instead
// of a thousand entries.
//
// # Rules kept from Kafka
//
//   - Session ids are positive, random and never 0 (INVALID_SESSION_ID).
//     Epoch 0 (INITIAL_EPOCH) asks for a full fetch that creates a
//     session, -1 (FINAL_EPOCH) for a full fetch without one; a full
//     fetch naming a session closes it. The epoch after n is n+1,
//     wrapping from MaxInt32 to 1.
//   - An incremental request naming an unknown session gets
//     FETCH_SESSION_ID_NOT_FOUND, one with the wrong epoch
//     INVALID_FETCH_SESSION_EPOCH, and one whose use of topic ids
//     (Fetch v13+) differs from the session's FETCH_SESSION_TOPIC_ID_ERROR.
//     An incremental request that leaves a session empty closes it and is
//     answered without one.
//   - The cache holds at most max.incremental.fetch.session.cache.slots
//     sessions. A new session takes a slot when one is free, or evicts:
//     first the least recently used session if it is older than
//     min.incremental.fetch.session.eviction.ms; else the least valuable
//     evictable session (unprivileged before privileged, then fewer
//     partitions, then lower id) if it is worth no more than the new one.
//     Sessions of followers are privileged: a consumer's session never
//     evicts one younger than the eviction time.
//   - A partition answered with records moves to the end of its
//     session's order, so that a response budget serves every partition
//     in turn.
//
// It is a package of its own, below replica and cluster, because both
// use it: the broker's Fetch serves sessions, and replica's follower
// fetchers keep one with each leader.
//
// Measured (go test -run XXX -bench BenchmarkReplicaFetchRequestBytes
// -benchtime 200x ./cluster): a follower's Fetch request with 1,000
// followed partitions is 33,256 bytes per round in full; within a
// session it is 242 bytes a round when no partition moved, 588 when 10
// did and 3,543 when 100 did (averages over 200 rounds, the first one
// full).
//
// # Concurrency
//
// Nothing here is safe for concurrent use and nothing has a goroutine or
// a clock: time is an argument (milliseconds). The broker guards its
// Cache with one mutex; a fetcher loop owns its Handler.
package fetchsession
