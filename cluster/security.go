package cluster

import (
	"fmt"
	"slices"
	"strings"

	"github.com/varve/varve/config"
)

// implementedProtocols are the security protocols a listener may use
// today. TLS and SASL (SSL, SASL_PLAINTEXT, SASL_SSL) are not built yet.
var implementedProtocols = []string{"PLAINTEXT"}

// checkListenerSecurity refuses to start a node with a listener whose
// security protocol Varve does not implement. Serving plain,
// unauthenticated Kafka on a port an operator configured for encryption
// and authentication would be the most dangerous thing a broker could
// do, so start-up stops with a message naming the listener instead.
// (config still parses such files: the properties are Kafka's, and the
// refusal is about what this node can serve.)
func checkListenerSecurity(cfg *config.Broker) error {
	for _, l := range cfg.Listeners {
		proto, _ := cfg.SecurityProtocol(l.Name)
		if !slices.Contains(implementedProtocols, proto) {
			return fmt.Errorf("listener %s (%s) uses security protocol %s, which Varve does not implement yet: "+
				"it would serve unencrypted, unauthenticated Kafka there; use %s listeners",
				l.Name, l.Addr(), proto, strings.Join(implementedProtocols, " or "))
		}
	}
	return nil
}
