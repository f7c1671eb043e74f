package io.tidelog.broker.protocol;

import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.ReplicaAssignment;
import io.tidelog.broker.cluster.TopicMetadata;
import io.tidelog.broker.config.DynamicBrokerConfig;
import io.tidelog.broker.config.TopicConfigs;
import io.tidelog.broker.quota.ControllerMutationQuotaManager;
import io.tidelog.broker.quota.ControllerMutationQuotaManager.RequestQuota;
import io.tidelog.broker.security.Authorization;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.function.Predicate;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreatePartitionsRequestData.CreatePartitionsAssignment;
import org.apache.kafka.common.message.CreatePartitionsRequestData.CreatePartitionsTopic;
import org.apache.kafka.common.message.CreatePartitionsResponseData;
import org.apache.kafka.common.message.CreatePartitionsResponseData.CreatePartitionsTopicResult;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableReplicaAssignment;
import org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopic;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.CreateTopicsResponseData.CreatableTopicResult;
import org.apache.kafka.common.message.DeleteTopicsRequestData.DeleteTopicState;
import org.apache.kafka.common.message.DeleteTopicsResponseData;
import org.apache.kafka.common.message.DeleteTopicsResponseData.DeletableTopicResult;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.CreatePartitionsRequest;
import org.apache.kafka.common.requests.CreatePartitionsResponse;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.DeleteTopicsRequest;
import org.apache.kafka.common.requests.DeleteTopicsResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.resource.ResourceType;

/**
 * CreateTopics, CreatePartitions and DeleteTopics, and the topic creation that Metadata's
 * auto-create uses. Metadata writes run on {@code metadataExecutor}, one at a time, never on the
 * event loop.
 *
 * <p>Authorized as Kafka's controller authorizes them: CreateTopics needs CREATE on the cluster or
 * on the topic, CreatePartitions ALTER on the topic, DeleteTopics DELETE on the topic; a topic that
 * fails it is answered TOPIC_AUTHORIZATION_FAILED. DeleteTopics tells a client that may DESCRIBE a
 * topic that it does not exist (UNKNOWN_TOPIC_OR_PARTITION), and one that may not only that it is
 * not authorized, so as not to reveal which topics exist.
 *
 * <p>Each topic of a request is answered on its own, with Kafka's error code, and never stops the
 * others: a name given twice is answered once, INVALID_REQUEST, and not created; manual replica
 * assignments are checked as Kafka's controller checks them (INVALID_REPLICA_ASSIGNMENT, with its
 * reasons), a broker being registered when it is live here.
 */
public final class TopicAdminHandler {
  /**
   * The most partitions that one CreateTopics or CreatePartitions request may create, as Kafka's
   * controller allows ({@code MAX_PARTITIONS_PER_BATCH}); beyond it every topic of the request is
   * refused with POLICY_VIOLATION before anything is planned or allocated.
   */
  static final int MAX_PARTITIONS_PER_REQUEST = 10_000;

  /**
   * The most metadata records one request may write, as Kafka's controller allows ({@code
   * MAX_RECORDS_PER_USER_OP}): Kafka counts one record per new topic, one per partition and one per
   * config override, so one topic can have at most 9,999 partitions. Beyond it every topic of the
   * request is refused with POLICY_VIOLATION.
   */
  static final int MAX_RECORDS_PER_REQUEST = 10_000;

  private static final String EXCESSIVE_PARTITIONS =
      "Excessively large number of partitions per request.";
  private static final String EXCESSIVE_BATCH =
      "Unable to perform excessively large batch operation.";

  private final DynamicBrokerConfig brokerConfig;
  private final MetadataStore metadata;
  private final Executor metadataExecutor;
  private final MutationQuota autoCreateQuota;
  private final Authorization authorization;
  private final ControllerMutationQuotaManager mutationQuotas;

