package io.tidelog.operator.cluster;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.api.ClusterSpec;
import io.tidelog.operator.brokers.BrokerAccess;
import io.tidelog.operator.certificates.CaSecret;
import io.tidelog.operator.certificates.CaSecret.Step;
import io.tidelog.operator.certificates.CertificateAndKey;
import io.tidelog.operator.certificates.CertificateAuthority;
import io.tidelog.operator.certificates.Pem;
import io.tidelog.operator.certificates.SecretData;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * A Cluster's certificates, kept in Secrets it owns: two certificate authorities, the cluster CA
 * (brokers' certificates) and the clients CA (users' certificates), and each broker's certificate.
 *
 * <p>For a CA of kind {@code cluster} or {@code clients}: Secret {@code <name>-<kind>-ca} holds its
 * key and certificate ({@code ca.key}, {@code ca.crt}), Secret {@code <name>-<kind>-ca-cert} the
 * certificates to trust ({@code ca.crt}), which pods mount. Broker {@code i}'s certificate is in
 * {@code <name>-broker-certs} as {@code <pod>.crt} (with its CA), {@code <pod>.key}, and {@code
 * <pod>.pem} (key and chain, a Kafka PEM keystore); it names every DNS name of its pod, the
 * headless and the bootstrap Service. A managed etcd member's, naming its pod and the client
 * Service, is in {@code <name>-etcd-certs} the same way. The operator's own certificate, for its
 * Admin calls, is in {@code <name>-operator-certs}. A listener's certificate that the user brings
 * (a Secret of theirs with the chain and key) is copied, checked, into {@code
 * <name>-listener-certs} as {@code <listener>.pem}, a Kafka PEM keystore, at every reconcile.
 *
 * <p>Renewal restarts nothing: pods mount the Secrets by name, and brokers reload changed files. A
 * certificate is issued again when it is missing, names other DNS names, or comes within {@code
 * renewalDays} of its expiry. A CA is renewed at {@code renewalDays} before its expiry, or when its
 * Secret is annotated {@value CaSecret#FORCE_RENEW_ANNOTATION}, in three steps of at least {@code
 * propagation} each (how long the kubelet takes to update a mounted Secret): trust both (the new CA
 * is added to what pods trust, certificates stay as they are), switch (every certificate is issued
 * again by the new CA), drop the old (only the new CA is trusted). A managed etcd reads the CAs it
 * trusts only at its start, so the cluster CA's switch also waits until every etcd member runs
 * trusting both (the members roll, one at a time; brokers do not). A CA the user brings ({@code
 * generateCertificateAuthority: false}) is never renewed by the operator.
 */
final class ClusterCertificates {
  /** The annotations of a CA's Secret that its renewal sets; others' annotations are kept. */
  private static final java.util.Set<String> OWN_ANNOTATIONS =
      java.util.Set.of(
          CaSecret.FORCE_RENEW_ANNOTATION,
          CaSecret.RENEWAL_ANNOTATION,
          CaSecret.RENEWAL_SINCE_ANNOTATION);

  /**
   * A CA's renewal under way, for its condition; {@code waitingForEtcd} when its next step waits
   * for etcd members to restart trusting both CAs.
   */
  record Renewal(String kind, Step step, Instant since, boolean waitingForEtcd) {
    Renewal(String kind, Step step, Instant since) {
      this(kind, step, since, false);
    }
  }

  /**
   * The outcome of a reconcile: each renewal under way and the cluster CA certificates to trust now
   * (PEM), or why the certificates are missing.
   */
  record Outcome(List<Renewal> renewals, String clusterTrust, Optional<String> problem) {}

  private final KubernetesClient client;
  private final Cluster cluster;
  private final Instant now;
  private final Duration propagation;
  private final Predicate<String> etcdTrusts;

  private ClusterCertificates(
      KubernetesClient client,
      Cluster cluster,
      Instant now,
      Duration propagation,
      Predicate<String> etcdTrusts) {
    this.client = client;
    this.cluster = cluster;
    this.now = now;
    this.propagation = propagation;
    this.etcdTrusts = etcdTrusts;
  }

