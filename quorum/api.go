package quorum

import (
	"errors"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
)

// An api is one of Kafka's controller APIs, in its own file named after
// its key, registered in init.
type api struct {
	key int16
	// handle runs on the loop with the active controller (nil for a
	// local api): it returns the records to commit and the response to
	// send once they have applied.
	handle func(n *Node, c *controller.Controller, now int64, req kmsg.Request) ([]metadata.Record, kmsg.Response, error)
	// refuse returns the response that carries code for everything the
	// request asked (NOT_CONTROLLER from a node that is not the active
	// controller).
	refuse func(req kmsg.Request, code int16) kmsg.Response
	// local apis are answered by any node, from the loop.
	local bool
}

var apis = map[int16]*api{}

func register(a *api) {
	if kmsg.RequestForKey(a.key) == nil {
		panic("quorum: API registered that kmsg does not know")
	}
	apis[a.key] = a
}

// serve is the controller listener's handler: raft messages, and
// Kafka's controller APIs at any version kmsg knows.
func (n *Node) serve(r *vnet.Request, respond func(vnet.Response)) {
	if n.cfg.Authenticate != nil && n.cfg.Authenticate(r, respond) {
		return
	}
	switch {
	case r.Key == RaftMessageKey:
		n.serveRaft(r, respond)
		return
	case r.Key == kmsg.ApiVersions.Int16():
		respond(encodeResponse(n.serveApiVersions(r), r.Version))
		return
	}
	a := apis[r.Key]
	req := kmsg.RequestForKey(r.Key)
	if a == nil || r.Version < 0 || r.Version > req.MaxVersion() {
		respond(vnet.Response{Close: true}) // as Kafka, for a key or version it does not serve
		return
	}
	req.SetVersion(r.Version)
	if err := req.ReadFrom(r.Body); err != nil {
		respond(vnet.Response{Close: true})
		return
	}
	r.ReleaseBody()
	if !n.submit(n.apiOp(a, req, r.Version, respond)) {
		respond(vnet.Response{Close: true})
	}
}

// apiOp is the loop's op for one request: the response is sent from
// the loop when the request's records have applied, or refused.
func (n *Node) apiOp(a *api, req kmsg.Request, version int16, respond func(vnet.Response)) *op {
	var resp kmsg.Response
	o := &op{local: a.local}
	o.run = func(c *controller.Controller, now int64) ([]metadata.Record, error) {
		recs, rs, err := a.handle(n, c, now, req)
		resp = rs
		if a.local {
			respond(encodeResponse(resp, version))
		}
		return recs, err
	}
	o.done = func(err error) {
		if err != nil {
			resp = a.refuse(req, errorCode(err))
		}
		respond(encodeResponse(resp, version))
	}
	return o
}

func encodeResponse(resp kmsg.Response, version int16) vnet.Response {
	resp.SetVersion(version)
	return vnet.Response{Parts: []vnet.Part{{Bytes: resp.AppendTo(nil)}}}
}

// errorCode is err's Kafka error code: NOT_CONTROLLER for a node that
// stopped, UNKNOWN_SERVER_ERROR for what is not a Kafka error.
func errorCode(err error) int16 {
	var ke *kerr.Error
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrStopped):
		return kerr.NotController.Code
	case errors.As(err, &ke):
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}

// errorMessage is err's text for a response's error message, nil when
// err is nil.
func errorMessage(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}

// serveApiVersions lists the APIs the controller listener serves, and
// the features; with SASL (Config.Authenticate), SaslHandshake v0-1 and
// SaslAuthenticate v0-2 too, which a SASL client looks for before it
// authenticates.
func (n *Node) serveApiVersions(r *vnet.Request) kmsg.Response {
	resp := kmsg.NewPtrApiVersionsResponse()
	if r.Version > resp.MaxVersion() {
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		r.Version = 0
	}
	for _, key := range append(sortedKeys(), kmsg.ApiVersions.Int16()) {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MaxVersion = key, kmsg.RequestForKey(key).MaxVersion()
		resp.ApiKeys = append(resp.ApiKeys, k)
	}
	if n.cfg.Authenticate != nil {
		for _, k := range [][2]int16{{kmsg.SASLHandshake.Int16(), 1}, {kmsg.SASLAuthenticate.Int16(), 2}} {
			ak := kmsg.NewApiVersionsResponseApiKey()
			ak.ApiKey, ak.MaxVersion = k[0], k[1]
			resp.ApiKeys = append(resp.ApiKeys, ak)
		}
	}
	SetApiVersionsFeatures(resp, r.Version, n.pub.Image(), n.MetadataOffset())
	return resp
}

func sortedKeys() []int16 {
	var keys []int16
	for k := range int16(200) {
		if apis[k] != nil {
			keys = append(keys, k)
		}
	}
	return keys
}

func itoa(v int32) string { return strconv.Itoa(int(v)) }
