package io.tidelog.broker.protocol;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.List;
import java.util.Set;

/**
 * Client traffic per topic, counted where the produce and fetch handlers answer, as Kafka's {@code
 * BrokerTopicMetrics} does: every partition entry of a request counts once, a failed one also as a
 * failure; bytes and messages count only what was appended or returned. Followers' fetches count as
 * requests, and their bytes as replication traffic, not as a topic's bytes out.
 */
public final class TopicMetrics {
  private final Counter bytesIn;
  private final Counter messagesIn;
  private final Counter bytesOut;
  private final Counter replicationBytesOut;
  private final Counter produceRequests;
  private final Counter produceFailures;
  private final Counter fetchRequests;
  private final Counter fetchFailures;

  public TopicMetrics(PrometheusRegistry registry) {
    bytesIn = perTopic("tidelog_topic_bytes_in_total", "Bytes appended by producers", registry);
    messagesIn =
        perTopic("tidelog_topic_messages_in_total", "Records appended by producers", registry);
    bytesOut =
        perTopic("tidelog_topic_bytes_out_total", "Record bytes returned to consumers", registry);
    produceRequests =
        perTopic(
            "tidelog_topic_produce_requests_total",
            "Partition entries of Produce requests",
            registry);
    produceFailures =
        perTopic(
            "tidelog_topic_produce_requests_failed_total",
            "Partition entries of Produce requests answered with an error",
            registry);
    fetchRequests =
        perTopic(
            "tidelog_topic_fetch_requests_total",
            "Partition entries of Fetch requests, from consumers and followers",
            registry);
    fetchFailures =
        perTopic(
            "tidelog_topic_fetch_requests_failed_total",
            "Partition entries of Fetch requests answered with an error",
            registry);
    replicationBytesOut =
        Counter.builder()
            .withoutExemplars()
            .name("tidelog_replication_bytes_out_total")
            .help("Record bytes returned to follower replicas")
            .register(registry);
  }

  /**
   * Forgets the series of topics not in {@code topics}, as Kafka removes a deleted topic's metrics;
   * a topic created again under the name counts from zero.
   */
  public void retainTopics(Set<String> topics) {
    for (Counter counter :
        List.of(
            bytesIn,
            messagesIn,
            bytesOut,
            produceRequests,
            produceFailures,
            fetchRequests,
            fetchFailures)) {
      counter.removeIf(labels -> !topics.contains(labels.get(0)));
    }
  }

  private static Counter perTopic(String name, String help, PrometheusRegistry registry) {
    return Counter.builder()
        .withoutExemplars()
        .name(name)
        .help(help)
        .labelNames("topic")
        .register(registry);
  }

  void produced(String topic, int bytes, int records) {
    produceFailures.initLabelValues(topic); // 0 from the start, so that rate() sees the first one
    produceRequests.labelValues(topic).inc();
    bytesIn.labelValues(topic).inc(bytes);
    messagesIn.labelValues(topic).inc(records);
  }

  void produceFailed(String topic) {
    produceRequests.labelValues(topic).inc();
    produceFailures.labelValues(topic).inc();
  }

  void fetched(String topic, int bytes, boolean byFollower) {
    fetchFailures.initLabelValues(topic);
    fetchRequests.labelValues(topic).inc();
    if (byFollower) {
      replicationBytesOut.inc(bytes);
    } else {
      bytesOut.labelValues(topic).inc(bytes);
    }
  }

  void fetchFailed(String topic) {
    fetchRequests.labelValues(topic).inc();
    fetchFailures.labelValues(topic).inc();
  }
}
