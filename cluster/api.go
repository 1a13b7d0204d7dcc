package cluster

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
)

// An api is one Kafka API the broker serves: its key, the versions it
// serves, and its handler. Each lives in its own file, named after its
// key, that registers it in init.
type api struct {
	key      int16
	min, max int16
	// serve decodes nothing itself: req is the decoded request at the
	// client's version. It returns the response, or calls respond later
	// itself (long-poll Fetch) and returns nil.
	serve func(b *Broker, r *vnet.Request, req kmsg.Request, respond func(vnet.Response)) kmsg.Response
}

var apis = map[int16]*api{}

func register(a *api) {
	if _, dup := apis[a.key]; dup {
		panic("cluster: API registered twice")
	}
	if k := kmsg.RequestForKey(a.key); k == nil || k.MaxVersion() < a.max {
		panic("cluster: kmsg cannot encode the versions registered for an API")
	}
	apis[a.key] = a
}

// apiKeys lists the served APIs in key order, for ApiVersions.
func apiKeys() []kmsg.ApiVersionsResponseApiKey {
	out := make([]kmsg.ApiVersionsResponseApiKey, 0, len(apis))
	for _, a := range apis {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = a.key, a.min, a.max
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ApiKey < out[j].ApiKey })
	return out
}
