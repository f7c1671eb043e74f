package io.tidelog.broker.cluster;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.Uuid;

/**
 * A topic as the cluster knows it, stored under {@code topics/<name>}.
 *
 * @param assignment the replicas of each partition, by broker id; the first is the preferred leader
 * @param configs the topic-level config overrides, under Kafka's topic config names
 * @param reassignments the moves in progress, by partition; while one lasts, its partition's
 *     replicas in {@code assignment} are the target followed by the replicas it leaves
 * @param modRevision the etcd revision that wrote it; updates compare it
 */
public record TopicMetadata(
    String name,
    Uuid topicId,
    List<List<Integer>> assignment,
    Map<String, String> configs,
    Map<Integer, PartitionReassignment> reassignments,
    long modRevision) {
  public TopicMetadata {
    assignment = assignment.stream().map(List::copyOf).toList();
    configs = Map.copyOf(configs);
    reassignments = Map.copyOf(reassignments);
  }

  /** A topic with no move in progress. */
  public TopicMetadata(
      String name,
      Uuid topicId,
      List<List<Integer>> assignment,
      Map<String, String> configs,
      long modRevision) {
    this(name, topicId, assignment, configs, Map.of(), modRevision);
  }

  public int partitions() {
    return assignment.size();
  }

  public List<Integer> replicas(int partition) {
    return assignment.get(partition);
  }

  /** The replication factor: partition 0's replicas, less those a move of it is leaving. */
  public int replicationFactor() {
    return reassignment(0).map(move -> move.target(replicas(0))).orElse(replicas(0)).size();
  }

  /** The move of {@code partition} in progress, if any. */
  public Optional<PartitionReassignment> reassignment(int partition) {
    return Optional.ofNullable(reassignments.get(partition));
  }

  public TopicMetadata withConfigs(Map<String, String> newConfigs) {
    return new TopicMetadata(name, topicId, assignment, newConfigs, reassignments, modRevision);
  }

  TopicMetadata withAssignment(List<List<Integer>> newAssignment) {
    return new TopicMetadata(name, topicId, newAssignment, configs, reassignments, modRevision);
  }

  /**
   * This topic with {@code partition}'s replicas set to {@code replicas} and its move to {@code
   * reassignment}, or no move when it is null.
   */
  TopicMetadata withReplicas(
      int partition, List<Integer> replicas, PartitionReassignment reassignment) {
    List<List<Integer>> newAssignment = new ArrayList<>(assignment);
    newAssignment.set(partition, replicas);
    Map<Integer, PartitionReassignment> moves = new HashMap<>(reassignments);
    if (reassignment == null) {
      moves.remove(partition);
    } else {
      moves.put(partition, reassignment);
    }
    return new TopicMetadata(name, topicId, newAssignment, configs, moves, modRevision);
  }

  JsonObject toJson() {
    JsonArray replicas = new JsonArray();
    assignment.forEach(r -> replicas.add(new JsonArray(r)));
    JsonObject json =
        new JsonObject()
            .put("topicId", topicId.toString())
            .put("assignment", replicas)
            .put("configs", new JsonObject(Map.copyOf(configs)));
    if (!reassignments.isEmpty()) {
      JsonObject moves = new JsonObject();
      reassignments.forEach((p, move) -> moves.put(String.valueOf(p), move.toJson()));
      json.put("reassignments", moves);
    }
    return json;
  }

  static TopicMetadata fromJson(String name, JsonObject json, long modRevision) {
    List<List<Integer>> assignment = new ArrayList<>();
    json.getJsonArray("assignment")
        .forEach(r -> assignment.add(PartitionState.ints((JsonArray) r)));
    Map<String, String> configs = new HashMap<>();
    json.getJsonObject("configs").forEach(e -> configs.put(e.getKey(), (String) e.getValue()));
    Map<Integer, PartitionReassignment> moves = new HashMap<>();
    json.getJsonObject("reassignments", new JsonObject())
        .forEach(
            e ->
                moves.put(
                    Integer.parseInt(e.getKey()),
                    PartitionReassignment.fromJson((JsonObject) e.getValue())));
    return new TopicMetadata(
        name, Uuid.fromString(json.getString("topicId")), assignment, configs, moves, modRevision);
  }
}
