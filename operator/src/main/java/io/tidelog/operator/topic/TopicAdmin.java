package io.tidelog.operator.topic;

import io.tidelog.operator.brokers.BrokerAccess;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * The topic calls of one cluster, each a blocking call for a reconciler thread, coalesced across
 * threads into few Admin requests by a {@link Batcher} per method. Thread-safe.
 */
final class TopicAdmin implements AutoCloseable {
  private static final long LINGER_MS = 5;
  private static final int MAX_BATCH = 500;
  private static final Duration API_TIMEOUT = Duration.ofSeconds(15);

  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

  private final Admin admin;
  private final Batcher<String, Void, TopicDescription> describeTopics;
  private final Batcher<ConfigResource, Void, Config> describeConfigs;
  private final Batcher<String, NewTopic, TopicState> createTopics;
  private final Batcher<String, NewPartitions, Void> createPartitions;
  private final Batcher<ConfigResource, Collection<AlterConfigOp>, Void> alterConfigs;
  private final Batcher<String, Void, Void> deleteTopics;

  TopicAdmin(BrokerAccess access, ScheduledExecutorService scheduler) {
    this.admin = access.newAdmin(REQUEST_TIMEOUT, API_TIMEOUT);
    describeTopics =
        batcher(names -> admin.describeTopics(names.keySet()).topicNameValues(), scheduler);
    describeConfigs = batcher(rs -> admin.describeConfigs(rs.keySet()).values(), scheduler);
    createTopics = batcher(this::createTopics, scheduler);
    createPartitions = batcher(ps -> admin.createPartitions(ps).values(), scheduler);
    alterConfigs = batcher(cs -> admin.incrementalAlterConfigs(cs).values(), scheduler);
    deleteTopics =
        batcher(names -> admin.deleteTopics(names.keySet()).topicNameValues(), scheduler);
  }

  private static <K, A, V> Batcher<K, A, V> batcher(
      Function<Map<K, A>, Map<K, KafkaFuture<V>>> call, ScheduledExecutorService scheduler) {
    return new Batcher<>(scheduler, LINGER_MS, MAX_BATCH, call);
  }

  private Map<String, KafkaFuture<TopicState>> createTopics(Map<String, NewTopic> topics) {
    CreateTopicsResult result = admin.createTopics(topics.values());
    Map<String, KafkaFuture<TopicState>> states = new HashMap<>();
    result
        .values()
        .forEach(
            (name, created) ->
                states.put(
                    name,
                    created.thenApply(
                        // The id and sizes come in the same response, so they are complete too.
                        done ->
                            new TopicState(
                                completed(result.topicId(name)).toString(),
                                completed(result.numPartitions(name)),
                                completed(result.replicationFactor(name))))));
    return states;
  }

  private static <T> T completed(KafkaFuture<T> future) {
    try {
      return future.get();
    } catch (InterruptedException | ExecutionException e) {
      throw new IllegalStateException("a part of a complete response failed", e);
    }
  }

  /** The topic, or empty when the cluster has no topic of that name. */
  Optional<TopicDescription> describe(String topic) throws Exception {
    try {
      return Optional.of(await(describeTopics.submit(topic, null)));
    } catch (UnknownTopicOrPartitionException e) {
      return Optional.empty();
    }
  }

  Config configs(String topic) throws Exception {
    return await(describeConfigs.submit(resource(topic), null));
  }

  TopicState create(NewTopic topic) throws Exception {
    return await(createTopics.submit(topic.name(), topic));
  }

  void growPartitions(String topic, int partitions) throws Exception {
    await(createPartitions.submit(topic, NewPartitions.increaseTo(partitions)));
  }

  void alterConfigs(String topic, List<AlterConfigOp> changes) throws Exception {
    await(alterConfigs.submit(resource(topic), changes));
  }

  /** The cluster's brokers, with their racks. */
  Collection<Node> brokers() throws Exception {
    return await(admin.describeCluster().nodes());
  }

  /** The moves in progress of the first {@code partitions} partitions of {@code topic}. */
  Map<TopicPartition, PartitionReassignment> reassignments(String topic, int partitions)
      throws Exception {
    Set<TopicPartition> tps = new HashSet<>();
    for (int p = 0; p < partitions; p++) {
      tps.add(new TopicPartition(topic, p));
    }
    return await(admin.listPartitionReassignments(tps).reassignments());
  }

  /** Starts moving each of {@code topic}'s partitions in {@code targets} to its replicas. */
  void reassign(String topic, Map<Integer, List<Integer>> targets) throws Exception {
    Map<TopicPartition, Optional<NewPartitionReassignment>> moves = new HashMap<>();
    targets.forEach(
        (p, replicas) ->
            moves.put(
                new TopicPartition(topic, p), Optional.of(new NewPartitionReassignment(replicas))));
    await(admin.alterPartitionReassignments(moves).all());
  }

  /** Deletes the topic; one that is gone already counts as deleted. */
  void delete(String topic) throws Exception {
    try {
      await(deleteTopics.submit(topic, null));
    } catch (UnknownTopicOrPartitionException e) {
      // what we wanted
    }
  }

  static ConfigResource resource(String topic) {
    return new ConfigResource(ConfigResource.Type.TOPIC, topic);
  }

  private static <V> V await(KafkaFuture<V> call) throws Exception {
    return await(call.toCompletionStage().toCompletableFuture());
  }

  /** Waits for a call, unwrapping Kafka's exception so that callers can catch it by type. */
  private static <V> V await(CompletableFuture<V> call) throws Exception {
    try {
      return call.get(API_TIMEOUT.toMillis() + 5_000, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof Exception cause ? cause : e;
    } catch (TimeoutException e) {
      throw new org.apache.kafka.common.errors.TimeoutException(
          "no answer from the cluster within " + API_TIMEOUT.toSeconds() + " s", e);
    }
  }

  @Override
  public void close() {
    admin.close(Duration.ofSeconds(5));
  }
}
