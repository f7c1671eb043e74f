package io.tidelog.operator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import java.util.List;
import java.util.Map;

/** What a {@link Cluster} should be. */
public class ClusterSpec {
  @Required
  @Min(1)
  @JsonPropertyDescription("The number of brokers. Broker ids are the pods' ordinals.")
  public int replicas;

  @Default("tidelog/broker")
  @JsonPropertyDescription("The broker image, without its tag.")
  public String image = "tidelog/broker";

  @Default("0.1.0")
  @JsonPropertyDescription("The Tidelog version: the image's tag.")
  public String version = "0.1.0";

  @Required
  @JsonPropertyDescription("The brokers' log directories: one PersistentVolumeClaim per broker.")
  public Storage storage;

  @JsonPropertyDescription("CPU and memory for each broker container.")
  public ResourceRequirements resources;

  @JsonPropertyDescription("The brokers' JVM: heap size and extra options.")
  public Jvm jvm;

  @JsonPropertyDescription(
      "Broker configs, under Kafka's server.properties names, passed to every broker. The keys the"
          + " operator sets itself (node.id, listeners and their security, authorizer.class.name,"
          + " super.users, listener.name.replication.*, log.dirs, broker.rack,"
          + " tidelog.etcd.endpoints, tidelog.http.port) are refused, as are keys"
          + " other than config names (letters, digits, '.', '_', '-') and values with a line"
          + " break or another control character."
          + " auto.create.topics.enable is false unless set here: topics come from Topic"
          + " resources.")
  public Map<String, String> config;

  @Default("auto")
  @JsonPropertyDescription(
      "auto: the operator spreads partition replicas evenly over the brokers, by count and"
          + " then by bytes, so that brokers a scale-up adds get their share; manual: replicas"
          + " move only when asked"
          + " (kafka-reassign-partitions), or off the brokers a scale-down removes.")
  public Rebalance rebalance = Rebalance.AUTO;

  @Required
  @JsonPropertyDescription("The etcd that holds the cluster's metadata.")
  public Etcd etcd;

  @JsonPropertyDescription("Spread brokers across a node topology label, such as a zone.")
  public Rack rack;

  @JsonPropertyDescription("Prometheus metrics of the brokers.")
  public Metrics metrics;

  @JsonPropertyDescription(
      "Other namespaces whose Topic resources may bind to this Cluster; \"*\" allows every"
          + " namespace. Topics in the Cluster's own namespace always may.")
  public List<String> topicNamespaces;

  @JsonPropertyDescription(
      "The listeners clients connect to; by default one, plain: port 9092, no TLS, no"
          + " authentication. Brokers replicate over a listener of their own, REPLICATION on port"
          + " 9091, with mutual TLS from the cluster CA.")
  public List<Listener> listeners;

  @JsonPropertyDescription(
      "ACLs: {type: simple} turns on Kafka's StandardAuthorizer, denying what no ACL allows.")
  public Authorization authorization;

  @JsonPropertyDescription(
      "The certificate authority of the brokers' and etcd's certificates (inter-broker mutual TLS,"
          + " the operator's own identity).")
  public CertificateAuthoritySpec clusterCa;

  @JsonPropertyDescription("The certificate authority of users' client certificates.")
  public CertificateAuthoritySpec clientsCa;

  /** A volume per pod. */
  public static class Storage {
    @Required
    @Pattern("^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$")
    @JsonPropertyDescription("The size of each volume, a quantity such as 10Gi. It can grow.")
    public String size;

    @JsonPropertyDescription("The StorageClass; the cluster's default when unset.")
    public String storageClass;

    @Default("false")
    @JsonPropertyDescription("Delete the volumes when the Cluster is deleted or scaled down.")
    public boolean deleteClaim;
  }

  /** The brokers' JVM. */
  public static class Jvm {
    @Pattern("^[0-9]+[kKmMgG]?$")
    @JsonPropertyDescription("The maximum heap, as for -Xmx, such as 1g.")
    public String heap;