  static String caSecret(Cluster c, String kind) {
    return CaSecret.secretName(c.getMetadata().getName(), kind);
  }

  static String caCertSecret(Cluster c, String kind) {
    return CaSecret.trustSecretName(c.getMetadata().getName(), kind);
  }

  static String brokerCertsSecret(Cluster c) {
    return c.getMetadata().getName() + "-broker-certs";
  }

  static String listenerCertsSecret(Cluster c) {
    return c.getMetadata().getName() + "-listener-certs";
  }

  static String etcdCertsSecret(Cluster c) {
    return c.getMetadata().getName() + "-etcd-certs";
  }

  /** The CN of every managed etcd member's certificate, the only CN etcd takes as a peer. */
  static String etcdCommonName(Cluster c) {
    return ClusterModel.etcdSet(c);
  }

  /**
   * The operator's own certificate for this Cluster ({@code operator.crt}, {@code .key}, {@code
   * .pem}): a super user on the replication listener, where its Admin calls go.
   */
  static String operatorCertsSecret(Cluster c) {
    return BrokerAccess.operatorCertsSecret(c);
  }

  static String operatorCommonName(Cluster c) {
    return c.getMetadata().getName() + "-operator";
  }

  /** The CN of every broker's certificate, and so the brokers' principal between them. */
  static String brokerCommonName(Cluster c) {
    return ClusterModel.brokerSet(c);
  }

  /**
   * Brings the Cluster's CAs and certificates to what its spec and the clock ask for.
   *
   * @param etcdTrusts whether every member of the managed etcd runs trusting the given CA
   *     certificates (PEM); true without a managed etcd
   */
  static Outcome reconcile(
      KubernetesClient client,
      Cluster cluster,
      Instant now,
      Duration propagation,
      Predicate<String> etcdTrusts) {
    return new ClusterCertificates(client, cluster, now, propagation, etcdTrusts).reconcile();
  }

  private Outcome reconcile() {
    List<Renewal> renewals = new ArrayList<>();
    Authorities clusterCa;
    try {
      clusterCa = authority("cluster", settings(cluster.getSpec().clusterCa), renewals);
      authority("clients", settings(cluster.getSpec().clientsCa), renewals);
    } catch (MissingAuthority e) {
      return new Outcome(renewals, null, Optional.of(e.getMessage()));
    }
    ClusterSpec.CertificateAuthoritySpec clusterSpec = settings(cluster.getSpec().clusterCa);
    brokerCertificates(clusterCa, clusterSpec);
    Optional<String> listenerProblem = listenerCertificates();
    if (listenerProblem.isPresent()) {
      return new Outcome(renewals, trusted("cluster"), listenerProblem);
    }
    if (ClusterModel.managedEtcd(cluster)) {
      Map<String, List<String>> members = new TreeMap<>();
      for (int id = 0; id < cluster.getSpec().etcd.replicas; id++) {
        members.put(ClusterModel.etcdPod(cluster, id), ClusterModel.etcdDnsNames(cluster, id));
      }
      certificates(
          etcdCertsSecret(cluster), etcdCommonName(cluster), members, clusterCa, clusterSpec);
    }
    certificates(
        operatorCertsSecret(cluster),
        operatorCommonName(cluster),
        Map.of(BrokerAccess.OPERATOR_ENTRY, List.of()),
        clusterCa,
        clusterSpec);
    return new Outcome(renewals, trusted("cluster"), Optional.empty());
  }

