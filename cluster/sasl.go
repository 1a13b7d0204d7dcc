package cluster

import (
	"fmt"
	"sync"
	"time"

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
//	complete               every API while the session lasts; SaslHandshake
//	                       re-authenticates (-> authenticate) when the
//	                       session has a lifetime, else it is answered
//	                       ILLEGAL_SASL_STATE
//	failed                 nothing: the failure's answer leaves after
//	                       connection.failed.authentication.delay.ms and
//	                       the connection closes
//
// Re-authentication (KIP-368): a session lasts connections.max.reauth.ms
// (0: for ever), or until its credential expires (an OAUTHBEARER token)
// if sooner; SaslAuthenticate v1+ tells the client the session's
// lifetime. Once it is over, any request but SaslHandshake closes the
// connection unanswered (Kafka's SocketServer); a SaslHandshake starts a
// re-authentication with the same mechanism, which must end with the
// same principal, and the session then lasts anew. A handshake naming
// another mechanism than the session's is answered ILLEGAL_SASL_STATE
// and the connection closes; a re-authentication as another principal
// fails as a wrong password does.
//
// A SaslHandshake naming a mechanism the listener does not enable is
// answered UNSUPPORTED_SASL_MECHANISM with the enabled ones, and the
// connection closes. The session lives in the connection's
// vnet.ConnState; one request is in flight per connection, so stages
// change in request order, and mu guards them against a principal
// lookup from another goroutine. Time is an argument (now), never read
// here.

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
		expires   time.Time // the end of the session; zero: it never ends
		reauth    bool      // the exchange under way re-authenticates principal
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
// SASL listener, only what the connection's stage allows, and nothing
// but a re-authentication once the session is over.
func (s *security) admit(r *vnet.Request) bool {
	if ls := s.of(r); ls == nil || ls.sasl == nil {
		return true
	}
	ok, expired := sessionOf(r).admit(r.Key, r.Version, time.Now())
	if expired {
		s.expiredClosed.Add(1)
	}
	return ok
}

// admit says whether the request may be served; expired is true when
// it is refused because the session is over.
func (ss *saslSession) admit(key, version int16, now time.Time) (ok, expired bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	switch ss.mu.stage {
	case stageComplete:
		if !ss.mu.expires.IsZero() && !now.Before(ss.mu.expires) && key != kmsg.SASLHandshake.Int16() {
			return false, true
		}
		return true, false
	case stageVersionsOrHandshake:
		if key == kmsg.ApiVersions.Int16() {
			// An unsupported version is answered and may be retried.
			if a := apis[key]; a != nil && version >= a.min && version <= a.max {
				ss.mu.stage = stageHandshake
			}
			return true, false
		}
		return key == kmsg.SASLHandshake.Int16(), false
	case stageHandshake:
		return key == kmsg.SASLHandshake.Int16(), false
	case stageAuthenticate:
		return key == kmsg.SASLAuthenticate.Int16(), false
	}
	return false, false
}

// authenticated returns the principal once authentication succeeded.
func (ss *saslSession) authenticated() (string, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.mu.principal, ss.mu.stage == stageComplete
}

// handshakeVerdict is what a SaslHandshake does to a session.
type handshakeVerdict int

const (
	handshakeStarted       handshakeVerdict = iota
	handshakeIllegal                        // ILLEGAL_SASL_STATE, the connection stays
	handshakeMechanismSwap                  // a re-authentication with another mechanism: closes
)

// handshake starts the exchange of mechanism, if the stage allows one:
// before authentication, or to re-authenticate a session that has a
// lifetime (KIP-368).
func (ss *saslSession) handshake(mechanism string, ex saslExchange) handshakeVerdict {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	switch {
	case ss.mu.stage == stageVersionsOrHandshake || ss.mu.stage == stageHandshake:
	case ss.mu.stage == stageComplete && !ss.mu.expires.IsZero():
		if mechanism != ss.mu.mechanism {
			ss.mu.stage = stageFailed
			return handshakeMechanismSwap
		}
		ss.mu.reauth = true
	default:
		return handshakeIllegal
	}
	ss.mu.stage, ss.mu.mechanism, ss.mu.exchange = stageAuthenticate, mechanism, ex
	return handshakeStarted
}

// stepResult is what one SaslAuthenticate token did.
type stepResult struct {
	answer    []byte
	mechanism string
	ok        bool          // false: the stage is not authenticate
	done      bool          // the exchange succeeded
	reauth    bool          // ... and it was a re-authentication
	lifetime  time.Duration // the session's lifetime once done; 0 with expires false
	expires   bool          // the session has a lifetime
	err       error         // the exchange failed: the session is failed
}

// step feeds the client's token to the exchange at now; maxReauth is
// connections.max.reauth.ms.
func (ss *saslSession) step(token []byte, now time.Time, maxReauth time.Duration) stepResult {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.mu.stage != stageAuthenticate {
		return stepResult{}
	}
	ex := ss.mu.exchange
	answer, user, done, err := ex.step(token)
	r := stepResult{answer: answer, mechanism: ss.mu.mechanism, ok: true, err: err}
	if done && ss.mu.reauth && "User:"+user != ss.mu.principal {
		r.answer, r.err = nil, fmt.Errorf("cannot change principals during re-authentication from %s to User:%s", ss.mu.principal, user)
	}
	switch {
	case r.err != nil:
		ss.mu.stage, ss.mu.exchange = stageFailed, nil
	case done:
		r.done, r.reauth = true, ss.mu.reauth
		r.lifetime, r.expires = sessionLifetime(now, maxReauth, credentialExpiry(ex))
		ss.mu.stage, ss.mu.exchange, ss.mu.principal, ss.mu.reauth = stageComplete, nil, "User:"+user, false
		ss.mu.expires = time.Time{}
		if r.expires {
			ss.mu.expires = now.Add(r.lifetime)
		}
	}
	return r
}

// sessionLifetime is Kafka's (SaslServerAuthenticator): the shorter of
// connections.max.reauth.ms (when above 0) and the time left on the
// credential (when it expires), never negative; ok is false when
// neither bounds the session.
func sessionLifetime(now time.Time, maxReauth time.Duration, credExpiry time.Time) (time.Duration, bool) {
	var d time.Duration
	switch {
	case credExpiry.IsZero() && maxReauth <= 0:
		return 0, false
	case credExpiry.IsZero():
		d = maxReauth
	case maxReauth <= 0:
		d = credExpiry.Sub(now)
	default:
		d = min(credExpiry.Sub(now), maxReauth)
	}
	return max(d, 0), true
}

// expiringExchange is an exchange whose credential expires (an
// OAUTHBEARER token): the session ends then at the latest.
type expiringExchange interface {
	credentialExpiry() time.Time
}

func credentialExpiry(ex saslExchange) time.Time {
	if e, ok := ex.(expiringExchange); ok {
		return e.credentialExpiry()
	}
	return time.Time{}
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
