package cluster

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
)

// SASL authentication of a connection on a SASL_PLAINTEXT or SASL_SSL
// listener, as Kafka's SaslServerAuthenticator runs it. A connection
// goes through these stages, and a request its stage does not allow
// closes it without an answer (Kafka's IllegalSaslStateException):
//
//	versions-or-handshake  ApiVersions (-> handshake) or SaslHandshake
//	handshake              SaslHandshake only
//	authenticate           SaslAuthenticate only, until the mechanism's
//	                       exchange succeeds (-> complete) or fails (-> failed)
//	complete               every API; SaslHandshake and SaslAuthenticate
//	                       are answered ILLEGAL_SASL_STATE (no
//	                       re-authentication: connections.max.reauth.ms 0)
//	failed                 nothing: the failure's answer leaves after
//	                       connection.failed.authentication.delay.ms and
//	                       the connection closes
//
// A SaslHandshake naming a mechanism the listener does not enable is
// answered UNSUPPORTED_SASL_MECHANISM with the enabled ones, and the
// connection closes. The session lives in the connection's
// vnet.ConnState; one request is in flight per connection, so stages
// change in request order, and mu guards them against a principal
// lookup from another goroutine.

type saslStage int

const (
	stageVersionsOrHandshake saslStage = iota
	stageHandshake
	stageAuthenticate
	stageComplete
	stageFailed
)

type saslSession struct {
	mu struct {
		sync.Mutex
		stage     saslStage
		mechanism string
		exchange  saslExchange
		principal string
	}
}

// sessionOf returns the connection's SASL session, creating it on the
// connection's first request.
func sessionOf(r *vnet.Request) *saslSession {
	if s, ok := r.Conn.State.Load().(*saslSession); ok {
		return s
	}
	s := &saslSession{}
	r.Conn.State.Store(s)
	return s
}

// admit reports whether a request may be served on its connection: on a
// SASL listener, only what the connection's stage allows.
func (s *security) admit(r *vnet.Request) bool {
	if ls := s.of(r); ls == nil || ls.sasl == nil {
		return true
	}
	return sessionOf(r).admit(r.Key, r.Version)
}

func (ss *saslSession) admit(key, version int16) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	switch ss.mu.stage {
	case stageComplete:
		return true
	case stageVersionsOrHandshake:
		if key == kmsg.ApiVersions.Int16() {
			// An unsupported version is answered and may be retried.
			if a := apis[key]; a != nil && version >= a.min && version <= a.max {
				ss.mu.stage = stageHandshake
			}
			return true
		}
		return key == kmsg.SASLHandshake.Int16()
	case stageHandshake:
		return key == kmsg.SASLHandshake.Int16()
	case stageAuthenticate:
		return key == kmsg.SASLAuthenticate.Int16()
	}
	return false
}

// authenticated returns the principal once authentication succeeded.
func (ss *saslSession) authenticated() (string, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.mu.principal, ss.mu.stage == stageComplete
}

// handshake starts the exchange of mechanism, if the stage allows one.
func (ss *saslSession) handshake(mechanism string, ex saslExchange) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.mu.stage != stageVersionsOrHandshake && ss.mu.stage != stageHandshake {
		return false
	}
	ss.mu.stage, ss.mu.mechanism, ss.mu.exchange = stageAuthenticate, mechanism, ex
	return true
}

// step feeds the client's token to the exchange. ok is false when the
// stage is not authenticate; err is the exchange's failure, after which
// the session is failed.
func (ss *saslSession) step(token []byte) (answer []byte, mechanism string, ok bool, err error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.mu.stage != stageAuthenticate {
		return nil, "", false, nil
	}
	answer, user, done, err := ss.mu.exchange.step(token)
	switch {
	case err != nil:
		ss.mu.stage, ss.mu.exchange = stageFailed, nil
	case done:
		ss.mu.stage, ss.mu.exchange, ss.mu.principal = stageComplete, nil, "User:"+user
	}
	return answer, ss.mu.mechanism, true, err
}

// fail ends the session: the connection is about to close.
func (ss *saslSession) fail() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.mu.stage, ss.mu.exchange = stageFailed, nil
}

// respondAndClose answers resp and closes the connection after it.
func respondAndClose(r *vnet.Request, resp kmsg.Response, respond func(vnet.Response)) {
	resp.SetVersion(r.Version)
	respond(vnet.Response{Parts: []vnet.Part{{Bytes: resp.AppendTo(nil)}}, Close: true})
}
