package io.tidelog.operator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.Map;

/** What a {@link Topic} should be. */
public class TopicSpec {
  @Required
  @ValidationRule(value = "self == oldSelf", message = "clusterRef is immutable")
  @JsonPropertyDescription("The Cluster that holds the topic.")
  public ClusterRef clusterRef;

  @ValidationRule(value = "self == oldSelf", message = "topicName is immutable")
  @Pattern("^[a-zA-Z0-9._-]{1,249}$")
  @JsonPropertyDescription("The Kafka topic's name, when it differs from metadata.name.")
  public String topicName;

  @Min(1)
  @JsonPropertyDescription("Partitions; the broker's num.partitions when unset. It can grow only.")
  public Integer partitions;

  @Min(1)
  @Max(32767)
  @JsonPropertyDescription(
      "The replication factor; the broker's default.replication.factor when unset. A change"
          + " moves replicas (reassignment).")
  public Integer replicas;

  @JsonPropertyDescription(
      "Topic configs under Kafka's names, such as retention.ms. A key removed from here is reset"
          + " to the broker's default.")
  public Map<String, String> config;

  /** A reference to a Cluster. */
  public static class ClusterRef {
    @Required
    @JsonPropertyDescription("The Cluster's name.")
    public String name;

    @JsonPropertyDescription("The Cluster's namespace; the Topic's own when unset.")
    public String namespace;
  }
}
