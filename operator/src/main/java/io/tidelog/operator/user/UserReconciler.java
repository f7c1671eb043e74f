package io.tidelog.operator.user;

import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.retry.GradualRetry;
import io.tidelog.operator.api.Cluster;
import io.tidelog.operator.api.ClusterSpec;
import io.tidelog.operator.api.Conditions;
import io.tidelog.operator.api.User;
import io.tidelog.operator.api.UserSpec;
import io.tidelog.operator.api.UserStatus;
import io.tidelog.operator.brokers.BrokerAccess;
import io.tidelog.operator.certificates.CaSecret;
import io.tidelog.operator.certificates.CertificateAuthority;
import io.tidelog.operator.certificates.Pem;
import io.tidelog.operator.certificates.SecretData;
import io.tidelog.operator.metrics.ResourceMetrics;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a {@link User} as a Kafka user of its Cluster: a SCRAM-SHA-512 credential from a password
 * the operator makes (into a Secret named after the user, with {@code password} and a ready {@code
 * sasl.jaas.config}) or takes from the Secret the spec names, changed when that Secret changes; or
 * for a tls user a client certificate from the Cluster's clients CA in that Secret; the ACLs of
 * {@code User:<name>}, exactly as listed; the user's quotas, exactly as set. A Kafka user that has
 * a credential or ACLs already is taken over only with {@value User#ADOPT_ANNOTATION}. Deleting the
 * User removes its credential, ACLs and quotas (a finalizer, released after {@code releaseAfter}
 * when the cluster does not answer).
 */
// Not generation-aware: the adopt annotation changes no generation.
@ControllerConfiguration(name = "user", generationAwareEventProcessing = false)
@GradualRetry(maxAttempts = -1, initialInterval = 1_000, maxInterval = 30_000)
public class UserReconciler implements Reconciler<User>, Cleaner<User> {
  /** How often a Ready User is looked at again, to notice a changed password Secret. */
  private static final Duration RECHECK = Duration.ofSeconds(60);

  private static final Logger LOG = LoggerFactory.getLogger(UserReconciler.class);
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final int PASSWORD_CHARS = 32;
  private static final String ALPHABET =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

  private final BrokerAccess.Resolver brokerAccess;
  private final Duration releaseAfter;
  private final Clock clock;
  private final ResourceMetrics metrics;

  /** A User that cannot be served as it is: its Ready reason and message. */
  static final class Refused extends Exception {
    final String reason;

    Refused(String reason, String message) {
      super(message);
      this.reason = reason;
    }
  }

  public UserReconciler(
      BrokerAccess.Resolver brokerAccess,
      Duration releaseAfter,
      Clock clock,
      ResourceMetrics metrics) {
    this.brokerAccess = brokerAccess;
    this.releaseAfter = releaseAfter;
    this.clock = clock;
    this.metrics = metrics;
  }

  @Override
  public List<EventSource<?, User>> prepareEventSources(EventSourceContext<User> context) {
    metrics.watch(
        "User",
        context.getPrimaryCache(),
        u -> u.getStatus() == null ? List.of() : u.getStatus().conditions);
    var clusters =
        InformerEventSourceConfiguration.from(Cluster.class, User.class)
            .withPrimaryToSecondaryMapper((User user) -> Set.of(clusterId(user)))
            .withSecondaryToPrimaryMapper(
                cluster ->
                    context
                        .getPrimaryCache()
                        .list(user -> clusterId(user).equals(ResourceID.fromResource(cluster)))
                        .map(ResourceID::fromResource)
                        .collect(Collectors.toSet()))
            .build();
    return List.of(new InformerEventSource<>(clusters, context));
  }

  @Override
  public UpdateControl<User> reconcile(User user, Context<User> context) throws Exception {
    UserStatus before = user.getStatus();
    UserStatus status = copy(before);
    String name = user.getMetadata().getName();
    String principal = "User:" + name;
    try {
      Cluster cluster = boundCluster(user, context);
      KubernetesClient client = context.getClient();
      Set<AclBinding> acls = acls(user);
      Map<String, Double> quotas = quotas(user.getSpec().quotas);
      try (UserAdmin admin = new UserAdmin(brokerAccess.of(cluster, client))) {
        boolean credential = admin.hasCredential(name);
        if (status.credentialSource == null
            && (credential || !admin.acls(principal).isEmpty())
            && !"true".equals(user.getMetadata().getAnnotations().get(User.ADOPT_ANNOTATION))) {
          throw new Refused(
              "UserExists",
              "metadata.name: Kafka user %s has a credential or ACLs already; annotate the User with %s=true to manage it"
                  .formatted(name, User.ADOPT_ANNOTATION));
        }
        if (user.getSpec().authentication.type == UserSpec.AuthenticationType.TLS) {
          status.credentialSource = certificate(user, cluster, client);
          admin.deleteCredential(name); // a tls user has no password
        } else {
          PasswordSource password = password(user, client);
          if (!credential || !password.source().equals(status.credentialSource)) {
            admin.setPassword(name, password.password());
          }
          status.credentialSource = password.source();
        }
        // The credential is ours now: should the ACLs or quotas fail, updateErrorStatus (given
        // this resource) still records it, so that the next reconcile does not take it for
        // someone else's user.
        user.setStatus(status);
        admin.setAcls(principal, acls);
        admin.setQuotas(name, quotas);
      }
      status.username = name;
      status.secret = secretName(user);
      setReady(user, status, true, "Reconciled", "spec: the user is as declared");
      return update(user, before, status).rescheduleAfter(RECHECK);
    } catch (Refused e) {
      setReady(user, status, false, e.reason, e.getMessage());
      return update(user, before, status).rescheduleAfter(RECHECK);
    }
  }

  /** The password, and which version of which Secret it came from. */
  private record PasswordSource(String password, String source) {}

  /**
   * The password of the spec's Secret; else of the User's own Secret, made with a new password (and
   * kept with a {@code sasl.jaas.config} that matches it) when it has none.
   */
  private PasswordSource password(User user, KubernetesClient client) throws Refused {
    String ns = user.getMetadata().getNamespace();
    UserSpec.Password given = user.getSpec().authentication.password;
    if (given != null) {
      UserSpec.SecretKeyRef ref = given.valueFrom.secretKeyRef;
      Secret secret = secret(client, ns, ref.name);
      String password = SecretData.text(secret, ref.key);
      if (password == null || password.isEmpty()) {
        throw new Refused(
            "SecretNotFound",
            "spec.authentication.password.valueFrom.secretKeyRef: Secret %s/%s has no key %s"
                .formatted(ns, ref.name, ref.key));
      }
      return new PasswordSource(password, source(secret));
    }
    Secret own = secret(client, ns, secretName(user));
    String password = SecretData.text(own, "password");
    if (password == null || password.isEmpty()) {
      password = newPassword();
    }
    Map<String, String> data = new LinkedHashMap<>();
    data.put("password", SecretData.encoded(password));
    data.put(
        "sasl.jaas.config", SecretData.encoded(jaasConfig(user.getMetadata().getName(), password)));
    if (own == null || !data.equals(own.getData())) {
      own = writeSecret(client, user, data, own);
    }
    return new PasswordSource(password, source(own));
  }

  /**
   * Keeps the tls user's certificate in its Secret, as Strimzi's KafkaUser: {@code ca.crt} (the
   * clients CA's certificates), {@code user.crt} (with its CA), {@code user.key}, {@code user.p12}
   * and its {@code user.password}; issued again when it is not the issuing CA's (after a CA
   * renewal's switch) or comes within {@code renewalDays} of its expiry. Returns the Secret's
   * version.
   */
  private static String certificate(User user, Cluster cluster, KubernetesClient client)
      throws Refused {
    String clusterNs = cluster.getMetadata().getNamespace();
    String clusterName = cluster.getMetadata().getName();
    Secret ca = secret(client, clusterNs, CaSecret.secretName(clusterName, "clients"));
    Secret trust = secret(client, clusterNs, CaSecret.trustSecretName(clusterName, "clients"));
    if (ca == null || trust == null || SecretData.text(ca, CaSecret.CA_KEY) == null) {
      throw new Refused(
          "CertificatesMissing",
          "spec.clusterRef: Cluster %s/%s has no clients CA (Secret %s) to issue the certificate"
              .formatted(clusterNs, clusterName, CaSecret.secretName(clusterName, "clients")));
    }
    CertificateAuthority issuer =
        CaSecret.issuer(SecretData.texts(ca), ca.getMetadata().getAnnotations());
    List<X509Certificate> trusted = Pem.certificates(SecretData.text(trust, CaSecret.CA_CERT));
    ClusterSpec.CertificateAuthoritySpec spec =
        cluster.getSpec().clientsCa != null
            ? cluster.getSpec().clientsCa
            : new ClusterSpec.CertificateAuthoritySpec();
    Instant now = Instant.now();
    Secret own = secret(client, user.getMetadata().getNamespace(), secretName(user));
    String crt = SecretData.text(own, "user.crt");
    Map<String, String> data =
        own == null || own.getData() == null
            ? new LinkedHashMap<>()
            : new LinkedHashMap<>(own.getData());
    boolean keep = false;
    if (crt != null) {
      X509Certificate current = Pem.certificates(crt).get(0);
      boolean fromTrusted =
          issuer.signed(current)
              || CaSecret.step(ca.getMetadata().getAnnotations()) == CaSecret.Step.TRUSTING_BOTH
                  && trusted.stream()
                      .anyMatch(t -> new CertificateAuthority(t, null).signed(current));
      keep = fromTrusted && !issuer.expiresSoon(current, now, spec.renewalDays);
    }
    if (!keep) {
      CertificateAuthority.Issued issued =
          issuer.issue(
              user.getMetadata().getName(), List.of(), now, Duration.ofDays(spec.validityDays));
      String password = newPassword();
      data.clear();
      data.put("user.crt", SecretData.encoded(Pem.of(issued.certificate(), issuer.certificate())));
      data.put("user.key", SecretData.encoded(Pem.of(issued.key())));
      data.put("user.p12", Base64.getEncoder().encodeToString(pkcs12(issued, issuer, password)));
      data.put("user.password", SecretData.encoded(password));
    }
    data.put("ca.crt", SecretData.encoded(Pem.of(trusted)));
    if (own == null || !data.equals(own.getData())) {
      own = writeSecret(client, user, data, own);
    }
    return source(own);
  }

  /**
   * The certificate, its chain and its key as a PKCS12 keystore (the JDK's) under {@code password}.
   */
  private static byte[] pkcs12(
      CertificateAuthority.Issued issued, CertificateAuthority issuer, String password) {
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      store.setKeyEntry(
          "user",
          issued.key(),
          password.toCharArray(),
          new Certificate[] {issued.certificate(), issuer.certificate()});
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      store.store(out, password.toCharArray());
      return out.toByteArray();
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("the JDK writes PKCS12 keystores", e);
    }
  }

  private static Secret secret(KubernetesClient client, String namespace, String name) {
    return client.secrets().inNamespace(namespace).withName(name).get();
  }

  /** Creates or replaces the User's own Secret with {@code encoded} (base64 values). */
  private static Secret writeSecret(
      KubernetesClient client, User user, Map<String, String> encoded, Secret existing) {
    Secret secret =
        new SecretBuilder()
            .withNewMetadata()
            .withName(secretName(user))
            .withNamespace(user.getMetadata().getNamespace())
            .withLabels(
                Map.of(
                    "app.kubernetes.io/managed-by",
                    "tidelog-operator",
                    "tidelog.io/user",
                    user.getMetadata().getName()))
            .withOwnerReferences(
                new OwnerReferenceBuilder()
                    .withApiVersion(user.getApiVersion())
                    .withKind(user.getKind())
                    .withName(user.getMetadata().getName())
                    .withUid(user.getMetadata().getUid())
                    .withController(true)
                    .withBlockOwnerDeletion(true)
                    .build())
            .endMetadata()
            .withType("Opaque")
            .withData(encoded)
            .build();
    if (existing == null) {
      return client.resource(secret).create();
    }
    secret.getMetadata().setResourceVersion(existing.getMetadata().getResourceVersion());
    return client.resource(secret).update();
  }

  /** The JAAS config a kafka-clients client logs in with, as {@code sasl.jaas.config}. */
  static String jaasConfig(String user, String password) {
    return "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
        + escape(user)
        + "\" password=\""
        + escape(password)
        + "\";";
  }

  private static String escape(String value) {
    return value.replace("\\", "\\\\").replace("\"", "\\\"");
  }

  private static String newPassword() {
    StringBuilder password = new StringBuilder(PASSWORD_CHARS);
    for (int i = 0; i < PASSWORD_CHARS; i++) {
      password.append(ALPHABET.charAt(RANDOM.nextInt(ALPHABET.length())));
    }
    return password.toString();
  }

  /** The Secret of the User's credential: its own, named after it, or the one the spec names. */
  static String secretName(User user) {
    UserSpec.Password given = user.getSpec().authentication.password;
    return given != null ? given.valueFrom.secretKeyRef.name : user.getMetadata().getName();
  }

  private static String source(Secret secret) {
    return secret.getMetadata().getUid() + "/" + secret.getMetadata().getResourceVersion();
  }

  /** The ACL bindings the spec declares for {@code User:<name>}. */
  static Set<AclBinding> acls(User user) throws Refused {
    Set<AclBinding> bindings = new HashSet<>();
    UserSpec.Authorization authorization = user.getSpec().authorization;
    if (authorization == null || authorization.acls == null) {
      return bindings;
    }
    String principal = "User:" + user.getMetadata().getName();
    for (int i = 0; i < authorization.acls.size(); i++) {
      UserSpec.Acl acl = authorization.acls.get(i);
      String field = "spec.authorization.acls[%d]".formatted(i);
      ResourcePattern pattern = pattern(acl.resource, field);
      for (String op : acl.operations) {
        AclOperation operation = operation(op, field);
        bindings.add(
            new AclBinding(
                pattern,
                new AccessControlEntry(
                    principal,
                    acl.host == null ? "*" : acl.host,
                    operation,
                    acl.type == UserSpec.AclType.DENY
                        ? AclPermissionType.DENY
                        : AclPermissionType.ALLOW)));
      }
    }
    return bindings;
  }

  private static ResourcePattern pattern(UserSpec.AclResource resource, String field)
      throws Refused {
    PatternType patternType =
        resource.patternType == UserSpec.PatternKind.PREFIX
            ? PatternType.PREFIXED
            : PatternType.LITERAL;
    if (resource.type == UserSpec.ResourceKind.CLUSTER) {
      return new ResourcePattern(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL);
    }
    if (resource.name == null || resource.name.isEmpty()) {
      throw new Refused(
          "InvalidSpec", field + ".resource.name: a " + resource.type + " needs a name");
    }
    ResourceType type =
        switch (resource.type) {
          case TOPIC -> ResourceType.TOPIC;
          case GROUP -> ResourceType.GROUP;
          case TRANSACTIONAL_ID -> ResourceType.TRANSACTIONAL_ID;
          case CLUSTER -> ResourceType.CLUSTER;
        };
    return new ResourcePattern(type, resource.name, patternType);
  }

  /** Kafka's operation of {@code name}, as kafka-acls spells it (Read, ClusterAction, ...). */
  private static AclOperation operation(String name, String field) throws Refused {
    String key = name.replace("_", "").toLowerCase(Locale.ROOT);
    for (AclOperation operation : AclOperation.values()) {
      if (operation != AclOperation.UNKNOWN
          && operation != AclOperation.ANY
          && operation.name().replace("_", "").toLowerCase(Locale.ROOT).equals(key)) {
        return operation;
      }
    }
    throw new Refused("InvalidSpec", field + ".operations: " + name + " is not a Kafka operation");
  }

  /** The spec's quotas under Kafka's names. */
  static Map<String, Double> quotas(UserSpec.Quotas quotas) {
    Map<String, Double> values = new HashMap<>();
    if (quotas == null) {
      return values;
    }
    if (quotas.producerByteRate != null) {
      values.put("producer_byte_rate", quotas.producerByteRate.doubleValue());
    }
    if (quotas.consumerByteRate != null) {
      values.put("consumer_byte_rate", quotas.consumerByteRate.doubleValue());
    }
    if (quotas.requestPercentage != null) {
      values.put("request_percentage", quotas.requestPercentage);
    }
    if (quotas.controllerMutationRate != null) {
      values.put("controller_mutation_rate", quotas.controllerMutationRate);
    }
    return values;
  }

  private static Cluster boundCluster(User user, Context<User> context) throws Refused {
    ResourceID ref = clusterId(user);
    String clusterName = ref.getNamespace().orElseThrow() + "/" + ref.getName();
    Optional<Cluster> cluster = context.getSecondaryResource(Cluster.class);
    if (cluster.isEmpty()) {
      throw new Refused(
          "ClusterNotFound", "spec.clusterRef: Cluster " + clusterName + " does not exist");
    }
    if (!cluster.get().accepts(user.getMetadata().getNamespace())) {
      throw new Refused(
          "Forbidden",
          "spec.clusterRef: Cluster %s does not accept Users from namespace %s (its spec.topicNamespaces)"
              .formatted(clusterName, user.getMetadata().getNamespace()));
    }
    if (cluster.get().getStatus() == null || cluster.get().getStatus().bootstrapServers == null) {
      throw new Refused(
          "ClusterNotReady",
          "spec.clusterRef: Cluster " + clusterName + " has no bootstrap address yet");
    }
    return cluster.get();
  }

  @Override
  public ErrorStatusUpdateControl<User> updateErrorStatus(
      User user, Context<User> context, Exception e) {
    LOG.warn(
        "User {}/{}: {}",
        user.getMetadata().getNamespace(),
        user.getMetadata().getName(),
        e.toString());
    UserStatus status = copy(user.getStatus());
    setReady(user, status, false, "ClusterUnreachable", "spec.clusterRef: " + e.getMessage());
    user.setStatus(status);
    return ErrorStatusUpdateControl.patchStatus(user);
  }

  @Override
  public DeleteControl cleanup(User user, Context<User> context) {
    UserStatus status = user.getStatus();
    Optional<Cluster> cluster = context.getSecondaryResource(Cluster.class);
    if (status == null || status.credentialSource == null || cluster.isEmpty()) {
      // nothing of ours to remove: never applied, or gone with its Cluster
      return DeleteControl.defaultDelete();
    }
    String name = user.getMetadata().getName();
    try (UserAdmin admin = new UserAdmin(brokerAccess.of(cluster.get(), context.getClient()))) {
      admin.deleteCredential(name);
      admin.setAcls("User:" + name, Set.of());
      admin.setQuotas(name, Map.of());
      return DeleteControl.defaultDelete();
    } catch (Exception e) {
      Instant deleted = Instant.parse(user.getMetadata().getDeletionTimestamp());
      if (clock.instant().isAfter(deleted.plus(releaseAfter))) {
        LOG.warn(
            "Releasing User {}/{} with its credential and ACLs left: its cluster did not answer for {} s",
            user.getMetadata().getNamespace(),
            name,
            releaseAfter.toSeconds(),
            e);
        return DeleteControl.defaultDelete();
      }
      return DeleteControl.noFinalizerRemoval().rescheduleAfter(RECHECK.toMillis());
    }
  }

  private static ResourceID clusterId(User user) {
    var ref = user.getSpec().clusterRef;
    return new ResourceID(
        ref.name, ref.namespace != null ? ref.namespace : user.getMetadata().getNamespace());
  }

  private static void setReady(
      User user, UserStatus status, boolean ready, String reason, String message) {
    status.observedGeneration = user.getMetadata().getGeneration();
    Conditions.set(
        status.conditions, Conditions.READY, ready, reason, message, status.observedGeneration);
  }

  /** Patches the status when it differs from {@code before}, the one the reconcile began with. */
  private static UpdateControl<User> update(User user, UserStatus before, UserStatus status) {
    if (Serialization.asJson(status).equals(Serialization.asJson(before))) {
      return UpdateControl.noUpdate();
    }
    user.setStatus(status);
    return UpdateControl.patchStatus(user);
  }

  private static UserStatus copy(UserStatus status) {
    return status == null
        ? new UserStatus()
        : Serialization.unmarshal(Serialization.asJson(status), UserStatus.class);
  }
}
