package cluster

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/varve/varve/config"
)

// OAUTHBEARER's server side (RFC 7628) as Kafka's OAuthBearerSaslServer
// runs it. The client's one message is
//
//	gs2-header \x01 "auth=Bearer " token \x01 [key=value \x01]... \x01
//
// with the gs2-header "n,", or "n,a=<authzid>," where the authzid must
// be the token's principal. A valid token authenticates its principal
// (User:<sub>) and the session ends at the token's expiry (KIP-368). An
// invalid one is answered, without an error, with Kafka's error JSON
// ({"status":"invalid_token"}) as the challenge; the client answers a
// single \x01, and the exchange fails with SASL_AUTHENTICATION_FAILED,
// the JSON as the message. Extensions are read and ignored, as Kafka's
// default callback does.
//
// Which tokens are valid is the listener's validator:
//   - with sasl.oauthbearer.jwks.endpoint.url, Kafka's secured validator
//     (KIP-768): a JWS signed RS256 or ES256 by a key of the set, with
//     exp and iat, not expired (clock.skew.seconds), nbf passed, aud one
//     of expected.audience when set, iss expected.issuer when set, a
//     non-empty sub.claim.name claim;
//   - without one, Kafka's unsecured validator, for development only,
//     and only when the listener's oauthbearer JAAS configuration names
//     OAuthBearerLoginModule with unsecuredLoginStringClaim_sub (as a
//     Kafka broker set up for unsecured tokens has it): an unsigned JWS
//     (alg "none"), its principal claim (unsecuredValidatorPrincipalClaimName,
//     "sub"), exp required and iat optional, each within
//     unsecuredValidatorAllowableClockSkewMs (0), and the scopes of
//     unsecuredValidatorRequiredScope in its scope claim.
//
// Skipped: the openid-configuration member of the error JSON.

const oauthBearerLoginModule = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"

// tokenValidator decides whether a token authenticates, and whom until
// when.
type tokenValidator interface {
	validate(token string, now time.Time) (principal string, expiry time.Time, err *tokenError)
}

// tokenError is a refused token: Kafka's status and scope for the error
// JSON, and the reason, which only the log sees.
type tokenError struct {
	status, scope string
	reason        error
}

func invalidToken(format string, args ...any) *tokenError {
	return &tokenError{status: "invalid_token", reason: fmt.Errorf(format, args...)}
}

// json is Kafka's error response (OAuthBearerSaslServer.jsonErrorResponse).
func (e *tokenError) json() string {
	s := `{"status":"` + e.status + `"`
	if e.scope != "" {
		s += `, "scope":"` + e.scope + `"`
	}
	return s + "}"
}

// authFailure is a failed exchange whose message the client is told
// (the error JSON of OAUTHBEARER).
type authFailure struct {
	msg    string
	reason error
}

func (e *authFailure) Error() string { return e.msg + ": " + e.reason.Error() }

// newTokenValidator builds a listener's validator, or says why
// OAUTHBEARER cannot be enabled there.
func newTokenValidator(s config.ListenerSecurity, now time.Time) (tokenValidator, error) {
	o := s.OAuthBearer
	if o.JWKSURL != "" {
		keys, err := newJWKSSource(o.JWKSURL, o.JWKSRefresh.Duration(), o.JWKSRetryBackoff.Duration(), now)
		if err != nil {
			return nil, err
		}
		return &securedValidator{keys: keys, rules: jwtClaimRules{skew: time.Duration(o.ClockSkewSeconds) * time.Second,
			audience: o.ExpectedAudience, issuer: o.ExpectedIssuer, subClaim: o.SubClaimName}}, nil
	}
	const prop = "listener.name.<listener>.oauthbearer.sasl.jaas.config"
	jaas := s.JAAS["OAUTHBEARER"]
	if jaas == "" {
		return nil, fmt.Errorf("SASL mechanism OAUTHBEARER needs sasl.oauthbearer.jwks.endpoint.url to validate tokens "+
			"(or, for development only, %s naming %s with unsecuredLoginStringClaim_sub for unsecured tokens)", prop, oauthBearerLoginModule)
	}
	e, err := parseJAAS(jaas)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", prop, err)
	}
	if e.module != oauthBearerLoginModule || e.options["unsecuredLoginStringClaim_sub"] == "" {
		return nil, fmt.Errorf("%s: unsecured tokens are accepted only with %s and unsecuredLoginStringClaim_sub; set sasl.oauthbearer.jwks.endpoint.url to validate signed tokens",
			prop, oauthBearerLoginModule)
	}
	return newUnsecuredValidator(e.options)
}

// securedValidator is Kafka's OAuthBearerValidatorCallbackHandler.
type securedValidator struct {
	keys  *jwksSource
	rules jwtClaimRules
}

func (v *securedValidator) validate(token string, now time.Time) (string, time.Time, *tokenError) {
	t, err := parseJWT(token)
	if err != nil {
		return "", time.Time{}, invalidToken("malformed token: %w", err)
	}
	key, err := v.keys.key(t.header.Kid, now)
	if err != nil {
		return "", time.Time{}, invalidToken("%w", err)
	}
	if err := t.verify(key); err != nil {
		return "", time.Time{}, invalidToken("signature: %w", err)
	}
	sub, exp, err := v.rules.check(t, now)
	if err != nil {
		return "", time.Time{}, invalidToken("%w", err)
	}
	return sub, exp, nil
}

// unsecuredValidator is Kafka's OAuthBearerUnsecuredValidatorCallbackHandler.
type unsecuredValidator struct {
	principalClaim, scopeClaim string
	requiredScope              []string
	skew                       time.Duration
}