  public TopicAdminHandler(
      DynamicBrokerConfig brokerConfig,
      MetadataStore metadata,
      Executor metadataExecutor,
      Authorization authorization,
      ControllerMutationQuotaManager mutationQuotas) {
    this.brokerConfig = brokerConfig;
    this.metadata = metadata;
    this.metadataExecutor = metadataExecutor;
    this.authorization = authorization;
    this.mutationQuotas = mutationQuotas;
    this.autoCreateQuota = new MutationQuota(brokerConfig.current().autoCreatePartitionRate());
  }

  /**
   * CreateTopics: each topic is checked on its own, and the valid ones are recorded together in as
   * few etcd transactions as fit, so that a request of many topics costs few round trips.
   */
  CompletableFuture<CreateTopicsResponse> create(RequestContext context, AbstractRequest request) {
    RequestHeader header = context.header;
    CreateTopicsRequest create = (CreateTopicsRequest) request;
    Predicate<String> creatable = creatable(context);
    Set<String> duplicates = duplicates(create.data().topics().stream().map(t -> t.name()));
    List<CreatableTopic> topics =
        create.data().topics().stream().filter(t -> !duplicates.contains(t.name())).toList();
    if (partitionsAsked(topics) > MAX_PARTITIONS_PER_REQUEST) {
      return CompletableFuture.completedFuture(refuseAll(topics, duplicates, EXCESSIVE_PARTITIONS));
    }
    Map<String, CompletableFuture<TopicMetadata>> outcomes = new LinkedHashMap<>();
    List<MetadataStore.NewTopic> valid = new ArrayList<>();
    RequestQuota quota = mutationQuota(context, 6);
    long records = 0;
    for (CreatableTopic topic : topics) {
      if (!creatable.test(topic.name())) {
        outcomes.put(
            topic.name(),
            CompletableFuture.failedFuture(new TopicAuthorizationException(Set.of(topic.name()))));
        continue;
      }
      Map<String, String> configs = new HashMap<>();
      topic.configs().forEach(c -> configs.put(c.name(), c.value()));
      try {
        MetadataStore.NewTopic checked =
            check(
                topic.name(),
                topic.numPartitions(),
                topic.replicationFactor(),
                configs,
                topic.assignments());
        // as Kafka's controller: a new topic that passed every check (check refuses one that
        // exists) costs its partitions
        quota.record(checked.partitions());
        records += 1 + checked.partitions() + checked.configs().size();
        valid.add(checked);
      } catch (RuntimeException e) {
        outcomes.put(topic.name(), CompletableFuture.failedFuture(e));
      }
    }
    if (records > MAX_RECORDS_PER_REQUEST) {
      return CompletableFuture.completedFuture(refuseAll(topics, duplicates, EXCESSIVE_BATCH));
    }
    if (create.data().validateOnly()) {
      valid.forEach(t -> outcomes.put(t.name(), CompletableFuture.completedFuture(preview(t))));
      valid.clear();
    }
    CompletableFuture<Map<String, CompletableFuture<TopicMetadata>>> created =
        valid.isEmpty()
            ? CompletableFuture.completedFuture(Map.of())
            : CompletableFuture.supplyAsync(() -> metadata.createTopics(valid), metadataExecutor);
    return created
        .exceptionally(
            e -> {
              Map<String, CompletableFuture<TopicMetadata>> failed = new HashMap<>();
              valid.forEach(t -> failed.put(t.name(), CompletableFuture.failedFuture(e)));
              return failed;
            })
        .thenApply(
            createdTopics -> {
              outcomes.putAll(createdTopics);
              CreateTopicsResponseData data = new CreateTopicsResponseData();
              for (CreatableTopic topic : topics) {
                data.topics().add(result(topic.name(), outcomes.get(topic.name()), header));
              }
              duplicates.forEach(name -> data.topics().add(duplicateResult(name)));
              return new CreateTopicsResponse(data.setThrottleTimeMs(quota.throttleTimeMs()));
            });
  }

  /**
   * The request's {@code controller_mutation_rate} quota: strict from {@code strictSinceVersion},
   * the first version of the API that knows THROTTLING_QUOTA_EXCEEDED, as Kafka's.
   */
  private RequestQuota mutationQuota(RequestContext context, int strictSinceVersion) {
    return mutationQuotas.forRequest(
        context.principal.getName(),
        context.clientId(),
        context.header.apiVersion() >= strictSinceVersion);
  }

