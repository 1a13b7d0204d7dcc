package config

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Listener is one entry of listeners or advertised.listeners:
// NAME://host:port. The name is upper-cased, as Kafka normalises it. An
// empty host means every interface (Kafka binds 0.0.0.0 then).
type Listener struct {
	Name string
	Host string
	Port int
}

// String renders l as Kafka writes it; an IPv6 host goes in brackets.
func (l Listener) String() string {
	host := l.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return l.Name + "://" + host + ":" + strconv.Itoa(l.Port)
}

// Addr is the host:port to listen on or dial.
func (l Listener) Addr() string { return net.JoinHostPort(l.Host, strconv.Itoa(l.Port)) }

// ProtocolMapping is one entry of listener.security.protocol.map.
type ProtocolMapping struct {
	Listener string // listener name, upper-cased
	Protocol string // PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
}

func (m ProtocolMapping) String() string { return m.Listener + ":" + m.Protocol }

// QuorumVoter is one entry of controller.quorum.voters: id@host:port.
type QuorumVoter struct {
	ID   int
	Host string
	Port int
}

func (v QuorumVoter) String() string {
	return strconv.Itoa(v.ID) + "@" + net.JoinHostPort(v.Host, strconv.Itoa(v.Port))
}

// Addr is the voter's host:port.
func (v QuorumVoter) Addr() string { return net.JoinHostPort(v.Host, strconv.Itoa(v.Port)) }

// securityProtocols are Kafka's SecurityProtocol names.
var securityProtocols = []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}

var (
	tListeners   = &valueType{"string", parseListeners, formatList}
	tProtocolMap = &valueType{"string", parseProtocolMap, formatList}
	tVoters      = &valueType{"list", parseVoters, formatList}
	tHostPorts   = &valueType{"list", parseHostPorts, formatList}
	// tConnOverrides is max.connections.per.ip.overrides: Kafka's string
	// "host:count,host:count", split at each entry's last colon (so IPv6
	// addresses need no brackets), counts at least 0.
	tConnOverrides = &valueType{"string", parseConnOverrides, formatConnOverrides}
)

func parseConnOverrides(s string) (any, error) {
	out := map[string]int{}
	if s == "" {
		return out, nil
	}
	for _, item := range splitList(s) {
		i := strings.LastIndex(item, ":")
		if i < 0 {
			return nil, fmt.Errorf("entry %q: expected host:count", item)
		}
		host := strings.TrimSpace(item[:i])
		n, err := strconv.ParseInt(strings.TrimSpace(item[i+1:]), 10, 32)
		if host == "" || err != nil || n < 0 {
			return nil, fmt.Errorf("entry %q: expected host:count with a count of at least 0", item)
		}
		if _, dup := out[host]; dup {
			return nil, fmt.Errorf("host %s appears twice", host)
		}
		out[host] = int(n)
	}
	return out, nil
}

func formatConnOverrides(v reflect.Value) string {
	m := v.Interface().(map[string]int)
	hosts := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(hosts))
	for i, h := range hosts {
		parts[i] = h + ":" + strconv.Itoa(m[h])
	}
	return strings.Join(parts, ",")
}

// parseListeners reads Kafka's listener list: comma-separated
// NAME://host:port, names unique.
func parseListeners(s string) (any, error) {
	out := []Listener{}
	seen := map[string]bool{}
	for _, item := range splitList(s) {
		l, err := parseListener(item)
		if err != nil {
			return nil, err
		}
		if seen[l.Name] {
			return nil, fmt.Errorf("listener name %s appears twice", l.Name)
		}
		seen[l.Name] = true
		out = append(out, l)
	}
	return out, nil
}

func parseListener(s string) (Listener, error) {
	name, hostPort, ok := strings.Cut(s, "://")
	if !ok || name == "" {
		return Listener{}, fmt.Errorf("listener %q: expected NAME://host:port", s)
	}
	host, port, err := splitHostPort(hostPort)
	if err != nil {
		return Listener{}, fmt.Errorf("listener %q: %w", s, err)
	}
	return Listener{Name: strings.ToUpper(name), Host: host, Port: port}, nil
}

// splitHostPort accepts host:port, [v6]:port and :port; the port must be
// in [0, 65535] (0 asks the system for a free port).
func splitHostPort(s string) (string, int, error) {
	host, p, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, errors.New("expected host:port")
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("port %q is not in [0, 65535]", p)
	}
	return host, port, nil
}

func parseProtocolMap(s string) (any, error) {
	out := []ProtocolMapping{}
	seen := map[string]bool{}
	for _, item := range splitList(s) {
		name, proto, ok := strings.Cut(item, ":")
		name, proto = strings.ToUpper(strings.TrimSpace(name)), strings.TrimSpace(proto)
		if !ok || name == "" {
			return nil, fmt.Errorf("entry %q: expected LISTENER_NAME:PROTOCOL", item)
		}
		if oneOf(securityProtocols...)(proto) != nil {
			return nil, fmt.Errorf("entry %q: protocol must be one of %s", item, strings.Join(securityProtocols, ", "))
		}
		if seen[name] {
			return nil, fmt.Errorf("listener name %s is mapped twice", name)
		}
		seen[name] = true
		out = append(out, ProtocolMapping{Listener: name, Protocol: proto})
	}
	return out, nil
}

func parseVoters(s string) (any, error) {
	out := []QuorumVoter{}
	seen := map[int]bool{}
	for _, item := range splitList(s) {
		id, hostPort, ok := strings.Cut(item, "@")
		n, err := strconv.Atoi(id)
		if !ok || err != nil || n < 0 {
			return nil, fmt.Errorf("voter %q: expected id@host:port with a non-negative id", item)
		}
		host, port, err := splitHostPort(hostPort)
		if err != nil || host == "" {
			return nil, fmt.Errorf("voter %q: expected id@host:port", item)
		}
		if seen[n] {
			return nil, fmt.Errorf("voter id %d appears twice", n)
		}
		seen[n] = true
		out = append(out, QuorumVoter{ID: n, Host: host, Port: port})
	}
	return out, nil
}

func parseHostPorts(s string) (any, error) {
	out := splitList(s)
	for _, item := range out {
		if host, _, err := splitHostPort(item); err != nil || host == "" {
			return nil, fmt.Errorf("%q: expected host:port", item)
		}
	}
	return out, nil
}

// hostPortOrEmpty checks varve.metrics.listener: empty, or host:port.
func hostPortOrEmpty(v any) error {
	if v.(string) == "" {
		return nil
	}
	if _, _, err := splitHostPort(v.(string)); err != nil {
		return fmt.Errorf("expected host:port, or nothing to turn it off: %w", err)
	}
	return nil
}

// formatValue renders any parsed or stored value with its type.
func formatValue(t *valueType, v any) string { return t.format(reflect.ValueOf(v)) }