    @JsonPropertyDescription("Further JVM options.")
    public List<String> options;
  }

  /** Either an etcd that the operator runs, or an external one. */
  @ValidationRule(
      value = "has(self.endpoints) != has(self.replicas)",
      message = "set either etcd.replicas (a managed etcd) or etcd.endpoints (an external one)")
  @ValidationRule(
      value = "!has(self.replicas) || self.replicas % 2 == 1",
      message =
          "etcd.replicas must be odd (1, 3 or 5): a quorum of an even number tolerates no"
              + " more failures than one member fewer")
  public static class Etcd {
    @Min(1)
    @Max(7)
    @JsonPropertyDescription("The members of a managed etcd: 1, 3 or 5.")
    public Integer replicas;

    @JsonPropertyDescription("The managed etcd's volumes.")
    public Storage storage;

    @Default("quay.io/coreos/etcd:v3.5.17")
    @JsonPropertyDescription("The managed etcd's image.")
    public String image = "quay.io/coreos/etcd:v3.5.17";

    @JsonPropertyDescription(
        "A managed etcd member's CPU and memory; by default it requests 100m and 256Mi, and is"
            + " limited to 1Gi of memory.")
    public ResourceRequirements resources;

    @JsonPropertyDescription("The client URLs of an external etcd, such as http://etcd:2379.")
    public List<String> endpoints;
  }

  /** Spreading brokers across a topology domain. */
  public static class Rack {
    @Required
    @JsonPropertyDescription(
        "The node label whose values are racks, such as topology.kubernetes.io/zone.")
    public String topologyKey;

    @Default("ScheduleAnyway")
    @JsonPropertyDescription(
        "Whether brokers that cannot spread evenly still schedule (ScheduleAnyway) or wait"
            + " (DoNotSchedule), as in a topology spread constraint.")
    public WhenUnsatisfiable whenUnsatisfiable = WhenUnsatisfiable.ScheduleAnyway;
  }

  /** The values of a topology spread constraint's {@code whenUnsatisfiable}. */
  public enum WhenUnsatisfiable {
    ScheduleAnyway,
    DoNotSchedule
  }

  /**
   * A certificate authority the operator runs, or one the user brings, and how long what it issues
   * lives: names as in Strimzi's {@code clusterCa} and {@code clientsCa}.
   */
  @ValidationRule(
      value = "self.renewalDays < self.validityDays",
      message = "renewalDays must be fewer than validityDays")
  public static class CertificateAuthoritySpec {
    @Default("true")
    @JsonPropertyDescription(
        "Whether the operator makes the authority and renews it; false: the Secrets <cluster>-<kind>"
            + "-ca (ca.crt, ca.key) and <cluster>-<kind>-ca-cert (ca.crt, the certificates to"
            + " trust) are the user's, and only what the authority issues is renewed.")
    public boolean generateCertificateAuthority = true;

    @Default("365")
    @Min(2)
    @JsonPropertyDescription("Days an authority and each certificate it issues are valid.")
    public int validityDays = 365;

    @Default("30")
    @Min(1)
    @JsonPropertyDescription(
        "Days before its expiry that a certificate or an authority is renewed. Renewal restarts"
            + " no pod: brokers reload their certificates from the mounted Secrets.")
    public int renewalDays = 30;
  }

  /** A listener for clients: its port, whether TLS, and how clients authenticate. */
  @ValidationRule(
      value =
          "!has(self.configuration) || !has(self.configuration.brokerCertChainAndKey) || self.tls",
      message = "configuration.brokerCertChainAndKey needs tls: true")
  public static class Listener {
    @Required
    @Pattern("^[a-z][a-z0-9]{0,10}$")
    @JsonPropertyDescription(
        "The listener's name, lower case: its Kafka listener name is the same in upper case.")
    public String name;

    @Required
    @Min(1024)
    @Max(65535)
    @JsonPropertyDescription("The port, on every broker and the bootstrap Service.")
    public int port;

