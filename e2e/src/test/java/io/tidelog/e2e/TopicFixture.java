package io.tidelog.e2e;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tidelog.operator.api.Conditions;
import io.tidelog.operator.api.Topic;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;

/**
 * Topic resources in one namespace of the mock API, bound to Cluster "dev" there, and what the real
 * cluster says of their topics.
 */
record TopicFixture(KubernetesClient client, Admin admin, String namespace) {
  static final Duration READY_WITHIN = Duration.ofSeconds(60);

  /** Creates the Topic, or replaces the spec of an existing one. */
  Topic apply(String name, String spec) {
    return apply(name, spec, namespace, "dev");
  }

  Topic apply(String name, String spec, String clusterNamespace, String clusterName) {
    Topic topic = Resources.topic(namespace, name, spec, clusterNamespace, clusterName);
    if (get(name) == null) {
      return client.resource(topic).create();
    }
    return edit(
        name,
        existing -> {
          existing.setSpec(topic.getSpec());
          return existing;
        });
  }

  /** Changes a Topic, retrying past conflicts with the operator's concurrent writes. */
  Topic edit(String name, java.util.function.UnaryOperator<Topic> change) {
    return Resources.edit(
        client.resources(Topic.class).inNamespace(namespace).withName(name), change);
  }

  Topic get(String name) {
    return client.resources(Topic.class).inNamespace(namespace).withName(name).get();
  }

  /** Waits until the Topic is Ready for its current generation, and returns it. */
  Topic awaitReady(String name, Duration within) {
    await()
        .atMost(within)
        .until(
            () -> {
              Topic now = get(name);
              return now.getStatus() != null
                  && Conditions.isTrue(now.getStatus().conditions, Conditions.READY)
                  && now.getMetadata().getGeneration().equals(now.getStatus().observedGeneration);
            });
    return get(name);
  }

  Topic awaitReady(Topic topic) {
    return awaitReady(topic.getMetadata().getName(), READY_WITHIN);
  }

  /** Waits until the Topic's Ready condition has {@code reason}, and returns the condition. */
  Condition awaitCondition(String name, String reason) {
    await().atMost(READY_WITHIN).until(() -> reason(get(name)).equals(reason));
    return Conditions.find(get(name).getStatus().conditions, Conditions.READY).orElseThrow();
  }

  static String reason(Topic topic) {
    return topic == null || topic.getStatus() == null
        ? ""
        : Conditions.find(topic.getStatus().conditions, Conditions.READY)
            .map(Condition::getReason)
            .orElse("");
  }

  TopicDescription describe(String name) throws Exception {
    return admin.describeTopics(List.of(name)).allTopicNames().get(30, TimeUnit.SECONDS).get(name);
  }

  /** The configs set on the topic itself. */
  Map<String, String> ownConfigs(String name) throws Exception {
    ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, name);
    Config config =
        admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource);
    Map<String, String> own = new TreeMap<>();
    for (ConfigEntry entry : config.entries()) {
      if (entry.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG) {
        own.put(entry.name(), entry.value());
      }
    }
    return own;
  }
}
