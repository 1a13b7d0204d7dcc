package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Kafka's names of the TLS protocol versions (ssl.enabled.protocols) and
// of the SASL mechanisms (sasl.enabled.mechanisms).
var (
	tlsProtocols   = []string{"TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"}
	saslMechanisms = []string{"GSSAPI", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"}
)

// tPassword is Kafka's PASSWORD type: a string that Get, DescribeConfigs
// and error messages never show.
var tPassword = &valueType{"password", func(s string) (any, error) { return s, nil }, func(reflect.Value) string { return "" }}

// listenerPrefix starts Kafka's per-listener properties:
// listener.name.<lower-case listener name>.<property>.
const listenerPrefix = "listener.name."

// jaasSuffix ends the per-listener, per-mechanism JAAS property:
// listener.name.<listener>.<lower-case mechanism>.sasl.jaas.config.
const jaasSuffix = ".sasl.jaas.config"

// ListenerSecurity is the security configuration of one listener: each
// value is the listener's own (listener.name.<name>.<property>) if given,
// else the broker-wide property, else its default. Kafka resolves the
// listener prefix the same way (KIP-103). Values are as given; an unset
// Kafka null is "".
type ListenerSecurity struct {
	Protocol string // from listener.security.protocol.map

	KeystoreType             string // ssl.keystore.type
	KeystoreLocation         string // ssl.keystore.location
	KeystorePassword         string // ssl.keystore.password
	KeystoreKey              string // ssl.keystore.key
	KeystoreCertificateChain string // ssl.keystore.certificate.chain
	KeyPassword              string // ssl.key.password
	TruststoreType           string // ssl.truststore.type
	TruststoreLocation       string // ssl.truststore.location
	TruststorePassword       string // ssl.truststore.password
	TruststoreCertificates   string // ssl.truststore.certificates
	ClientAuth               string // ssl.client.auth: none, requested or required
	EnabledProtocols         []string
	CipherSuites             []string // ssl.cipher.suites; empty: the TLS library's defaults
	// EndpointIdentificationAlgorithm is ssl.endpoint.identification.algorithm:
	// https (a client checks the server's certificate names the host it
	// dialed) or "" (it does not).
	EndpointIdentificationAlgorithm string

	SaslEnabledMechanisms []string // sasl.enabled.mechanisms
	// JAAS maps an upper-case mechanism to its
	// listener.name.<listener>.<mechanism>.sasl.jaas.config. Kafka reads a
	// broker's JAAS configuration only with both prefixes.
	JAAS map[string]string

	OAuthBearer OAuthBearerSettings // sasl.oauthbearer.*
}

// OAuthBearerSettings are a listener's sasl.oauthbearer.* properties.
type OAuthBearerSettings struct {
	JWKSURL          string   // jwks.endpoint.url; "" for none
	JWKSRefresh      Millis   // jwks.endpoint.refresh.ms
	JWKSRetryBackoff Millis   // jwks.endpoint.retry.backoff.ms
	ExpectedAudience []string // expected.audience
	ExpectedIssuer   string   // expected.issuer; "" for any
	SubClaimName     string   // sub.claim.name
	ScopeClaimName   string   // scope.claim.name
	ClockSkewSeconds int      // clock.skew.seconds
}

// Security returns the security configuration of the listener named
// name (upper-case, as in listeners).
func (b *Broker) Security(name string) ListenerSecurity {
	proto, _ := b.SecurityProtocol(name)
	get := func(prop string) string { return b.listenerValue(name, prop) }
	list := func(prop string) []string { return splitList(get(prop)) }
	s := ListenerSecurity{
		Protocol:     proto,
		KeystoreType: get("ssl.keystore.type"), KeystoreLocation: get("ssl.keystore.location"),
		KeystorePassword: get("ssl.keystore.password"), KeystoreKey: get("ssl.keystore.key"),
		KeystoreCertificateChain: get("ssl.keystore.certificate.chain"), KeyPassword: get("ssl.key.password"),
		TruststoreType: get("ssl.truststore.type"), TruststoreLocation: get("ssl.truststore.location"),
		TruststorePassword: get("ssl.truststore.password"), TruststoreCertificates: get("ssl.truststore.certificates"),
		ClientAuth: get("ssl.client.auth"), EnabledProtocols: list("ssl.enabled.protocols"),
		CipherSuites: list("ssl.cipher.suites"), SaslEnabledMechanisms: list("sasl.enabled.mechanisms"),
		EndpointIdentificationAlgorithm: get("ssl.endpoint.identification.algorithm"),
		JAAS:                            map[string]string{},
	}
	for rest, v := range b.perLstnr[strings.ToLower(name)] {
		if mech, ok := strings.CutSuffix(rest, jaasSuffix); ok {
			s.JAAS[strings.ToUpper(mech)] = v
		}
	}
	s.OAuthBearer = b.oauthBearer(get)
	return s
}

func (b *Broker) oauthBearer(get func(string) string) OAuthBearerSettings {
	num := func(prop string) int64 { n, _ := strconv.ParseInt(get(prop), 10, 64); return n } // checked at parse
	return OAuthBearerSettings{JWKSURL: get("sasl.oauthbearer.jwks.endpoint.url"),
		JWKSRefresh:      Millis(num("sasl.oauthbearer.jwks.endpoint.refresh.ms")),
		JWKSRetryBackoff: Millis(num("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms")),
		ExpectedAudience: splitList(get("sasl.oauthbearer.expected.audience")),
		ExpectedIssuer:   get("sasl.oauthbearer.expected.issuer"),
		SubClaimName:     get("sasl.oauthbearer.sub.claim.name"), ScopeClaimName: get("sasl.oauthbearer.scope.claim.name"),
		ClockSkewSeconds: int(num("sasl.oauthbearer.clock.skew.seconds"))}
}

// listenerValue is prop's value for the listener: its own, the
// broker-wide one, or the default ("" for Kafka's null).
func (b *Broker) listenerValue(listener, prop string) string {
	if v, ok := b.perLstnr[strings.ToLower(listener)][prop]; ok {
		return v
	}
	if v, ok := b.set[prop]; ok {
		return v
	}
	d := brokerIndex().byName[prop]
	if d == nil || d.null {
		return ""
	}
	return d.deflt
}

// splitListenerProps takes the listener.name.* properties out of props.
// Each must name a property a listener may override (or a mechanism's
// JAAS configuration) and hold a valid value for it; the listener name is
// checked against listeners later (validateListenerProps).
func splitListenerProps(props map[string]string) (map[string]string, map[string]map[string]string, []error) {
	rest := make(map[string]string, len(props))
	per := map[string]map[string]string{}
	var errs []error
	for k, v := range props {
		listener, prop, ok := cutListenerProperty(k)
		if !strings.HasPrefix(k, listenerPrefix) {
			rest[k] = v
			continue
		}
		if !ok {
			errs = append(errs, &PropertyError{Name: k, Err: ErrUnknownProperty,
				Reason: "expected listener.name.<listener>.<property> with an ssl.* property, sasl.enabled.mechanisms, or <mechanism>.sasl.jaas.config"})
			continue
		}
		v = strings.TrimSpace(v)
		if err := checkListenerValue(k, prop, v); err != nil {
			errs = append(errs, err)
			continue
		}
		if per[listener] == nil {
			per[listener] = map[string]string{}
		}
		per[listener][prop] = v
	}
	return rest, per, errs
}

// cutListenerProperty splits listener.name.<listener>.<prop>, where prop
// is a property a listener may override or <mechanism>.sasl.jaas.config.
// A listener name holds no dot, so the first dot after the prefix ends it.
func cutListenerProperty(k string) (listener, prop string, ok bool) {
	after, found := strings.CutPrefix(k, listenerPrefix)
	if !found {
		return "", "", false
	}
	listener, prop, found = strings.Cut(after, ".")
	if !found || listener == "" {
		return "", "", false
	}
	// Kafka's mechanism prefix of the OAUTHBEARER settings:
	// listener.name.<l>.oauthbearer.sasl.oauthbearer.<name>.
	if p, ok := strings.CutPrefix(prop, "oauthbearer."); ok && strings.HasPrefix(p, "sasl.oauthbearer.") {
		prop = p
	}
	if mech, isJAAS := strings.CutSuffix(prop, jaasSuffix); isJAAS {
		return listener, prop, slices.Contains(saslMechanisms, strings.ToUpper(mech)) && mech == strings.ToLower(mech)
	}
	d := brokerIndex().byName[prop]
	return listener, prop, d != nil && d.listener
}

func checkListenerValue(name, prop, v string) error {
	if strings.HasSuffix(prop, jaasSuffix) {
		return nil // read when the listener's SASL mechanisms are built
	}
	d := brokerIndex().byName[prop]
	_, err := parseChecked(name, v, d.typ, d.check)
	if err != nil && d.typ == tPassword {
		return invalid(name, "(hidden)", "invalid")
	}
	return err
}

// validateListenerProps refuses a listener.name.<l>. prefix naming no
// listener: Kafka ignores it, and a typo would leave a listener without
// the TLS or SASL settings meant for it.
func (b *Broker) validateListenerProps() error {
	for l, props := range b.perLstnr {
		known := slices.ContainsFunc(b.Listeners, func(x Listener) bool { return strings.ToLower(x.Name) == l })
		if known {
			continue
		}
		for prop := range props {
			return invalid(listenerPrefix+l+"."+prop, "", "no listener is named %s (the prefix takes the listener's name in lower case)", strings.ToUpper(l))
		}
	}
	return nil
}

// StandardAuthorizer is the one authorizer.class.name served: Kafka's
// KRaft authorizer, whose ACLs live in the cluster metadata.
const StandardAuthorizer = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

func authorizerClass(v any) error {
	if s := v.(string); s != "" && s != StandardAuthorizer {
		return fmt.Errorf("%w: only %s (ACLs in the cluster metadata), or nothing for no authorization", ErrUnsupported, StandardAuthorizer)
	}
	return nil
}
