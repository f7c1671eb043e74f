package io.tidelog.broker.security;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.internals.PluginMetricsImpl;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;

/**
 * Whether a request may do what it asks, decided by Kafka's own {@link StandardAuthorizer} (the
 * authorizer of Kafka's KRaft brokers) over the cluster's ACLs: LITERAL and PREFIXED patterns and
 * the wildcard, DENY before ALLOW, hosts, the operations that imply DESCRIBE and DESCRIBE_CONFIGS,
 * {@code super.users} and {@code allow.everyone.if.no.acl.found}. The ACLs come from the cluster
 * metadata, replaced whole or changed one by one as it changes.
 *
 * <p>With no {@code authorizer.class.name} there is no authorizer, and everything is allowed, as in
 * Kafka. Thread-safe: the authorizer publishes immutable snapshots of its ACLs.
 */
public final class Authorization {
  /** Kafka's name for the cluster resource. */
  public static final String CLUSTER_NAME = "kafka-cluster";

  private static final Map<ResourceType, Set<AclOperation>> SUPPORTED =
      Map.of(
          ResourceType.TOPIC,
          EnumSet.of(
              AclOperation.READ,
              AclOperation.WRITE,
              AclOperation.CREATE,
              AclOperation.DESCRIBE,
              AclOperation.DELETE,
              AclOperation.ALTER,
              AclOperation.DESCRIBE_CONFIGS,
              AclOperation.ALTER_CONFIGS),
          ResourceType.GROUP,
          EnumSet.of(AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE),
          ResourceType.CLUSTER,
          EnumSet.of(
              AclOperation.CREATE,
              AclOperation.CLUSTER_ACTION,
              AclOperation.DESCRIBE_CONFIGS,
              AclOperation.ALTER_CONFIGS,
              AclOperation.IDEMPOTENT_WRITE,
              AclOperation.ALTER,
              AclOperation.DESCRIBE),
          ResourceType.TRANSACTIONAL_ID,
          EnumSet.of(AclOperation.DESCRIBE, AclOperation.WRITE),
          ResourceType.DELEGATION_TOKEN,
          EnumSet.of(AclOperation.DESCRIBE),
          ResourceType.USER,
          EnumSet.of(AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS));

  private final StandardAuthorizer authorizer;
  private final Counter decisions;
  private long loadedRevision = -1;

  private Authorization(StandardAuthorizer authorizer, Counter decisions) {
    this.authorizer = authorizer;
    this.decisions = decisions;
  }

  /** No authorizer: everything is allowed, and no decision is counted. */
  public static Authorization none(PrometheusRegistry registry) {
    return new Authorization(null, decisions(registry));
  }

  /**
   * Kafka's StandardAuthorizer, configured with {@code super.users} and {@code
   * allow.everyone.if.no.acl.found} from {@code configs}, with no ACLs until {@link #load}; its
   * decisions are counted in {@code tidelog_authorizations_total{result}}. (Its own Kafka metrics
   * stay in a private registry: StandardAuthorizer needs one to run.)
   */
  public static Authorization standard(Map<String, ?> configs, PrometheusRegistry registry) {
    StandardAuthorizer authorizer = new StandardAuthorizer();
    authorizer.configure(configs);
    authorizer.withPluginMetrics(new PluginMetricsImpl(new Metrics(), Map.of()));
    return new Authorization(authorizer, decisions(registry));
  }

  private static Counter decisions(PrometheusRegistry registry) {
    Counter decisions =
        Counter.builder()
            .withoutExemplars()
            .name("tidelog_authorizations_total")
            .help("Authorization decisions on requests, by result (allowed, denied)")
            .labelNames("result")
            .register(registry);
    decisions.initLabelValues("allowed");
    decisions.initLabelValues("denied");
    return decisions;
  }

  public boolean enabled() {
    return authorizer != null;
  }