    @JsonPropertyDescription(
        "Whether the listener speaks TLS, with the broker's certificate from the cluster CA.")
    public boolean tls;

    @JsonPropertyDescription("How clients authenticate; none when absent.")
    public ListenerAuthentication authentication;

    @JsonPropertyDescription(
        "Who may connect, as a NetworkPolicy's peers (pods, namespaces, IP blocks); anyone when"
            + " absent.")
    public List<io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer> networkPolicyPeers;

    @JsonPropertyDescription("More of the listener: the certificate it presents.")
    public ListenerConfiguration configuration;
  }

  /** More of a listener. */
  public static class ListenerConfiguration {
    @JsonPropertyDescription(
        "A certificate of your own for a TLS listener, instead of the cluster CA's: the Secret in"
            + " the Cluster's namespace and its keys (PEM: the chain, the key as PKCS#8, PKCS#1"
            + " or SEC1), such as cert-manager's tls.crt and tls.key. It must name the brokers'"
            + " advertised host names. Brokers take a renewed one without a restart.")
    public CertificateSecret brokerCertChainAndKey;
  }

  /** A certificate chain and its key in a Secret. */
  public static class CertificateSecret {
    @Required
    @JsonPropertyDescription("The Secret, in the Cluster's namespace.")
    public String secretName;

    @Required
    @JsonPropertyDescription("The key of the certificate chain (PEM), such as tls.crt.")
    public String certificate;

    @Required
    @JsonPropertyDescription("The key of the private key (PEM), such as tls.key.")
    public String key;
  }

  /** How clients of a listener authenticate. */
  @ValidationRule(
      value = "self.type != 'oauth' || has(self.jwksEndpointUri)",
      message = "oauth needs jwksEndpointUri")
  public static class ListenerAuthentication {
    @Required
    @JsonPropertyDescription(
        "scram-sha-512 (SASL SCRAM-SHA-512, users' credentials), tls (a client certificate from"
            + " the clients CA; needs tls: true) or oauth (SASL OAUTHBEARER, JWTs checked"
            + " against a JWKS).")
    public AuthenticationType type;

    @JsonPropertyDescription("oauth: the JWKS's URL (https, or file: for a mounted file).")
    public String jwksEndpointUri;

    @JsonPropertyDescription("oauth: the issuer a token must name (iss).")
    public String validIssuerUri;

    @JsonPropertyDescription("oauth: an audience a token must name (aud).")
    public String audience;

    @JsonPropertyDescription("oauth: the claim that names the user; sub by default.")
    public String userNameClaim;
  }

  /** The ways clients of a listener authenticate. */
  public enum AuthenticationType {
    @com.fasterxml.jackson.annotation.JsonProperty("scram-sha-512")
    SCRAM_SHA_512,
    @com.fasterxml.jackson.annotation.JsonProperty("tls")
    TLS,
    @com.fasterxml.jackson.annotation.JsonProperty("oauth")
    OAUTH
  }

  /** Authorization by Kafka's ACLs. */
  public static class Authorization {
    @Required
    @JsonPropertyDescription("simple: Kafka's StandardAuthorizer with ACLs kept in etcd.")
    public AuthorizationType type;

    @JsonPropertyDescription(
        "Principals allowed everything, such as User:admin; the brokers and the operator always"
            + " are.")
    public List<String> superUsers;
  }

  /** Whether the operator balances replicas over the brokers itself. */
  public enum Rebalance {
    @com.fasterxml.jackson.annotation.JsonProperty("auto")
    AUTO,
    @com.fasterxml.jackson.annotation.JsonProperty("manual")
    MANUAL
  }

  /** The authorizers. */
  public enum AuthorizationType {
    @com.fasterxml.jackson.annotation.JsonProperty("simple")
    SIMPLE
  }

  /** Metrics. */
  public static class Metrics {
    @Default("true")
    @JsonPropertyDescription("Annotate broker pods for Prometheus scraping of /metrics.")
    public boolean enabled = true;
  }
}
