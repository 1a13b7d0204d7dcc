package config

import (
	"errors"
	"fmt"
	"strings"
)

// derive fills the properties whose Kafka default is null from their
// synonyms, with Kafka's precedence.
func (b *Broker) derive() error {
	const hour, minute = 3600 * 1000, 60 * 1000
	if !b.isSet("log.roll.ms") {
		b.LogRollMs = Millis(b.logRollHours) * hour
	}
	if !b.isSet("log.roll.jitter.ms") {
		b.LogRollJitterMs = Millis(b.logRollJitterHours) * hour
	}
	// Kafka: log.retention.ms, else .minutes, else .hours; negative is -1.
	switch {
	case b.isSet("log.retention.ms"):
	case b.isSet("log.retention.minutes"):
		b.LogRetentionMs = Millis(b.logRetentionMinutes) * minute
	default:
		b.LogRetentionMs = Millis(b.logRetentionHours) * hour
	}
	if b.LogRetentionMs < 0 {
		b.LogRetentionMs = -1
	}
	if !b.isSet("log.flush.interval.ms") {
		b.LogFlushIntervalMs = b.LogFlushSchedulerIntervalMs
	}
	if len(b.LogDirs) == 0 {
		b.LogDirs = splitList(b.logDir)
	}
	if len(b.AdvertisedListeners) == 0 {
		b.AdvertisedListeners = append([]Listener(nil), b.Listeners...)
	}
	for i, n := range b.ControllerListenerNames {
		b.ControllerListenerNames[i] = strings.ToUpper(n)
	}
	if err := b.deriveInterBroker(); err != nil {
		return err
	}
	return b.deriveNodeID()
}

func (b *Broker) deriveInterBroker() error {
	if b.isSet("inter.broker.listener.name") && b.isSet("security.inter.broker.protocol") {
		return invalid("inter.broker.listener.name", b.InterBrokerListenerName,
			"only one of inter.broker.listener.name and security.inter.broker.protocol may be set")
	}
	if b.isSet("inter.broker.listener.name") {
		b.InterBrokerListenerName = strings.ToUpper(b.InterBrokerListenerName)
	} else {
		// Kafka: ListenerName.forSecurityProtocol(security.inter.broker.protocol).
		b.InterBrokerListenerName = b.securityInterBrokerProtocol
	}
	return nil
}

// deriveNodeID applies broker.id, Kafka's older name for node.id.
func (b *Broker) deriveNodeID() error {
	switch {
	case b.isSet("broker.id") && b.isSet("node.id") && b.brokerID != b.NodeID:
		return invalid("broker.id", b.set["broker.id"], "must equal node.id (%d) when both are set", b.NodeID)
	case b.isSet("broker.id"):
		b.NodeID = b.brokerID
	default:
		b.brokerID = b.NodeID
	}
	return nil
}

// validate applies the checks Kafka's KafkaConfig makes across
// properties, for the roles this node plays.
func (b *Broker) validate() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(b.validateLogs())
	add(b.validateReplication())
	add(b.validateQuorum())
	add(b.validateListeners())
	add(b.validateListenerProps())
	add(b.validateLearner())
	return errors.Join(errs...)
}

func (b *Broker) validateLogs() error {
	for _, d := range b.LogDirs {
		if d == "" {
			return invalid("log.dirs", b.set["log.dirs"], "expected no empty directory")
		}
	}
	if b.LogRetentionMs == 0 {
		// Kafka: log.retention.ms must be unlimited (-1) or at least 1.
		return invalid("log.retention.ms", b.LogRetentionMs.String(), "expected -1 (unlimited) or at least 1 ms")
	}
	// Kafka: at least 1 MiB of dedupe buffer per cleaner thread.
	if b.LogCleanerThreads > 0 && b.LogCleanerDedupeBufferSize/int64(b.LogCleanerThreads) <= 1<<20 {
		return invalid("log.cleaner.dedupe.buffer.size", fmt.Sprint(b.LogCleanerDedupeBufferSize),
			"expected more than 1 MiB per cleaner thread (log.cleaner.threads=%d)", b.LogCleanerThreads)
	}
	if b.MaxConnectionsPerIP == 0 && len(b.MaxConnectionsPerIPOverrides) == 0 {
		// Kafka: KafkaConfig's own check, with the same words.
		return invalid("max.connections.per.ip", "0", "can be set to zero only if max.connections.per.ip.overrides property is set")
	}
	if b.QueuedMaxRequestBytes > 0 && b.QueuedMaxRequestBytes < int64(b.SocketRequestMaxBytes) {
		return invalid("queued.max.request.bytes", fmt.Sprint(b.QueuedMaxRequestBytes),
			"expected -1 or at least socket.request.max.bytes (%d)", b.SocketRequestMaxBytes)
	}
	return nil
}

func (b *Broker) validateReplication() error {
	w := b.ReplicaFetchWaitMaxMs
	switch {
	case w > b.ReplicaSocketTimeoutMs:
		return invalid("replica.fetch.wait.max.ms", w.String(), "must not exceed replica.socket.timeout.ms (%d)", b.ReplicaSocketTimeoutMs)
	case w > b.ReplicaLagTimeMaxMs:
		return invalid("replica.fetch.wait.max.ms", w.String(), "must not exceed replica.lag.time.max.ms (%d)", b.ReplicaLagTimeMaxMs)
	case b.GroupMinSessionTimeoutMs > b.GroupMaxSessionTimeoutMs:
		return invalid("group.min.session.timeout.ms", b.GroupMinSessionTimeoutMs.String(),
			"must not exceed group.max.session.timeout.ms (%d)", b.GroupMaxSessionTimeoutMs)
	}
	return nil
}