  /**
   * Replaces every ACL with {@code acls}, as of the metadata's {@code revision}; a replacement
   * older than the last one applied is ignored, so callers on different threads cannot roll the
   * ACLs back. ACLs change rarely, and the authorizer indexes a snapshot in one pass.
   */
  public synchronized void load(long revision, Map<Uuid, StandardAcl> acls) {
    if (authorizer == null || revision < loadedRevision) {
      return;
    }
    loadedRevision = revision;
    authorizer.loadSnapshot(new HashMap<>(acls));
    authorizer.completeInitialLoad();
  }

  /** The ACLs that match {@code filter}; none without an authorizer. */
  public Iterable<AclBinding> acls(AclBindingFilter filter) {
    return authorizer == null ? List.of() : authorizer.acls(filter);
  }

  /**
   * Whether the request may do {@code operation} on the resource {@code type} named {@code name}.
   */
  public boolean allowed(
      AuthorizableRequestContext context, AclOperation operation, ResourceType type, String name) {
    if (authorizer == null) {
      return true;
    }
    boolean allowed = decide(context, operation, type, name, true);
    decisions.labelValues(allowed ? "allowed" : "denied").inc();
    return allowed;
  }

  /**
   * Whether the request may do {@code operation} on some resource of {@code type}, by any ACL that
   * could allow it and none that denies it everywhere: Kafka's {@code authorizeByResourceType}, by
   * which a producer with WRITE on any topic may be idempotent.
   */
  public boolean allowedOnSome(
      AuthorizableRequestContext context, AclOperation operation, ResourceType type) {
    return authorizer == null
        || authorizer.authorizeByResourceType(context, operation, type)
            == AuthorizationResult.ALLOWED;
  }

  /** Whether the request may do {@code operation} on the cluster. */
  public boolean allowedOnCluster(AuthorizableRequestContext context, AclOperation operation) {
    return allowed(context, operation, ResourceType.CLUSTER, CLUSTER_NAME);
  }

  /**
   * Whether the request may do {@code operation} on a resource of {@code type}, by name, asking the
   * authorizer once per name: for requests that name a topic in many partitions.
   */
  public Predicate<String> on(
      AuthorizableRequestContext context, AclOperation operation, ResourceType type) {
    Map<String, Boolean> decided = new HashMap<>();
    return name -> decided.computeIfAbsent(name, n -> allowed(context, operation, type, n));
  }

  /**
   * Whether the request may create a topic: CREATE on the cluster, or on the topic, as Kafka's
   * controller and its auto-creation check.
   */
  public Predicate<String> mayCreateTopics(AuthorizableRequestContext context) {
    boolean onCluster = allowedOnCluster(context, AclOperation.CREATE);
    Predicate<String> onTopic = on(context, AclOperation.CREATE, ResourceType.TOPIC);
    return name -> onCluster || onTopic.test(name);
  }

  /**
   * The operations the request may do on the resource, as the 32-bit field that Metadata,
   * DescribeCluster and DescribeGroups return when asked: every operation Kafka supports on the
   * resource type, of those the authorizer allows.
   */
  public int authorizedOperations(
      AuthorizableRequestContext context, ResourceType type, String name) {
    Set<Byte> codes = new HashSet<>();
    for (AclOperation operation : SUPPORTED.get(type)) {
      if (authorizer == null || decide(context, operation, type, name, false)) {
        codes.add(operation.code());
      }
    }
    return Utils.to32BitField(codes);
  }

  /** The authorizer's decision; {@code logged} for a request's check, not a listing of rights. */
  private boolean decide(
      AuthorizableRequestContext context,
      AclOperation operation,
      ResourceType type,
      String name,
      boolean logged) {
    Action action =
        new Action(
            operation, new ResourcePattern(type, name, PatternType.LITERAL), 1, logged, logged);
    return authorizer.authorize(context, List.of(action)).get(0) == AuthorizationResult.ALLOWED;
  }
}
