package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// Kafka: KIP-103, a listener's listener.name.<name>.ssl.* property wins
// over the broker-wide one, which wins over the default; a broker's JAAS
// configuration is read only with the listener and mechanism prefixes.
func TestListenerSecurityPrecedence(t *testing.T) {
	b, err := Parse(map[string]string{
		"listeners":                                                    "INTERNAL://h:1,EXTERNAL://h:2",
		"listener.security.protocol.map":                               "INTERNAL:SSL,EXTERNAL:SASL_SSL",
		"inter.broker.listener.name":                                   "INTERNAL",
		"ssl.keystore.type":                                            "PEM",
		"ssl.client.auth":                                              "required",
		"listener.name.external.ssl.client.auth":                       "none",
		"listener.name.external.sasl.enabled.mechanisms":               "PLAIN,SCRAM-SHA-512",
		"listener.name.external.plain.sasl.jaas.config":                `org.apache.kafka.common.security.plain.PlainLoginModule required user_a="x";`,
		"listener.name.internal.ssl.keystore.certificate.chain":        "-----BEGIN CERTIFICATE-----",
		"listener.name.external.ssl.enabled.protocols":                 "TLSv1.3",
		"listener.name.external.scram-sha-512.sasl.jaas.config":        "x",
		"listener.name.internal.ssl.endpoint.identification.algorithm": "",
	})
	if err != nil {
		t.Fatal(err)
	}
	in, ex := b.Security("INTERNAL"), b.Security("EXTERNAL")
	if in.Protocol != "SSL" || ex.Protocol != "SASL_SSL" {
		t.Errorf("protocols %s, %s", in.Protocol, ex.Protocol)
	}
	if in.ClientAuth != "required" || ex.ClientAuth != "none" {
		t.Errorf("ssl.client.auth: internal %q (broker-wide), external %q (its own)", in.ClientAuth, ex.ClientAuth)
	}
	if in.KeystoreType != "PEM" || in.KeystoreCertificateChain == "" || ex.KeystoreCertificateChain != "" {
		t.Errorf("keystore: %q %q %q", in.KeystoreType, in.KeystoreCertificateChain, ex.KeystoreCertificateChain)
	}
	if !slices.Equal(in.EnabledProtocols, []string{"TLSv1.2", "TLSv1.3"}) || !slices.Equal(ex.EnabledProtocols, []string{"TLSv1.3"}) {
		t.Errorf("enabled protocols %v, %v", in.EnabledProtocols, ex.EnabledProtocols)
	}
	if !slices.Equal(in.SaslEnabledMechanisms, []string{"GSSAPI"}) || !slices.Equal(ex.SaslEnabledMechanisms, []string{"PLAIN", "SCRAM-SHA-512"}) {
		t.Errorf("mechanisms %v, %v", in.SaslEnabledMechanisms, ex.SaslEnabledMechanisms)
	}
	if len(in.JAAS) != 0 || !strings.Contains(ex.JAAS["PLAIN"], "user_a") || ex.JAAS["SCRAM-SHA-512"] != "x" {
		t.Errorf("JAAS %v, %v", in.JAAS, ex.JAAS)
	}
}

// Passwords never show: Get (and so DescribeConfigs) gives Kafka's null,
// and an error about one does not repeat it.
func TestPasswordsAreHidden(t *testing.T) {
	b, err := Parse(map[string]string{"ssl.keystore.password": "hunter2", "ssl.keystore.key": "KEY"})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"ssl.keystore.password", "ssl.keystore.key"} {
		if v, ok := b.Get(n); !ok || v != "" {
			t.Errorf("Get(%s) = %q, %v", n, v, ok)
		}
	}
	if b.Security("PLAINTEXT").KeystorePassword != "hunter2" {
		t.Error("Security lost the password")
	}
}

func TestListenerPropertyErrors(t *testing.T) {
	for _, c := range []struct {
		k, v, want string
		err        error
	}{
		{"listener.name.plaintext.ssl.client.auth", "sometimes", "expected one of", ErrInvalidValue},
		{"listener.name.plaintext.ssl.clientauth", "none", "listener.name.<listener>.<property>", ErrUnknownProperty},
		{"listener.name.plaintext.log.retention.ms", "1", "listener.name.<listener>.<property>", ErrUnknownProperty},
		{"listener.name.plaintext.kerberos.sasl.jaas.config", "x", "listener.name.<listener>.<property>", ErrUnknownProperty},
		{"listener.name.PLAINTEXT.PLAIN.sasl.jaas.config", "x", "listener.name.<listener>.<property>", ErrUnknownProperty},
		{"listener.name.external.ssl.client.auth", "none", "no listener is named EXTERNAL", ErrInvalidValue},
		{"listener.name.plaintext.sasl.enabled.mechanisms", "PLAIN,DIGEST-MD5", "expected a comma-separated list", ErrInvalidValue},
		{"ssl.enabled.protocols", "SSLv3", "expected a comma-separated list", ErrInvalidValue},
		{"ssl.principal.mapping.rules", "RULE:^CN=(.*)$/$1/LU", "expected ','", ErrInvalidValue},
	} {
		_, err := Parse(map[string]string{c.k: c.v})
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, c.err) {
			t.Errorf("%s=%s: %v, want %q (%v)", c.k, c.v, err, c.want, c.err)
		}
	}
}

// Kafka: authorizer.class.name is empty by default (no authorization);
// the KRaft StandardAuthorizer is the one served, anything else stops
// start-up.
func TestAuthorizerClassName(t *testing.T) {
	b, err := Parse(map[string]string{"authorizer.class.name": StandardAuthorizer, "super.users": "User:admin", "allow.everyone.if.no.acl.found": "true"})
	if err != nil || b.AuthorizerClassName != StandardAuthorizer || b.SuperUsers != "User:admin" || !b.AllowEveryoneIfNoACLFound {
		t.Fatalf("Parse: %+v, %v", b, err)
	}
	if _, err := Parse(map[string]string{"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("the ZooKeeper AclAuthorizer: %v, want ErrUnsupported", err)
	}
	if b, _ := Parse(nil); b.AuthorizerClassName != "" || b.AllowEveryoneIfNoACLFound {
		t.Errorf("defaults: %q, %v", b.AuthorizerClassName, b.AllowEveryoneIfNoACLFound)
	}
}