  /**
   * Keeps in {@code <name>-listener-certs} the keystore of every listener with a certificate the
   * user brings, from their Secret as it is now; or says what is wrong with one.
   */
  private Optional<String> listenerCertificates() {
    List<ClusterSpec.Listener> listeners = BrokerListeners.clientListeners(cluster);
    Map<String, String> wanted = new TreeMap<>();
    for (int i = 0; i < listeners.size(); i++) {
      ClusterSpec.Listener listener = listeners.get(i);
      if (!BrokerListeners.ownCertificate(listener)) {
        continue;
      }
      ClusterSpec.CertificateSecret source = listener.configuration.brokerCertChainAndKey;
      String field =
          "spec.listeners[%d].configuration.brokerCertChainAndKey: Secret %s"
              .formatted(i, source.secretName);
      Secret secret = get(source.secretName);
      if (secret == null) {
        return Optional.of(field + " does not exist in namespace " + namespace());
      }
      String chain = SecretData.text(secret, source.certificate);
      String key = SecretData.text(secret, source.key);
      if (chain == null || key == null) {
        return Optional.of(
            field + " has no key " + (chain == null ? source.certificate : source.key));
      }
      try {
        wanted.put(listener.name + ".pem", CertificateAndKey.parse(chain, key).keystorePem());
      } catch (IllegalArgumentException e) {
        return Optional.of(field + ": " + e.getMessage());
      }
    }
    if (!wanted.isEmpty() && !wanted.equals(SecretData.texts(get(listenerCertsSecret(cluster))))) {
      write(listenerCertsSecret(cluster), wanted, Map.of());
    }
    return Optional.empty();
  }

  private String namespace() {
    return cluster.getMetadata().getNamespace();
  }

  /** The certificates that pods trust for the CA of {@code kind} now (PEM). */
  private String trusted(String kind) {
    return SecretData.text(get(caCertSecret(cluster, kind)), CaSecret.CA_CERT);
  }

  private static ClusterSpec.CertificateAuthoritySpec settings(
      ClusterSpec.CertificateAuthoritySpec given) {
    return given != null ? given : new ClusterSpec.CertificateAuthoritySpec();
  }

  /**
   * The CA that issues certificates now (the old one while both are trusted) and the current one.
   */
  private record Authorities(
      CertificateAuthority issuer, CertificateAuthority current, Step step) {}

  private static final class MissingAuthority extends Exception {
    MissingAuthority(String message) {
      super(message);
    }
  }

