package io.tidelog.broker.cluster;

import io.tidelog.broker.cluster.MetadataStore.NewTopic;
import io.tidelog.broker.config.DynamicBrokerConfig;
import io.tidelog.broker.config.TopicConfigs;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.IntConsumer;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableReplicaAssignment;

/**
 * The one owner of topic creation, as Kafka's controller and its {@code AutoTopicCreationManager}:
 * it checks a topic as Kafka's controller does (name, existence, configs, assignment) and records
 * it in etcd. CreateTopics, the topics a Metadata request creates, and the group coordinator's
 * {@code __consumer_offsets} all go through it. Checks read the image and may run anywhere;
 * creations run on the metadata executor.
 */
public final class TopicCreator {
  private final DynamicBrokerConfig brokerConfig;
  private final MetadataStore metadata;
  private final Executor metadataExecutor;

  public TopicCreator(
      DynamicBrokerConfig brokerConfig, MetadataStore metadata, Executor metadataExecutor) {
    this.brokerConfig = brokerConfig;
    this.metadata = metadata;
    this.metadataExecutor = metadataExecutor;
  }

  /**
   * Records {@code topics}, checked, in as few etcd transactions as fit, on the metadata executor.
   *
   * @return each name's outcome
   */
  public CompletableFuture<Map<String, CompletableFuture<TopicMetadata>>> create(
      List<NewTopic> topics) {
    return CompletableFuture.supplyAsync(() -> metadata.createTopics(topics), metadataExecutor);
  }

  /**
   * Creates an internal topic such as {@code __consumer_offsets}, which clients may not create;
   * fails with TOPIC_ALREADY_EXISTS when another broker was first.
   */
  public CompletableFuture<TopicMetadata> createInternalTopic(
      String name, int partitions, short replicationFactor, Map<String, String> configs) {
    return CompletableFuture.supplyAsync(
        () -> metadata.createTopic(name, partitions, replicationFactor, configs), metadataExecutor);
  }

  /**
   * Creates the topics that a client's Metadata request names, with the broker's defaults, in as
   * few etcd transactions as fit; {@code admit} is told each topic's partitions and may refuse it
   * by throwing (the auto-creation quota).
   *
   * @return each name's outcome
   */
  public Map<String, CompletableFuture<TopicMetadata>> autoCreateTopics(
      List<String> names, IntConsumer admit) {
    Map<String, CompletableFuture<TopicMetadata>> outcomes = new LinkedHashMap<>();
    List<NewTopic> admitted = new ArrayList<>();
    for (String name : names) {
      try {
        NewTopic checked = check(name, -1, (short) -1, Map.of(), List.of());
        admit.accept(checked.partitions());
        admitted.add(checked);
      } catch (RuntimeException e) {
        outcomes.put(name, CompletableFuture.failedFuture(e));
      }
    }
    if (!admitted.isEmpty()) {
      CompletableFuture<Map<String, CompletableFuture<TopicMetadata>>> created =
          CompletableFuture.supplyAsync(() -> metadata.createTopics(admitted), metadataExecutor);
      for (NewTopic topic : admitted) {
        outcomes.put(topic.name(), created.thenCompose(all -> all.get(topic.name())));
      }
    }
    return outcomes;
  }

  /**
   * Checks a topic that a client asks for, in the order of Kafka's controller: its name, that it
   * does not exist, its configs, then its assignment, given or of its partitions and replication
   * factor (-1 for the broker default) over the live brokers.
   */
  public NewTopic check(
      String name,
      int partitions,
      short replicationFactor,
      Map<String, String> configs,
      java.util.Collection<CreatableReplicaAssignment> assignments) {
    Topic.validate(name);
    if (Topic.isInternal(name)) {
      throw new InvalidRequestException("Creation of internal topic " + name + " is prohibited.");
    }
    if (metadata.topic(name).isPresent()) {
      throw new TopicExistsException("Topic '" + name + "' already exists.");
    }
    validateConfigs(configs);
    if (!assignments.isEmpty()) {
      if (replicationFactor != -1) {
        throw new InvalidRequestException(
            "A manual partition assignment was specified, but replication factor was not set to"
                + " -1.");
      }
      if (partitions != -1) {
        throw new InvalidRequestException(
            "A manual partition assignment was specified, but numPartitions was not set to -1.");
      }
      List<List<Integer>> assignment = manualAssignment(assignments);
      return new NewTopic(name, assignment.size(), assignment.get(0).size(), configs, assignment);
    }
    if (replicationFactor < -1 || replicationFactor == 0) {
      throw new InvalidReplicationFactorException(
          "Replication factor must be larger than 0, or -1 to use the default value.");
    }
    if (partitions < -1 || partitions == 0) {
      throw new InvalidPartitionsException(
          "Number of partitions was set to an invalid non-positive value.");
    }
    int partitionCount = partitions == -1 ? brokerConfig.current().numPartitions() : partitions;
    int replication =
        replicationFactor == -1
            ? brokerConfig.current().defaultReplicationFactor()
            : replicationFactor;
    // the live brokers can hold it now (the creation checks again)
    ReplicaAssignment.assign(metadata.image().assignableBrokers(), 1, replication, 0);
    return new NewTopic(name, partitionCount, replication, configs);
  }

