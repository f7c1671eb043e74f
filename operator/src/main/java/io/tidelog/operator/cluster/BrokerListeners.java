package io.tidelog.operator.cluster;

import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.api.ClusterSpec;
import io.tidelog.operator.api.ClusterSpec.AuthenticationType;
import io.tidelog.operator.certificates.CertificateAuthority;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * A Cluster's Kafka listeners and the broker configs they take: the client listeners of {@code
 * spec.listeners} (one plain listener on 9092 by default) and {@code REPLICATION} on 9091, where
 * brokers, and the operator, connect with mutual TLS from the cluster CA, its principal the
 * certificate's subject. Every TLS listener presents the broker's certificate from the cluster CA
 * (a PEM keystore whose file each pod names: {@code ssl.keystore.location} in its environment), but
 * one with a certificate of the user's own ({@code configuration.brokerCertChainAndKey}), kept by
 * the operator as a PEM keystore in {@code <name>-listener-certs}.
 */
final class BrokerListeners {
  static final String REPLICATION = "REPLICATION";
  static final int REPLICATION_PORT = 9091;

  /** Where broker pods mount their certificates and the CAs they trust. */
  static final String BROKER_CERTS_DIR = "/etc/tidelog-tls/broker";

  static final String CLUSTER_CA_DIR = "/etc/tidelog-tls/cluster-ca";
  static final String CLIENTS_CA_DIR = "/etc/tidelog-tls/clients-ca";

  /** Where broker pods mount the certificates users bring for listeners, {@code <name>.pem}. */
  static final String LISTENER_CERTS_DIR = "/etc/tidelog-tls/listeners";

  static final String STANDARD_AUTHORIZER =
      "org.apache.kafka.metadata.authorizer.StandardAuthorizer";

  private BrokerListeners() {}

  /** The client listeners: as declared, or the one plain listener of a Cluster that names none. */
  static List<ClusterSpec.Listener> clientListeners(Cluster c) {
    List<ClusterSpec.Listener> declared = c.getSpec().listeners;
    if (declared != null && !declared.isEmpty()) {
      return declared;
    }
    ClusterSpec.Listener plain = new ClusterSpec.Listener();
    plain.name = "plain";
    plain.port = ClusterModel.KAFKA_PORT;
    return List.of(plain);
  }

  /** Whether the listener presents a certificate the user brings. */
  static boolean ownCertificate(ClusterSpec.Listener listener) {
    return listener.configuration != null && listener.configuration.brokerCertChainAndKey != null;
  }

  static boolean anyOwnCertificate(Cluster c) {
    return clientListeners(c).stream().anyMatch(BrokerListeners::ownCertificate);
  }

  static String kafkaName(ClusterSpec.Listener listener) {
    return listener.name.toUpperCase(Locale.ROOT);
  }

  /** The listener's security protocol, as {@code listener.security.protocol.map} names it. */
  static String protocol(ClusterSpec.Listener listener) {
    AuthenticationType type = listener.authentication == null ? null : listener.authentication.type;
    boolean sasl = type == AuthenticationType.SCRAM_SHA_512 || type == AuthenticationType.OAUTH;
    if (sasl) {
      return listener.tls ? "SASL_SSL" : "SASL_PLAINTEXT";
    }
    return listener.tls || type == AuthenticationType.TLS ? "SSL" : "PLAINTEXT";
  }

  /** {@code NAME://host:port} of the replication listener and then each client listener. */
  static String endpoints(Cluster c, String host) {
    List<String> endpoints = new ArrayList<>();
    endpoints.add(REPLICATION + "://" + host + ":" + REPLICATION_PORT);
    clientListeners(c).forEach(l -> endpoints.add(kafkaName(l) + "://" + host + ":" + l.port));
    return String.join(",", endpoints);
  }

  /** The principal of the brokers' certificates, a super user whenever ACLs are on. */
  static String brokerPrincipal(Cluster c) {
    return "User:"
        + CertificateAuthority.distinguishedName(ClusterCertificates.brokerCommonName(c));
  }

