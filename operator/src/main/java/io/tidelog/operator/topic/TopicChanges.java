package io.tidelog.operator.topic;

import io.tidelog.operator.api.TopicSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.RetriableException;

/**
 * Brings a Kafka topic to what its spec declares. Everything that would be refused is checked
 * before anything changes, so a refused spec changes nothing.
 */
final class TopicChanges {
  /** A spec that the operator will not apply; the reason is the condition's reason. */
  static final class Refused extends Exception {
    final String reason;

    Refused(String reason, String message) {
      super(message);
      this.reason = reason;
    }
  }

  private TopicChanges() {}

  static TopicState create(TopicAdmin admin, String name, TopicSpec spec) throws Exception {
    NewTopic topic =
        new NewTopic(
                name,
                Optional.ofNullable(spec.partitions),
                Optional.ofNullable(spec.replicas).map(Integer::shortValue))
            .configs(spec.config == null ? Map.of() : spec.config);
    try {
      return admin.create(topic);
    } catch (ApiException e) {
      throw refusedUnlessRetriable("spec", e);
    }
  }

  static TopicState update(TopicAdmin admin, String name, TopicSpec spec, TopicDescription current)
      throws Exception {
    TopicState state = TopicState.of(current);
    if (spec.partitions != null && spec.partitions < state.partitions()) {
      throw new Refused(
          "NotSupported",
          "spec.partitions: cannot decrease from %d to %d; a Kafka topic cannot lose partitions"
              .formatted(state.partitions(), spec.partitions));
    }
    if (spec.replicas != null && spec.replicas != state.replicas()) {
      throw new Refused(
          "NotSupported",
          "spec.replicas: changing the replication factor from %d to %d is not supported yet"
              .formatted(state.replicas(), spec.replicas));
    }
    List<AlterConfigOp> changes = configChanges(spec.config, dynamicConfigs(admin.configs(name)));
    try {
      if (!changes.isEmpty()) {
        admin.alterConfigs(name, changes);
      }
    } catch (ApiException e) {
      throw refusedUnlessRetriable("spec.config", e);
    }
    if (spec.partitions == null || spec.partitions == state.partitions()) {
      return state;
    }
    try {
      admin.growPartitions(name, spec.partitions);
    } catch (ApiException e) {
      throw refusedUnlessRetriable("spec.partitions", e);
    }
    return new TopicState(state.topicId(), spec.partitions, state.replicas());
  }

  /**
   * The changes that make a topic's own configs exactly {@code desired}: a key set to another value
   * is set, and a key set on the topic but no longer declared is deleted, back to the default.
   */
  static List<AlterConfigOp> configChanges(
      Map<String, String> desired, Map<String, String> current) {
    Map<String, String> wanted = desired == null ? Map.of() : new TreeMap<>(desired);
    List<AlterConfigOp> changes = new ArrayList<>();
    wanted.forEach(
        (key, value) -> {
          if (!value.equals(current.get(key))) {
            changes.add(new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET));
          }
        });
    new TreeMap<>(current)
        .keySet().stream()
            .filter(key -> !wanted.containsKey(key))
            .forEach(
                key ->
                    changes.add(
                        new AlterConfigOp(new ConfigEntry(key, ""), AlterConfigOp.OpType.DELETE)));
    return changes;
  }

  /** The configs set on the topic itself, as opposed to broker defaults. */
  private static Map<String, String> dynamicConfigs(Config config) {
    Map<String, String> own = new TreeMap<>();
    for (ConfigEntry entry : config.entries()) {
      if (entry.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG) {
        own.put(entry.name(), entry.value());
      }
    }
    return own;
  }

  private static Exception refusedUnlessRetriable(String field, ApiException e) {
    return e instanceof RetriableException
        ? e
        : new Refused("InvalidSpec", field + ": " + e.getMessage());
  }
}