  /** A CreateTopics assignment, checked as Kafka's controller checks it; by partition. */
  private List<List<Integer>> manualAssignment(
      java.util.Collection<CreatableReplicaAssignment> assignments) {
    Map<Integer, List<Integer>> byPartition = new HashMap<>();
    Integer replicationFactor = null;
    for (CreatableReplicaAssignment assignment : assignments) {
      if (byPartition.containsKey(assignment.partitionIndex())) {
        throw new InvalidReplicaAssignmentException(
            "Found multiple manual partition assignments for partition "
                + assignment.partitionIndex());
      }
      List<Integer> replicas =
          checkedReplicas(assignment.brokerIds(), replicationFactor, assignment.partitionIndex());
      replicationFactor = replicas.size();
      byPartition.put(assignment.partitionIndex(), replicas);
    }
    List<List<Integer>> assignment = new ArrayList<>();
    for (int p = 0; p < byPartition.size(); p++) {
      if (!byPartition.containsKey(p)) {
        throw new InvalidReplicaAssignmentException(
            "partitions should be a consecutive 0-based integer sequence");
      }
      assignment.add(byPartition.get(p));
    }
    return assignment;
  }

  /**
   * One partition's replicas as a client gave them, checked as Kafka's controller checks them:
   * some, each a registered (here: live) broker, none twice, as many as {@code replicationFactor}
   * when it is not null, and one at least not shutting down.
   */
  public List<Integer> checkedReplicas(
      List<Integer> brokerIds, Integer replicationFactor, int partition) {
    if (brokerIds.isEmpty()) {
      throw new InvalidReplicaAssignmentException(
          "The manual partition assignment includes an empty replica list.");
    }
    Set<Integer> registered = metadata.image().brokers().keySet();
    List<Integer> sorted = new ArrayList<>(brokerIds);
    sorted.sort(Integer::compare);
    Integer previous = null;
    for (Integer id : sorted) {
      if (!registered.contains(id)) {
        throw new InvalidReplicaAssignmentException(
            "The manual partition assignment includes broker "
                + id
                + ", but no such broker is registered.");
      }
      if (id.equals(previous)) {
        throw new InvalidReplicaAssignmentException(
            "The manual partition assignment includes the broker " + id + " more than once.");
      }
      previous = id;
    }
    if (replicationFactor != null && sorted.size() != replicationFactor) {
      throw new InvalidReplicaAssignmentException(
          "The manual partition assignment includes a partition with "
              + sorted.size()
              + " replica(s), but this is not consistent with previous partitions, which have "
              + replicationFactor
              + " replica(s).");
    }
    Set<Integer> active = metadata.image().activeBrokers();
    if (brokerIds.stream().noneMatch(active::contains)) {
      throw new InvalidReplicaAssignmentException(
          "All brokers specified in the manual partition assignment for partition "
              + partition
              + " are fenced or in controlled shutdown.");
    }
    return List.copyOf(brokerIds);
  }

  /** What a validate-only CreateTopics reports: the topic as it would be assigned now. */
  public TopicMetadata preview(NewTopic topic) {
    List<List<Integer>> assignment =
        ReplicaAssignment.assign(
            metadata.image().brokers().values(), topic.partitions(), topic.replicationFactor(), 0);
    return new TopicMetadata(topic.name(), Uuid.ZERO_UUID, assignment, topic.configs(), 0);
  }

  private void validateConfigs(Map<String, String> configs) {
    try {
      TopicConfigs.validate(brokerConfig.topicDefaults(), configs);
    } catch (ConfigException e) {
      throw new InvalidConfigurationException(e.getMessage());
    }
  }
}
