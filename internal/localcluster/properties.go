package localcluster

import (
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
)

// Property is one key=value line of a server.properties.
type Property struct{ Key, Value string }

// Properties are node n's properties, in the order Write writes them:
// Kafka's KRaft combined-mode settings, then Options.Props (a key
// given there replaces the generated value in place; new keys follow,
// sorted).
//
// Kafka: every node has process.roles=broker,controller and is a voter
// in controller.quorum.voters, reached on its CONTROLLER listener
// (controller.listener.names); brokers talk to each other on PLAINTEXT
// (inter.broker.listener.name), which is also what clients are told
// (advertised.listeners lists both, as Kafka 4's server.properties
// does). The internal topics' replication factors are capped by the
// broker count, as Kafka's docs advise for development clusters.
//
// With dedicated controllers (Options.Controllers), a controller-only
// node has the CONTROLLER listener alone, and a broker-only node the
// PLAINTEXT one, with varve.quorum.learner.listener on its controller
// port: the controllers send it the metadata log there.
func (c *Cluster) Properties(n *Node) []Property {
	rf := strconv.Itoa(min(3, c.brokers()))
	minISR := strconv.Itoa(min(2, c.brokers()))
	listeners := "PLAINTEXT://" + n.Addr() + ",CONTROLLER://" + n.ControllerAddr()
	switch n.Roles {
	case RolesController:
		listeners = "CONTROLLER://" + n.ControllerAddr()
	case RolesBroker:
		listeners = "PLAINTEXT://" + n.Addr()
	}
	metrics := ""
	if n.MetricsPort != 0 {
		metrics = net.JoinHostPort(n.Host, strconv.Itoa(n.MetricsPort))
	}
	props := []Property{
		{"node.id", strconv.Itoa(n.ID)},
		{"process.roles", n.Roles},
		{"cluster.id", c.ClusterID},
		{"controller.quorum.voters", c.Voters()},
		{"listeners", listeners},
		{"advertised.listeners", listeners},
		{"controller.listener.names", "CONTROLLER"},
		{"inter.broker.listener.name", "PLAINTEXT"},
		{"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"},
		{"log.dirs", n.LogDir()},
		{"offsets.topic.replication.factor", rf},
		{"transaction.state.log.replication.factor", rf},
		{"transaction.state.log.min.isr", minISR},
		{"varve.metrics.listener", metrics},
	}
	if n.Roles == RolesBroker {
		props = append(props, Property{"varve.quorum.learner.listener", n.ControllerAddr()})
	}
	return withExtra(props, c.opts.Props)
}

func withExtra(props []Property, extra map[string]string) []Property {
	done := map[string]bool{}
	for i, p := range props {
		if v, ok := extra[p.Key]; ok {
			props[i].Value, done[p.Key] = v, true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		if !done[k] {
			props = append(props, Property{k, extra[k]})
		}
	}
	return props
}

// PropertiesText is node n's server.properties file.
func (c *Cluster) PropertiesText(n *Node) []byte {
	var b strings.Builder
	b.WriteString("# " + n.Name() + " of a local cluster of " + strconv.Itoa(len(c.nodes)) +
		" nodes (process.roles=" + n.Roles + ").\n")
	b.WriteString("# Start it with: varve server " + n.PropertiesFile() + "\n")
	for _, p := range c.Properties(n) {
		b.WriteString(escapeProperty(p.Key, true) + "=" + escapeProperty(p.Value, false) + "\n")
	}
	return []byte(b.String())
}

// escapeProperty escapes s as java.util.Properties.store does: a
// backslash before backslashes, control characters as \t \n \r \f,
// and, in a key, before the separators '=', ':' and white space; a
// value's leading space is escaped (a reader would drop it), as are '#'
// and '!' that would start a comment.
func escapeProperty(s string, key bool) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == ' ' && (key || i == 0), (r == '=' || r == ':') && key, (r == '#' || r == '!') && i == 0:
			b.WriteString(`\` + string(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