// validateQuorum is KafkaConfig's KRaft checks, relaxed for Varve's
// single node: with no voters and no bootstrap servers, the controller
// runs in-process and needs no controller listener.
func (b *Broker) validateQuorum() error {
	roles := strings.Join(b.ProcessRoles, ",")
	inQuorum := false
	for _, v := range b.ControllerQuorumVoters {
		inQuorum = inQuorum || v.ID == b.NodeID
	}
	external := len(b.ControllerQuorumVoters) > 0 || len(b.ControllerQuorumBootstrapServers) > 0
	switch {
	case !b.HasRole("controller") && !external:
		return invalid("process.roles", roles, "a broker-only node needs controller.quorum.voters or controller.quorum.bootstrap.servers")
	case !b.HasRole("controller") && inQuorum:
		return invalid("controller.quorum.voters", b.set["controller.quorum.voters"], "must not include node.id %d when process.roles is broker", b.NodeID)
	case b.HasRole("controller") && len(b.ControllerQuorumVoters) > 0 && !inQuorum:
		return invalid("controller.quorum.voters", b.set["controller.quorum.voters"], "must include node.id %d when process.roles has controller", b.NodeID)
	case external && len(b.ControllerListenerNames) == 0:
		return invalid("controller.listener.names", "", "expected at least one name when the quorum has other nodes")
	}
	return nil
}

// validateLearner: a broker-only node of a quorum named by
// controller.quorum.voters follows the metadata log as a raft learner,
// and the controllers push the log to it: it needs an address of its
// own to receive it on. (Kafka's observers fetch from the leader and
// need none; its controller listeners are not a broker-only node's.)
func (b *Broker) validateLearner() error {
	if b.QuorumLearnerListener != "" {
		// The node registers this address; the controllers dial it.
		if host, _, _ := splitHostPort(b.QuorumLearnerListener); host == "" || host == "0.0.0.0" || host == "::" {
			return invalid("varve.quorum.learner.listener", b.QuorumLearnerListener, "expected a host the controllers can reach, not %q", host)
		}
	}
	if b.HasRole("controller") || len(b.ControllerQuorumVoters) == 0 || b.QuorumLearnerListener != "" {
		return nil
	}
	return invalid("varve.quorum.learner.listener", "", "a broker-only node follows the metadata log as a raft learner and needs a host:port to receive it on (not one of listeners, not in controller.listener.names)")
}

func (b *Broker) validateListeners() error {
	names := map[string]bool{}
	ports := map[int]string{}
	for _, l := range b.Listeners {
		names[l.Name] = true
		if other, dup := ports[l.Port]; dup && l.Port != 0 {
			return invalid("listeners", b.show("listeners"), "listeners %s and %s share port %d", other, l.Name, l.Port)
		}
		ports[l.Port] = l.Name
		if _, ok := b.SecurityProtocol(l.Name); !ok {
			return invalid("listener.security.protocol.map", b.show("listener.security.protocol.map"), "has no entry for listener %s", l.Name)
		}
	}
	if err := b.validateControllerListeners(names); err != nil {
		return err
	}
	if !b.HasRole("broker") {
		return nil
	}
	return b.validateBrokerListeners(names)
}

func (b *Broker) validateControllerListeners(names map[string]bool) error {
	for _, n := range b.ControllerListenerNames {
		switch {
		case b.HasRole("controller") && !names[n]:
			return invalid("controller.listener.names", b.show("controller.listener.names"), "%s is not in listeners", n)
		case !b.HasRole("controller") && names[n]:
			return invalid("controller.listener.names", b.show("controller.listener.names"), "%s must not be in listeners when process.roles is broker", n)
		case n == b.InterBrokerListenerName:
			return invalid("controller.listener.names", b.show("controller.listener.names"), "must not contain inter.broker.listener.name %s", n)
		}
	}
	if !b.HasRole("broker") {
		for n := range names {
			if !b.isControllerListener(n) {
				return invalid("listeners", b.show("listeners"), "%s is not a controller listener, and process.roles is controller", n)
			}
		}
	}
	return nil
}

func (b *Broker) validateBrokerListeners(names map[string]bool) error {
	advertised := map[string]bool{}
	for _, l := range b.AdvertisedListeners {
		switch {
		case !names[l.Name]:
			return invalid("advertised.listeners", b.show("advertised.listeners"), "listener %s is not in listeners", l.Name)
		case l.Host == "0.0.0.0" || l.Host == "::":
			return invalid("advertised.listeners", b.show("advertised.listeners"),
				"cannot advertise the non-routable address %s (set advertised.listeners to a routable host)", l.Host)
		}
		if !b.isControllerListener(l.Name) {
			advertised[l.Name] = true
		}
	}
	if len(advertised) == 0 {
		return invalid("listeners", b.show("listeners"), "expected at least one broker listener (not named in controller.listener.names)")
	}
	if !advertised[b.InterBrokerListenerName] {
		return invalid("inter.broker.listener.name", b.InterBrokerListenerName, "expected the name of an advertised broker listener")
	}
	return nil
}

// show is Get without the ok result, for error messages.
func (b *Broker) show(name string) string {
	v, _ := b.Get(name)
	return v
}

// String renders m as Kafka writes a millisecond value.
func (m Millis) String() string { return fmt.Sprint(int64(m)) }
