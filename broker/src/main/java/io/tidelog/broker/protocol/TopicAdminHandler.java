package io.tidelog.broker.protocol;

import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.ReplicaAssignment;
import io.tidelog.broker.cluster.TopicCreator;
import io.tidelog.broker.cluster.TopicMetadata;
import io.tidelog.broker.config.DynamicBrokerConfig;
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
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreatePartitionsRequestData.CreatePartitionsAssignment;
import org.apache.kafka.common.message.CreatePartitionsRequestData.CreatePartitionsTopic;
import org.apache.kafka.common.message.CreatePartitionsResponseData;
import org.apache.kafka.common.message.CreatePartitionsResponseData.CreatePartitionsTopicResult;
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
  private final TopicCreator creator;
  private final Authorization authorization;
  private final ControllerMutationQuotaManager mutationQuotas;

  public TopicAdminHandler(
      DynamicBrokerConfig brokerConfig,
      MetadataStore metadata,
      Executor metadataExecutor,
      Authorization authorization,
      ControllerMutationQuotaManager mutationQuotas,
      TopicCreator creator) {
    this.brokerConfig = brokerConfig;
    this.metadata = metadata;
    this.metadataExecutor = metadataExecutor;
    this.authorization = authorization;
    this.mutationQuotas = mutationQuotas;
    this.creator = creator;
  }

  /**
   * CreateTopics: each topic is checked on its own, and the valid ones are recorded together in as
   * few etcd transactions as fit, so that a request of many topics costs few round trips.
   */
  CompletableFuture<CreateTopicsResponse> create(RequestContext context, AbstractRequest request) {
    RequestHeader header = context.header;
    CreateTopicsRequest create = (CreateTopicsRequest) request;
    Predicate<String> creatable = authorization.mayCreateTopics(context);
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
            creator.check(
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
      valid.forEach(
          t -> outcomes.put(t.name(), CompletableFuture.completedFuture(creator.preview(t))));
      valid.clear();
    }
    CompletableFuture<Map<String, CompletableFuture<TopicMetadata>>> created =
        valid.isEmpty() ? CompletableFuture.completedFuture(Map.of()) : creator.create(valid);
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
            creator.checkedReplicas(
                assignments.get(i).brokerIds(), topic.replicationFactor(), current + i));
      }
    }
    quota.record(additional);
    if (validateOnly) {
      if (added == null) {
        ReplicaAssignment.assign(
            metadata.image().assignableBrokers(), additional, topic.replicationFactor(), 0);
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
