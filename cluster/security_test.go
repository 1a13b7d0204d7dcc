package cluster

import (
	"strings"
	"testing"

	"github.com/varve/varve/config"
)

// A node asked to listen with SSL, SASL_PLAINTEXT or SASL_SSL must not
// start (and serve plain Kafka there); found as an operator would, with
// --override listeners=SASL_SSL://127.0.0.1:19099.
func TestUnimplementedListenerSecurityStopsStartUp(t *testing.T) {
	for _, c := range []struct{ listeners, protoMap, want string }{
		{"SASL_SSL://127.0.0.1:0", "", "listener SASL_SSL (127.0.0.1:0) uses security protocol SASL_SSL"},
		{"SSL://127.0.0.1:0", "", "security protocol SSL"},
		{"PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0", "", "security protocol SASL_PLAINTEXT"},
		{"CLIENTS://127.0.0.1:0", "CLIENTS:SSL", "listener CLIENTS (127.0.0.1:0) uses security protocol SSL"},
	} {
		first, _, _ := strings.Cut(c.listeners, ":")
		props := map[string]string{"log.dirs": t.TempDir(), "listeners": c.listeners, "varve.metrics.listener": "",
			"inter.broker.listener.name": first}
		if c.protoMap != "" {
			props["listener.security.protocol.map"] = c.protoMap
		}
		cfg, err := config.Parse(props)
		if err != nil {
			t.Fatalf("%s: %v", c.listeners, err)
		}
		b, err := New(cfg, nil)
		if err == nil {
			b.Shutdown(t.Context())
			t.Fatalf("%s: the node started", c.listeners)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: error %q does not say %q", c.listeners, err, c.want)
		}
	}
}
