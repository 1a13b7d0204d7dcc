// Package rate measures a rate as Kafka's metrics do for quotas: a
// Sensor is Kafka's Rate over a SampledStat, a ring of samples each
// holding the total recorded during one window. The rate is the
// samples' total over the time they cover. Two measures of that time
// exist in Kafka and both are here: Rate (client quotas) counts at
// least samples-1 whole windows, so that a new sensor does not read a
// first burst as a huge rate; SimpleRate (replication quotas,
// ReplicationQuotaManager) counts the time since the oldest sample
// began, at least one window.
//
// Invariants: samples older than samples x window are reset before
// every record and every measure (Kafka's purgeObsoleteSamples); a
// value is added to the current sample, or to the next one once the
// current one's window is over. Time is an input of every call: the
// package reads no clock.
//
// A Sensor is not safe for concurrent use: its owner serialises calls.
package rate