  /**
   * Whether the request may create a topic: CREATE on the cluster, or on the topic, as Kafka's
   * controller and its auto-creation check.
   */
  Predicate<String> creatable(RequestContext context) {
    boolean onCluster = authorization.allowedOnCluster(context, AclOperation.CREATE);
    Predicate<String> onTopic = authorization.on(context, AclOperation.CREATE, ResourceType.TOPIC);
    return name -> onCluster || onTopic.test(name);
  }

  private static CreateTopicsResponse refuseAll(
      List<CreatableTopic> topics, Set<String> duplicates, String why) {
    CreateTopicsResponseData refused = new CreateTopicsResponseData();
    for (CreatableTopic topic : topics) {
      refused
          .topics()
          .add(
              new CreatableTopicResult()
                  .setName(topic.name())
                  .setErrorCode(Errors.POLICY_VIOLATION.code())
                  .setErrorMessage(why));
    }
    duplicates.forEach(name -> refused.topics().add(duplicateResult(name)));
    return new CreateTopicsResponse(refused);
  }

  private static final String DUPLICATE_NAME = "Duplicate topic name.";

  /** The names that {@code names} holds more than once, in the order they first repeat. */
  private static Set<String> duplicates(java.util.stream.Stream<String> names) {
    Set<String> seen = new java.util.HashSet<>();
    Set<String> repeated = new java.util.LinkedHashSet<>();
    names.forEach(
        name -> {
          if (!seen.add(name)) {
            repeated.add(name);
          }
        });
    return repeated;
  }

  private static CreatableTopicResult duplicateResult(String name) {
    return new CreatableTopicResult()
        .setName(name)
        .setErrorCode(Errors.INVALID_REQUEST.code())
        .setErrorMessage(DUPLICATE_NAME);
  }

  /** The partitions the topics of a CreateTopics ask for in all, as Kafka's controller counts. */
  private long partitionsAsked(List<CreatableTopic> topics) {
    long total = 0;
    for (CreatableTopic topic : topics) {
      if (!topic.assignments().isEmpty()) {
        total += topic.assignments().size();
      } else if (topic.numPartitions() == -1) {
        total += brokerConfig.current().numPartitions();
      } else {
        total += Math.max(0, topic.numPartitions());
      }
    }
    return total;
  }

  private static CreatableTopicResult result(
      String name, CompletableFuture<TopicMetadata> outcome, RequestHeader header) {
    CreatableTopicResult result = new CreatableTopicResult().setName(name);
    try {
      TopicMetadata created = outcome.join();
      return result
          .setErrorMessage(null)
          .setTopicId(created.topicId())
          .setNumPartitions(created.partitions())
          .setReplicationFactor((short) created.replicas(0).size());
    } catch (CompletionException e) {
      return result
          .setErrorCode(ErrorMapping.errorOf(e, header).code())
          .setErrorMessage(ErrorMapping.messageOf(e));
    }
  }

  /**
   * Creates an internal topic such as {@code __consumer_offsets}, which clients may not create;
   * fails with TOPIC_ALREADY_EXISTS when another broker was first.
   */
  CompletableFuture<TopicMetadata> createInternalTopic(
      String name, int partitions, short replicationFactor, Map<String, String> configs) {
    return CompletableFuture.supplyAsync(
        () -> metadata.createTopic(name, partitions, replicationFactor, configs), metadataExecutor);
  }

