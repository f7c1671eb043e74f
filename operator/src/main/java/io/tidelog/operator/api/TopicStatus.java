package io.tidelog.operator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;

/** What the operator last saw of a {@link Topic}. */
public class TopicStatus {
  @JsonPropertyDescription("Ready, with a reason when it is not.")
  public List<Condition> conditions = new ArrayList<>();

  @JsonPropertyDescription("The metadata.generation that the status describes.")
  public Long observedGeneration;

  @JsonPropertyDescription("The Kafka topic's name.")
  public String topicName;

  @JsonPropertyDescription("The Kafka topic's id.")
  public String topicId;

  @JsonPropertyDescription("The topic's partitions.")
  public Integer partitions;

  @JsonPropertyDescription("The topic's replication factor.")
  public Integer replicas;
}