func newUnsecuredValidator(opts map[string]string) (*unsecuredValidator, error) {
	v := &unsecuredValidator{principalClaim: "sub", scopeClaim: "scope"}
	if s := strings.TrimSpace(opts["unsecuredValidatorPrincipalClaimName"]); s != "" {
		v.principalClaim = s
	}
	if s := strings.TrimSpace(opts["unsecuredValidatorScopeClaimName"]); s != "" {
		v.scopeClaim = s
	}
	v.requiredScope = strings.Fields(opts["unsecuredValidatorRequiredScope"])
	if s := opts["unsecuredValidatorAllowableClockSkewMs"]; s != "" {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("unsecuredValidatorAllowableClockSkewMs %q: want milliseconds, 0 or more", s)
		}
		v.skew = time.Duration(ms) * time.Millisecond
	}
	return v, nil
}

func (v *unsecuredValidator) validate(token string, now time.Time) (string, time.Time, *tokenError) {
	t, err := parseJWT(token)
	switch {
	case err != nil:
		return "", time.Time{}, invalidToken("malformed token: %w", err)
	case t.header.Alg != "none" || len(t.signature) != 0:
		return "", time.Time{}, invalidToken("an unsecured token has alg none and no signature")
	}
	sub, ok := t.str(v.principalClaim)
	if !ok || strings.TrimSpace(sub) == "" {
		return "", time.Time{}, invalidToken("no %s claim", v.principalClaim)
	}
	exp, ok, err := t.numericDate("exp")
	if err != nil || !ok || !now.Add(-v.skew).Before(exp) {
		return "", time.Time{}, invalidToken("no exp claim, or the token expired")
	}
	if iat, ok, err := t.numericDate("iat"); err != nil || (ok && (now.Add(v.skew).Before(iat) || !iat.Before(exp))) {
		return "", time.Time{}, invalidToken("iat in the future or not before exp")
	}
	if missing := v.missingScope(t); missing != "" {
		return "", time.Time{}, &tokenError{status: "insufficient_scope", scope: strings.Join(v.requiredScope, " "),
			reason: fmt.Errorf("scope %s is required", missing)}
	}
	return sub, exp, nil
}

// missingScope is a required scope the token lacks, "" when none.
func (v *unsecuredValidator) missingScope(t *jwt) string {
	have, _ := t.strs(v.scopeClaim)
	if len(have) == 1 {
		have = strings.Fields(have[0]) // a space-separated string
	}
	for _, s := range v.requiredScope {
		found := false
		for _, h := range have {
			found = found || h == s
		}
		if !found {
			return s
		}
	}
	return ""
}

// oauthExchange is one OAUTHBEARER authentication.
type oauthExchange struct {
	validator tokenValidator
	now       func() time.Time
	failed    *tokenError // the token was refused; the client's \x01 is next
	expiry    time.Time
	done      bool
}

func (o *oauthExchange) credentialExpiry() time.Time { return o.expiry }

func (o *oauthExchange) step(msg []byte) ([]byte, string, bool, error) {
	switch {
	case o.done:
		return nil, "", false, errors.New("OAUTHBEARER exchange already complete")
	case o.failed != nil:
		o.done = true
		if string(msg) != "\x01" {
			return nil, "", false, &authFailure{msg: o.failed.json(), reason: errors.New("expected %x01 after the error challenge")}
		}
		return nil, "", false, &authFailure{msg: o.failed.json(), reason: o.failed.reason}
	}
	authz, token, err := parseOAuthInitial(string(msg))
	if err != nil {
		o.done = true
		return nil, "", false, err
	}
	sub, exp, terr := o.validator.validate(token, o.now())
	if terr != nil {
		o.failed = terr
		return []byte(terr.json()), "", false, nil
	}
	o.done = true
	if authz != "" && authz != sub {
		return nil, "", false, fmt.Errorf("client requested an authorization id (%s) that is different from the token's principal name (%s)", authz, sub)
	}
	o.expiry = exp
	return nil, sub, true, nil
}

// parseOAuthInitial reads the client's initial response (RFC 7628
// section 3.1): its authzid and bearer token.
func parseOAuthInitial(m string) (authz, token string, err error) {
	gs2, rest, ok := strings.Cut(m, ",")
	if !ok || gs2 != "n" {
		return "", "", errors.New("invalid OAUTHBEARER initial response: no channel binding header \"n,\"")
	}
	a, rest, ok := strings.Cut(rest, ",")
	if !ok || (a != "" && !strings.HasPrefix(a, "a=")) {
		return "", "", errors.New("invalid OAUTHBEARER initial response: bad authorization id")
	}
	authz = strings.TrimPrefix(a, "a=")
	if !strings.HasPrefix(rest, "\x01") || !strings.HasSuffix(rest, "\x01\x01") {
		return "", "", errors.New("invalid OAUTHBEARER initial response: key-value pairs not framed by %x01")
	}
	for _, kv := range strings.Split(strings.TrimSuffix(rest[1:], "\x01\x01"), "\x01") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return "", "", errors.New("invalid OAUTHBEARER initial response: a key-value pair without '='")
		}
		if k == "auth" {
			scheme, tok, ok := strings.Cut(v, " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
				return "", "", errors.New("invalid OAUTHBEARER initial response: auth is not \"Bearer <token>\"")
			}
			token = strings.TrimSpace(tok)
		}
	}
	if token == "" {
		return "", "", errors.New("invalid OAUTHBEARER initial response: no auth key")
	}
	return authz, token, nil
}
