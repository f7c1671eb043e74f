package io.tidelog.operator.brokers;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.certificates.CaSecret;
import io.tidelog.operator.certificates.Pem;
import io.tidelog.operator.certificates.SecretData;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * How the operator reaches a Cluster's brokers with Kafka's Admin: a bootstrap address and the
 * client security configs to use there. For a Cluster the operator runs, that is the brokers'
 * replication listener with mutual TLS, the operator's own certificate from the cluster CA (a super
 * user when ACLs are on; it never needs a password); for a Cluster whose brokers run elsewhere, the
 * address in its status, in plaintext.
 *
 * @param bootstrapServers where Admin connects first
 * @param security the client's security configs ({@code security.protocol}, {@code ssl.*})
 */
public record BrokerAccess(String bootstrapServers, Map<String, Object> security) {
  /** The port of the brokers' replication listener. */
  public static final int REPLICATION_PORT = 9091;

  /** In the operator's Secret for a Cluster: the entry of its certificate ({@code .crt}, ...). */
  public static final String OPERATOR_ENTRY = "operator";

  /** In the operator's Secret for a Cluster: its key and certificate chain, as one PEM. */
  public static final String OPERATOR_PEM = OPERATOR_ENTRY + ".pem";

  /** In a CA's certificate Secret: the certificates to trust. */
  public static final String CA_CERT = "ca.crt";

  public BrokerAccess {
    security = Map.copyOf(security);
  }

  /** Finds the access to each Cluster's brokers. */
  @FunctionalInterface
  public interface Resolver {
    BrokerAccess of(Cluster cluster, KubernetesClient client);
  }

  public static BrokerAccess plaintext(String bootstrapServers) {
    return new BrokerAccess(bootstrapServers, Map.of());
  }

  /** The Secret of the operator's own certificate for {@code c}. */
  public static String operatorCertsSecret(Cluster c) {
    return c.getMetadata().getName() + "-operator-certs";
  }

  /** The Secret of the certificates {@code c}'s cluster CA says to trust. */
  public static String clusterCaCertSecret(Cluster c) {
    return CaSecret.trustSecretName(c.getMetadata().getName(), "cluster");
  }

  /**
   * In Kubernetes: the replication listener behind the headless Service, once the operator's
   * certificate for the Cluster exists; until then, or for a Cluster whose brokers run elsewhere,
   * {@code fallback} in plaintext.
   */
  public static BrokerAccess inKubernetes(Cluster c, KubernetesClient client, String fallback) {
    String headless =
        "%s-brokers.%s.svc:%d"
            .formatted(c.getMetadata().getName(), c.getMetadata().getNamespace(), REPLICATION_PORT);
    return mutualTls(c, client, headless).orElseGet(() -> plaintext(fallback));
  }

  /**
   * Mutual TLS to {@code address} with the operator's certificate for {@code c} and the cluster
   * CA's certificates as the only trusted ones; empty while either Secret is missing.
   */
  public static Optional<BrokerAccess> mutualTls(
      Cluster c, KubernetesClient client, String address) {
    String ns = c.getMetadata().getNamespace();
    Secret own = client.secrets().inNamespace(ns).withName(operatorCertsSecret(c)).get();
    Secret trust = client.secrets().inNamespace(ns).withName(clusterCaCertSecret(c)).get();
    String pem = SecretData.text(own, OPERATOR_PEM);
    String trusted = SecretData.text(trust, CA_CERT);
    if (pem == null || trusted == null) {
      return Optional.empty();
    }
    Map<String, Object> security = new HashMap<>();
    security.put("security.protocol", "SSL");
    security.put("ssl.keystore.type", "PEM");
    security.put("ssl.keystore.key", Pem.of(Pem.privateKey(pem)));
    security.put("ssl.keystore.certificate.chain", Pem.of(Pem.certificates(pem)));
    security.put("ssl.truststore.type", "PEM");
    security.put("ssl.truststore.certificates", trusted);
    return Optional.of(new BrokerAccess(address, security));
  }

  /**
   * This access without checking that a broker's certificate names the host connected to: for
   * brokers reached at addresses their certificates cannot name, such as a test's loopback.
   */
  public BrokerAccess withoutHostnameVerification() {
    Map<String, Object> relaxed = new HashMap<>(security);
    relaxed.put("ssl.endpoint.identification.algorithm", "");
    return new BrokerAccess(bootstrapServers, relaxed);
  }

  /**
   * The operator's Admin client ({@code client.id} tidelog-operator) with these security configs,
   * each request waiting at most {@code requestTimeout}, each call {@code apiTimeout}.
   */
  public Admin newAdmin(Duration requestTimeout, Duration apiTimeout) {
    return Admin.create(
        adminConfigs(
            Map.of(
                AdminClientConfig.CLIENT_ID_CONFIG,
                "tidelog-operator",
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG,
                (int) requestTimeout.toMillis(),
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
                (int) apiTimeout.toMillis())));
  }

  /** Admin's configs: the address, the security, and {@code others}. */
  public Map<String, Object> adminConfigs(Map<String, Object> others) {
    Map<String, Object> configs = new HashMap<>(others);
    configs.putAll(security);
    configs.put("bootstrap.servers", bootstrapServers);
    return configs;
  }

  /** Never prints the key. */
  @Override
  public String toString() {
    return "BrokerAccess["
        + bootstrapServers
        + ", "
        + security.getOrDefault("security.protocol", "PLAINTEXT")
        + "]";
  }
}