  /** The principal of the operator's certificate for {@code c}, a super user too. */
  static String operatorPrincipal(Cluster c) {
    return "User:"
        + CertificateAuthority.distinguishedName(ClusterCertificates.operatorCommonName(c));
  }

  /**
   * The broker configs of the listeners, of their security and of authorization, the same for every
   * broker.
   */
  static Map<String, String> configs(Cluster c) {
    Map<String, String> config = new LinkedHashMap<>();
    config.put("listeners", endpoints(c, "0.0.0.0"));
    List<String> protocols = new ArrayList<>();
    protocols.add(REPLICATION + ":SSL");
    clientListeners(c).forEach(l -> protocols.add(kafkaName(l) + ":" + protocol(l)));
    config.put("listener.security.protocol.map", String.join(",", protocols));
    config.put("inter.broker.listener.name", REPLICATION);
    config.put("ssl.keystore.type", "PEM");
    String replication = prefix(REPLICATION);
    config.put(replication + "ssl.client.auth", "required");
    config.put(replication + "ssl.truststore.type", "PEM");
    config.put(replication + "ssl.truststore.location", CLUSTER_CA_DIR + "/ca.crt");
    for (ClusterSpec.Listener listener : clientListeners(c)) {
      String p = prefix(kafkaName(listener));
      if (ownCertificate(listener)) {
        config.put(p + "ssl.keystore.location", LISTENER_CERTS_DIR + "/" + listener.name + ".pem");
      }
      ClusterSpec.ListenerAuthentication auth = listener.authentication;
      if (auth == null) {
        continue;
      }
      switch (auth.type) {
        case TLS -> {
          config.put(p + "ssl.client.auth", "required");
          config.put(p + "ssl.truststore.type", "PEM");
          config.put(p + "ssl.truststore.location", CLIENTS_CA_DIR + "/ca.crt");
          // a user's certificate, CN=<user>,O=tidelog.io, is User:<user>
          config.put(
              p + "ssl.principal.mapping.rules",
              "RULE:^CN=([^,]+),O="
                  + CertificateAuthority.ORGANIZATION.replace(".", "\\.")
                  + "$/$1/,DEFAULT");
        }
        case SCRAM_SHA_512 -> config.put(p + "sasl.enabled.mechanisms", "SCRAM-SHA-512");
        case OAUTH -> {
          config.put(p + "sasl.enabled.mechanisms", "OAUTHBEARER");
          config.put(
              p + "oauthbearer.sasl.jaas.config",
              "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;");
          config.put(p + "sasl.oauthbearer.jwks.endpoint.url", auth.jwksEndpointUri);
          if (auth.validIssuerUri != null) {
            config.put(p + "sasl.oauthbearer.expected.issuer", auth.validIssuerUri);
          }
          if (auth.audience != null) {
            config.put(p + "sasl.oauthbearer.expected.audience", auth.audience);
          }
          if (auth.userNameClaim != null) {
            config.put(p + "sasl.oauthbearer.sub.claim.name", auth.userNameClaim);
          }
        }
        default -> throw new IllegalStateException("no authentication " + auth.type);
      }
    }
    if (c.getSpec().authorization != null) {
      config.put("authorizer.class.name", STANDARD_AUTHORIZER);
      List<String> supers = new ArrayList<>(List.of(brokerPrincipal(c), operatorPrincipal(c)));
      if (c.getSpec().authorization.superUsers != null) {
        supers.addAll(c.getSpec().authorization.superUsers);
      }
      config.put("super.users", supers.stream().distinct().collect(Collectors.joining(";")));
    }
    return config;
  }

  /** The JWKS URLs of oauth listeners, which Kafka 4.1 reads only when the JVM allows them. */
  static List<String> jwksUrls(Cluster c) {
    return clientListeners(c).stream()
        .filter(l -> l.authentication != null && l.authentication.type == AuthenticationType.OAUTH)
        .map(l -> l.authentication.jwksEndpointUri)
        .distinct()
        .toList();
  }

  private static String prefix(String kafkaName) {
    return "listener.name." + kafkaName.toLowerCase(Locale.ROOT) + ".";
  }
}