  /**
   * Creates the topics that a client's Metadata request names, with the broker's defaults, in as
   * few etcd transactions as fit; a topic beyond the auto-creation quota is refused with
   * THROTTLING_QUOTA_EXCEEDED (retriable: the client asks again later).
   *
   * @return each name's outcome
   */
  Map<String, CompletableFuture<TopicMetadata>> autoCreateTopics(List<String> names) {
    Map<String, CompletableFuture<TopicMetadata>> outcomes = new LinkedHashMap<>();
    List<MetadataStore.NewTopic> admitted = new ArrayList<>();
    for (String name : names) {
      try {
        MetadataStore.NewTopic checked = check(name, -1, (short) -1, Map.of(), List.of());
        autoCreateQuota.record(checked.partitions());
        admitted.add(checked);
      } catch (RuntimeException e) {
        outcomes.put(name, CompletableFuture.failedFuture(e));
      }
    }
    if (!admitted.isEmpty()) {
      CompletableFuture<Map<String, CompletableFuture<TopicMetadata>>> created =
          CompletableFuture.supplyAsync(() -> metadata.createTopics(admitted), metadataExecutor);
      for (MetadataStore.NewTopic topic : admitted) {
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
  private MetadataStore.NewTopic check(
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
      return new MetadataStore.NewTopic(
          name, assignment.size(), assignment.get(0).size(), configs, assignment);
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
    return new MetadataStore.NewTopic(name, partitionCount, replication, configs);
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
  private List<Integer> checkedReplicas(
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
  private TopicMetadata preview(MetadataStore.NewTopic topic) {
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

  CompletableFuture<CreatePartitionsResponse> createPartitions(
      RequestContext context, AbstractRequest request) {
    RequestHeader header = context.header;
    CreatePartitionsRequestData data = ((CreatePartitionsRequest) request).data();
    Predicate<String> alterable = authorization.on(context, AclOperation.ALTER, ResourceType.TOPIC);
    if (partitionsAdded(data) > MAX_PARTITIONS_PER_REQUEST) {
      CreatePartitionsResponseData refused = new CreatePartitionsResponseData();
      for (CreatePartitionsTopic topic : data.topics()) {
        refused
            .results()
            .add(
                new CreatePartitionsTopicResult()
                    .setName(topic.name())
                    .setErrorCode(Errors.POLICY_VIOLATION.code())
                    .setErrorMessage(EXCESSIVE_PARTITIONS));
      }
      return CompletableFuture.completedFuture(new CreatePartitionsResponse(refused));
    }
    List<CompletableFuture<CreatePartitionsTopicResult>> results = new ArrayList<>();
    RequestQuota quota = mutationQuota(context, 3);
    Set<String> duplicates = duplicates(data.topics().stream().map(t -> t.name()));
    for (CreatePartitionsTopic topic : data.topics()) {
      if (duplicates.contains(topic.name())) {
        continue; // answered once, below
      }
      CompletableFuture<TopicMetadata> grown =
          !alterable.test(topic.name())
              ? CompletableFuture.failedFuture(
                  new TopicAuthorizationException(Set.of(topic.name())))
              : CompletableFuture.supplyAsync(
                  () ->
                      grow(
                          topic.name(),
                          topic.count(),
                          topic.assignments(),
                          data.validateOnly(),
                          quota),
                  metadataExecutor);
      results.add(
          grown.handle(
              (t, e) -> {
                CreatePartitionsTopicResult result =
                    new CreatePartitionsTopicResult().setName(topic.name());
                return e == null
                    ? result.setErrorCode(Errors.NONE.code())
                    : result
                        .setErrorCode(ErrorMapping.errorOf(e, header).code())
                        .setErrorMessage(ErrorMapping.messageOf(e));
              }));
    }
    return CompletableFuture.allOf(results.toArray(CompletableFuture[]::new))
        .thenApply(
            v -> {
              CreatePartitionsResponseData response = new CreatePartitionsResponseData();
              results.forEach(r -> response.results().add(r.join()));
              duplicates.forEach(
                  name ->
                      response
                          .results()
                          .add(
                              new CreatePartitionsTopicResult()
                                  .setName(name)
                                  .setErrorCode(Errors.INVALID_REQUEST.code())
                                  .setErrorMessage(DUPLICATE_NAME)));
              return new CreatePartitionsResponse(
                  response.setThrottleTimeMs(quota.throttleTimeMs()));
            });
  }

  /** The partitions a CreatePartitions request adds in all, to the topics that exist. */
  private long partitionsAdded(CreatePartitionsRequestData data) {
    long total = 0;
    for (CreatePartitionsTopic topic : data.topics()) {
      TopicMetadata current = metadata.topic(topic.name()).orElse(null);
      if (current != null) {
        total += Math.max(0, topic.count() - current.partitions());
      }
    }
    return total;
  }

  /**
   * Grows a topic to {@code count} partitions, the new ones with the replicas of {@code
   * assignments} when given (checked as Kafka's controller checks them), else spread over the live
   * brokers.
   */
  private TopicMetadata grow(
      String name,
      int count,
      List<CreatePartitionsAssignment> assignments,
      boolean validateOnly,
      RequestQuota quota) {
    TopicMetadata topic =
        metadata
            .topic(name)
            .orElseThrow(
                () -> new UnknownTopicOrPartitionException("Topic '" + name + "' does not exist"));
    int current = topic.partitions();
    if (count == current) {
      throw new InvalidPartitionsException("Topic already has " + current + " partition(s).");
    }
    if (count < current) {
      throw new InvalidPartitionsException(
          "The topic "
              + name
              + " currently has "
              + current
              + " partition(s); "
              + count
              + " would not be an increase.");
    }
    int additional = count - current;
    List<List<Integer>> added = null;
    if (assignments != null) {
      if (assignments.size() != additional) {
        throw new InvalidReplicaAssignmentException(
            "Attempted to add "
                + additional
                + " additional partition(s), but only "
                + assignments.size()
                + " assignment(s) were specified.");
      }
      added = new ArrayList<>();
      for (int i = 0; i < additional; i++) {
        added.add(
            checkedReplicas(assignments.get(i).brokerIds(), topic.replicas(0).size(), current + i));
      }
    }
    quota.record(additional);
    if (validateOnly) {
      if (added == null) {
        ReplicaAssignment.assign(
            metadata.image().assignableBrokers(), additional, topic.replicas(0).size(), 0);
      }
      return topic;
    }
    return metadata.addPartitions(name, count, added);
  }

  CompletableFuture<DeleteTopicsResponse> delete(RequestContext context, AbstractRequest request) {
    RequestHeader header = context.header;
    DeleteTopicsRequest delete = (DeleteTopicsRequest) request;
    Predicate<String> describable =
        authorization.on(context, AclOperation.DESCRIBE, ResourceType.TOPIC);
    Predicate<String> deletable =
        authorization.on(context, AclOperation.DELETE, ResourceType.TOPIC);
    List<CompletableFuture<DeletableTopicResult>> results = new ArrayList<>();
    RequestQuota quota = mutationQuota(context, 5);
    for (DeleteTopicState state : delete.topics()) {
      String name = state.name();
      boolean mayDescribe = describable.test(name);
      boolean mayDelete = deletable.test(name);
      CompletableFuture<TopicMetadata> deleted =
          CompletableFuture.supplyAsync(
              () -> {
                if (!mayDescribe) {
                  throw new TopicAuthorizationException(Set.of(name));
                }
                TopicMetadata topic =
                    metadata
                        .topic(name)
                        .orElseThrow(
                            () ->
                                new UnknownTopicOrPartitionException(
                                    "Topic '" + name + "' does not exist"));
                if (!mayDelete) {
                  throw new TopicAuthorizationException(Set.of(name));
                }
                quota.record(topic.partitions());
                metadata.deleteTopic(name);
                return topic;
              },
              metadataExecutor);
      results.add(
          deleted.handle(
              (topic, e) -> {
                DeletableTopicResult result = new DeletableTopicResult().setName(name);
                if (e != null) {
                  return result
                      .setErrorCode(ErrorMapping.errorOf(e, header).code())
                      .setErrorMessage(ErrorMapping.messageOf(e));
                }
                return result.setTopicId(topic.topicId()).setErrorCode(Errors.NONE.code());
              }));
    }
    return CompletableFuture.allOf(results.toArray(CompletableFuture[]::new))
        .thenApply(
            v -> {
              DeleteTopicsResponseData data = new DeleteTopicsResponseData();
              results.forEach(r -> data.responses().add(r.join()));
              return new DeleteTopicsResponse(data.setThrottleTimeMs(quota.throttleTimeMs()));
            });
  }
}