  /** Creates, renews or steps the renewal of the CA of {@code kind}; returns it. */
  private Authorities authority(
      String kind, ClusterSpec.CertificateAuthoritySpec spec, List<Renewal> renewals)
      throws MissingAuthority {
    Secret secret = get(caSecret(cluster, kind));
    Duration validity = Duration.ofDays(spec.validityDays);
    if (secret == null
        || SecretData.text(secret, CaSecret.CA_KEY) == null
        || SecretData.text(secret, CaSecret.CA_CERT) == null) {
      if (!spec.generateCertificateAuthority) {
        throw new MissingAuthority(
            "spec.%sCa.generateCertificateAuthority: false, and Secret %s has no %s and %s; create it with the CA's key and certificate, and Secret %s with the certificates to trust"
                .formatted(
                    kind,
                    caSecret(cluster, kind),
                    CaSecret.CA_KEY,
                    CaSecret.CA_CERT,
                    caCertSecret(cluster, kind)));
      }
      CertificateAuthority created =
          CertificateAuthority.create(caSecret(cluster, kind), now, validity);
      Map<String, String> data = new TreeMap<>();
      data.put(CaSecret.CA_KEY, Pem.of(created.key()));
      data.put(CaSecret.CA_CERT, Pem.of(created.certificate()));
      write(caSecret(cluster, kind), data, Map.of());
      write(
          caCertSecret(cluster, kind),
          Map.of(CaSecret.CA_CERT, Pem.of(created.certificate())),
          Map.of());
      return new Authorities(created, created, null);
    }
    CertificateAuthority current =
        new CertificateAuthority(
            Pem.certificates(SecretData.text(secret, CaSecret.CA_CERT)).get(0),
            Pem.privateKey(SecretData.text(secret, CaSecret.CA_KEY)));
    Map<String, String> annotations = annotations(secret);
    Step step = CaSecret.step(annotations);
    Instant since =
        annotations.containsKey(CaSecret.RENEWAL_SINCE_ANNOTATION)
            ? Instant.parse(annotations.get(CaSecret.RENEWAL_SINCE_ANNOTATION))
            : now;
    if (!spec.generateCertificateAuthority) {
      return new Authorities(current, current, null); // the user's to renew
    }
    boolean due =
        "true".equals(annotations.get(CaSecret.FORCE_RENEW_ANNOTATION))
            || current
                .certificate()
                .getNotAfter()
                .toInstant()
                .isBefore(now.plus(Duration.ofDays(spec.renewalDays)));
    if (step == null && due) {
      CertificateAuthority renewed =
          CertificateAuthority.create(caSecret(cluster, kind), now, validity);
      Map<String, String> data = new TreeMap<>();
      data.put(CaSecret.CA_KEY, Pem.of(renewed.key()));
      data.put(CaSecret.CA_CERT, Pem.of(renewed.certificate()));
      data.put(CaSecret.OLD_CA_KEY, Pem.of(current.key()));
      data.put(CaSecret.OLD_CA_CERT, Pem.of(current.certificate()));
      write(caSecret(cluster, kind), data, stepAnnotations(Step.TRUSTING_BOTH));
      write(
          caCertSecret(cluster, kind),
          Map.of(CaSecret.CA_CERT, Pem.of(renewed.certificate(), current.certificate())),
          Map.of());
      renewals.add(new Renewal(kind, Step.TRUSTING_BOTH, now));
      return new Authorities(current, renewed, Step.TRUSTING_BOTH);
    }
    if (step == null) {
      return new Authorities(current, current, null);
    }
    CertificateAuthority old =
        new CertificateAuthority(
            Pem.certificates(SecretData.text(secret, CaSecret.OLD_CA_CERT)).get(0),
            Pem.privateKey(SecretData.text(secret, CaSecret.OLD_CA_KEY)));
    boolean stepDone = !now.isBefore(since.plus(propagation));
    if (step == Step.TRUSTING_BOTH && stepDone && kind.equals("cluster")) {
      if (!etcdTrusts.test(trusted(kind))) {
        renewals.add(new Renewal(kind, step, since, true));
        return new Authorities(old, current, step);
      }
    }
    if (step == Step.TRUSTING_BOTH && stepDone) {
      Map<String, String> data = new TreeMap<>(SecretData.texts(secret));
      write(caSecret(cluster, kind), data, stepAnnotations(Step.SWITCHED));
      renewals.add(new Renewal(kind, Step.SWITCHED, now));
      return new Authorities(current, current, Step.SWITCHED);
    }
    if (step == Step.SWITCHED && stepDone) {
      Map<String, String> data = new TreeMap<>();
      data.put(CaSecret.CA_KEY, SecretData.text(secret, CaSecret.CA_KEY));
      data.put(CaSecret.CA_CERT, SecretData.text(secret, CaSecret.CA_CERT));
      write(caSecret(cluster, kind), data, Map.of());
      write(
          caCertSecret(cluster, kind),
          Map.of(CaSecret.CA_CERT, Pem.of(current.certificate())),
          Map.of());
      return new Authorities(current, current, null);
    }
    renewals.add(new Renewal(kind, step, since));
    return new Authorities(step == Step.TRUSTING_BOTH ? old : current, current, step);
  }

  private Map<String, String> stepAnnotations(Step step) {
    return Map.of(
        CaSecret.RENEWAL_ANNOTATION,
        step.name(),
        CaSecret.RENEWAL_SINCE_ANNOTATION,
        now.toString());
  }

  /** Each broker's certificate, by pod, naming its pod's DNS names. */
  private void brokerCertificates(
      Authorities authorities, ClusterSpec.CertificateAuthoritySpec spec) {
    Map<String, List<String>> pods = new TreeMap<>();
    for (int id = 0; id < cluster.getSpec().replicas; id++) {
      pods.put(ClusterModel.brokerPod(cluster, id), ClusterModel.brokerDnsNames(cluster, id));
    }
    certificates(brokerCertsSecret(cluster), brokerCommonName(cluster), pods, authorities, spec);
  }

