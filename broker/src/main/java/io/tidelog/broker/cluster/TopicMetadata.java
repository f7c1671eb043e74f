package io.tidelog.broker.cluster;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.Uuid;

/**
 * A topic as the cluster knows it, stored under {@code topics/<name>}.
 *
 * @param assignment the replicas of each partition, by broker id; the first is the preferred leader
 * @param configs the topic-level config overrides, under Kafka's topic config names
 * @param modRevision the etcd revision that wrote it; updates compare it
 */
public record TopicMetadata(
    String name,
    Uuid topicId,
    List<List<Integer>> assignment,
    Map<String, String> configs,
    long modRevision) {
  public TopicMetadata {
    assignment = assignment.stream().map(List::copyOf).toList();
    configs = Map.copyOf(configs);
  }

  public int partitions() {
    return assignment.size();
  }

  public List<Integer> replicas(int partition) {
    return assignment.get(partition);
  }

  public TopicMetadata withConfigs(Map<String, String> newConfigs) {
    return new TopicMetadata(name, topicId, assignment, newConfigs, modRevision);
  }

  TopicMetadata withAssignment(List<List<Integer>> newAssignment) {
    return new TopicMetadata(name, topicId, newAssignment, configs, modRevision);
  }

  JsonObject toJson() {
    JsonArray replicas = new JsonArray();
    assignment.forEach(r -> replicas.add(new JsonArray(r)));
    return new JsonObject()
        .put("topicId", topicId.toString())
        .put("assignment", replicas)
        .put("configs", new JsonObject(Map.copyOf(configs)));
  }

  static TopicMetadata fromJson(String name, JsonObject json, long modRevision) {
    List<List<Integer>> assignment = new ArrayList<>();
    json.getJsonArray("assignment")
        .forEach(r -> assignment.add(PartitionState.ints((JsonArray) r)));
    Map<String, String> configs = new java.util.HashMap<>();
    json.getJsonObject("configs").forEach(e -> configs.put(e.getKey(), (String) e.getValue()));
    return new TopicMetadata(
        name, Uuid.fromString(json.getString("topicId")), assignment, configs, modRevision);
  }
}
