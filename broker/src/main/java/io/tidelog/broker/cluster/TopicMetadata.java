package io.tidelog.broker.cluster;

import java.util.Map;
import org.apache.kafka.common.Uuid;

/**
 * A topic as the cluster knows it.
 *
 * @param configs the topic-level config overrides, under Kafka's topic config names
 */
public record TopicMetadata(
    String name, Uuid topicId, int partitions, Map<String, String> configs) {
  public TopicMetadata {
    configs = Map.copyOf(configs);
  }
}
