package io.tidelog.operator.api;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;

/** What a {@link User} should be: Strimzi's KafkaUser, in Tidelog's names. */
public class UserSpec {
  @Required
  @ValidationRule(value = "self == oldSelf", message = "clusterRef is immutable")
  @JsonPropertyDescription(
      "The Cluster of the user; one in another namespace must list the User's namespace in its"
          + " spec.topicNamespaces.")
  public TopicSpec.ClusterRef clusterRef;

  @Required
  @JsonPropertyDescription("How the user authenticates.")
  public Authentication authentication;

  @JsonPropertyDescription(
      "The user's ACLs, kept exactly: one removed here is removed from the cluster.")
  public Authorization authorization;

  @JsonPropertyDescription("The user's quotas, as kafka-configs --entity-type users sets them.")
  public Quotas quotas;

  /** How a user authenticates. */
  public static class Authentication {
    @Required
    @JsonPropertyDescription(
        "scram-sha-512: a SCRAM-SHA-512 credential; tls: a client certificate from the"
            + " Cluster's clients CA, CN=<name>, for a listener of authentication type tls.")
    public AuthenticationType type;

    @JsonPropertyDescription(
        "scram-sha-512: the password, from a key of a Secret in the User's namespace; the"
            + " operator makes one when unset. Changing the Secret changes the credential.")
    public Password password;
  }

  /** The ways a user authenticates. */
  public enum AuthenticationType {
    @JsonProperty("scram-sha-512")
    SCRAM_SHA_512,
    @JsonProperty("tls")
    TLS
  }

  /** A password's source. */
  public static class Password {
    @Required public ValueFrom valueFrom;
  }

  /** A value from a Secret. */
  public static class ValueFrom {
    @Required public SecretKeyRef secretKeyRef;
  }

  /** A key of a Secret. */
  public static class SecretKeyRef {
    @Required public String name;
    @Required public String key;
  }

  /** ACLs. */
  public static class Authorization {
    @Required
    @JsonPropertyDescription("simple: Kafka's ACLs.")
    public ClusterSpec.AuthorizationType type;

    public List<Acl> acls;
  }

  /** One ACL rule of the user: operations on a resource, allowed or denied, from a host. */
  public static class Acl {
    @Required public AclResource resource;

    @Required
    @JsonPropertyDescription(
        "Kafka's operations: Read, Write, Create, Delete, Alter, Describe, ClusterAction,"
            + " AlterConfigs, DescribeConfigs, IdempotentWrite, All.")
    public List<String> operations;

    @Default("\"*\"")
    @JsonPropertyDescription("The host the rule applies to; * for any.")
    public String host = "*";

    @Default("allow")
    @JsonPropertyDescription("allow or deny.")
    public AclType type = AclType.ALLOW;
  }

  /** allow or deny. */
  public enum AclType {
    @JsonProperty("allow")
    ALLOW,
    @JsonProperty("deny")
    DENY
  }

  /** What an ACL is on. */
  public static class AclResource {
    @Required
    @JsonPropertyDescription("topic, group, cluster or transactionalId.")
    public ResourceKind type;

    @JsonPropertyDescription("The resource's name, or its prefix; * for all. Not for cluster.")
    public String name;

    @Default("literal")
    @JsonPropertyDescription("literal or prefix.")
    public PatternKind patternType = PatternKind.LITERAL;
  }

  /** The kinds of resources an ACL names. */
  public enum ResourceKind {
    @JsonProperty("topic")
    TOPIC,
    @JsonProperty("group")
    GROUP,
    @JsonProperty("cluster")
    CLUSTER,
    @JsonProperty("transactionalId")
    TRANSACTIONAL_ID
  }

  /** How an ACL's resource name matches. */
  public enum PatternKind {
    @JsonProperty("literal")
    LITERAL,
    @JsonProperty("prefix")
    PREFIX
  }

  /** Quotas, under Kafka's names. */
  public static class Quotas {
    @Min(0)
    @JsonPropertyDescription("producer_byte_rate: bytes per second.")
    public Long producerByteRate;

    @Min(0)
    @JsonPropertyDescription("consumer_byte_rate: bytes per second.")
    public Long consumerByteRate;

    @Min(0)
    @JsonPropertyDescription("request_percentage: percent of a request thread's time.")
    public Double requestPercentage;

    @Min(0)
    @JsonPropertyDescription("controller_mutation_rate: partitions created or deleted per second.")
    public Double controllerMutationRate;
  }
}