  /**
   * Keeps in Secret {@code secretName} a certificate of {@code commonName} for each entry of {@code
   * entries} (its DNS names), as {@code <entry>.crt} (with its CA), {@code <entry>.key} and {@code
   * <entry>.pem} (key and chain): issues those missing, outdated or due, and drops the others.
   */
  private void certificates(
      String secretName,
      String commonName,
      Map<String, List<String>> entries,
      Authorities authorities,
      ClusterSpec.CertificateAuthoritySpec spec) {
    Secret secret = get(secretName);
    Map<String, String> data = new TreeMap<>(SecretData.texts(secret));
    Map<String, String> wanted = new TreeMap<>();
    entries.forEach(
        (entry, names) -> {
          String crt = data.get(entry + ".crt");
          if (crt == null || due(Pem.certificates(crt).get(0), names, authorities, spec)) {
            CertificateAuthority.Issued issued =
                authorities
                    .issuer()
                    .issue(commonName, names, now, Duration.ofDays(spec.validityDays));
            String chain = Pem.of(issued.certificate(), authorities.issuer().certificate());
            String key = Pem.of(issued.key());
            wanted.put(entry + ".crt", chain);
            wanted.put(entry + ".key", key);
            wanted.put(entry + ".pem", key + chain);
          } else {
            for (String suffix : List.of(".crt", ".key", ".pem")) {
              wanted.put(entry + suffix, data.get(entry + suffix));
            }
          }
        });
    if (!wanted.equals(data)) {
      write(secretName, wanted, Map.of());
    }
  }

  /**
   * Whether {@code certificate} must be issued again: it names other DNS names, or (outside a CA's
   * trust-both step, when certificates stay with the old CA) is not the current CA's or is due.
   */
  private boolean due(
      X509Certificate certificate,
      List<String> names,
      Authorities authorities,
      ClusterSpec.CertificateAuthoritySpec spec) {
    if (!dnsNames(certificate).equals(List.copyOf(names))) {
      return true;
    }
    if (authorities.step() == Step.TRUSTING_BOTH) {
      return !authorities.issuer().signed(certificate)
          && !authorities.current().signed(certificate);
    }
    if (!authorities.current().signed(certificate)) {
      return true;
    }
    return authorities.current().expiresSoon(certificate, now, spec.renewalDays);
  }

  private static List<String> dnsNames(X509Certificate certificate) {
    try {
      Collection<List<?>> names = certificate.getSubjectAlternativeNames();
      return names == null
          ? List.of()
          : names.stream()
              .filter(n -> Objects.equals(n.get(0), 2)) // dNSName
              .map(n -> (String) n.get(1))
              .toList();
    } catch (CertificateParsingException e) {
      return List.of();
    }
  }

  private Secret get(String name) {
    return client.secrets().inNamespace(cluster.getMetadata().getNamespace()).withName(name).get();
  }

  /**
   * Creates or replaces Secret {@code name} with {@code data} and the given renewal annotations.
   */
  private void write(String name, Map<String, String> data, Map<String, String> annotations) {
    Map<String, String> encoded = new TreeMap<>();
    data.forEach((key, value) -> encoded.put(key, SecretData.encoded(value)));
    Secret desired =
        new SecretBuilder()
            .withMetadata(ClusterModel.meta(cluster, name, "certificates"))
            .withType("Opaque")
            .withData(encoded)
            .build();
    Secret existing = get(name);
    if (existing != null) {
      // keep what others annotated; the renewal's own annotations are this write's to set
      annotations(existing).entrySet().stream()
          .filter(e -> !OWN_ANNOTATIONS.contains(e.getKey()))
          .forEach(e -> desired.getMetadata().getAnnotations().put(e.getKey(), e.getValue()));
    }
    desired.getMetadata().getAnnotations().putAll(annotations);
    if (existing == null) {
      client.resource(desired).create();
    } else {
      desired.getMetadata().setResourceVersion(existing.getMetadata().getResourceVersion());
      client.resource(desired).update();
    }
  }

  private static Map<String, String> annotations(Secret secret) {
    return secret.getMetadata().getAnnotations() == null
        ? Map.of()
        : secret.getMetadata().getAnnotations();
  }
}
