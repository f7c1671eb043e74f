package io.tidelog.broker.protocol;

import io.tidelog.broker.cluster.BrokerInfo;
import io.tidelog.broker.cluster.ClusterImage;
import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.PartitionState;
import io.tidelog.broker.cluster.TopicCreator;
import io.tidelog.broker.cluster.TopicMetadata;
import io.tidelog.broker.config.BrokerConfig;
import io.tidelog.broker.security.Authorization;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.DescribeClusterRequestData;
import org.apache.kafka.common.message.DescribeClusterResponseData;
import org.apache.kafka.common.message.DescribeClusterResponseData.DescribeClusterBroker;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.MetadataResponseData.MetadataResponseBroker;
import org.apache.kafka.common.message.MetadataResponseData.MetadataResponsePartition;
import org.apache.kafka.common.message.MetadataResponseData.MetadataResponseTopic;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DescribeClusterRequest;
import org.apache.kafka.common.requests.DescribeClusterResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Metadata and DescribeCluster, from this broker's image of the cluster metadata: the registered
 * brokers, the controller, and the topics asked for with their ids and partition states. Unknown
 * topics are created when both {@code auto.create.topics.enable} and the request allow it.
 *
 * <p>Authorized as in Kafka: a topic is described to a client with DESCRIBE on it; asked for all
 * topics, the others are left out; asked by name, they are answered TOPIC_AUTHORIZATION_FAILED
 * whether they exist or not. Auto-creation needs CREATE on the cluster or the topic. Authorized
 * operations are filled in when asked for.
 */
public final class MetadataHandler {
  private final BrokerConfig config;
  private final MetadataStore metadata;
  private final TopicCreator creator;
  private final Authorization authorization;
  private final MutationQuota autoCreateQuota;

  public MetadataHandler(
      BrokerConfig config,
      MetadataStore metadata,
      TopicCreator creator,
      Authorization authorization) {
    this.config = config;
    this.metadata = metadata;
    this.creator = creator;
    this.authorization = authorization;
    this.autoCreateQuota = new MutationQuota(config.autoCreatePartitionRate());
  }

  CompletableFuture<MetadataResponse> handle(RequestContext context, AbstractRequest request) {
    RequestHeader header = context.header;
    String listener = context.listenerName();
    MetadataRequestData data = ((MetadataRequest) request).data();
    List<CompletableFuture<MetadataResponseTopic>> topics = new ArrayList<>();
    Predicate<String> describable =
        authorization.on(context, AclOperation.DESCRIBE, ResourceType.TOPIC);
    if (data.topics() == null) {
      ClusterImage image = metadata.image();
      image.topics().values().stream()
          .filter(t -> describable.test(t.name())) // the others are left out, as in Kafka
          .forEach(
              t -> topics.add(CompletableFuture.completedFuture(describe(t, image, listener))));
    } else {
      boolean autoCreate = config.autoCreateTopicsEnable() && data.allowAutoTopicCreation();
      Predicate<String> creatable = authorization.mayCreateTopics(context);
      Map<String, CompletableFuture<MetadataResponseTopic>> toCreate = new LinkedHashMap<>();
      for (MetadataRequestData.MetadataRequestTopic wanted : data.topics()) {
        String name = wanted.name();
        if (name != null && !describable.test(name)) {
          // whether it exists is not told
          topics.add(
              CompletableFuture.completedFuture(error(name, Errors.TOPIC_AUTHORIZATION_FAILED)));
        } else if (name != null
            && autoCreate
            && metadata.topic(name).isEmpty()
            && !creatable.test(name)) {
          topics.add(
              CompletableFuture.completedFuture(error(name, Errors.TOPIC_AUTHORIZATION_FAILED)));
        } else {
          topics.add(topicResponse(name, autoCreate, toCreate, listener));
        }
      }
      if (!toCreate.isEmpty()) {
        create(toCreate, context);
      }
    }
    return CompletableFuture.allOf(topics.toArray(CompletableFuture[]::new))
        .thenApply(
            v -> {
              ClusterImage image = metadata.image();
              MetadataResponseData response =
                  new MetadataResponseData()
                      .setClusterId(config.clusterId())
                      .setControllerId(image.controllerId());
              for (BrokerInfo broker : image.brokers().values()) {
                broker
                    .endpoint(listener)
                    .ifPresent(
                        endpoint ->
                            response
                                .brokers()
                                .add(
                                    new MetadataResponseBroker()
                                        .setNodeId(broker.id())
                                        .setHost(endpoint.host())
                                        .setPort(endpoint.port())
                                        .setRack(broker.rack())));
              }
              topics.forEach(t -> response.topics().add(t.join()));
              if (data.includeTopicAuthorizedOperations()) {
                response
                    .topics()
                    .forEach(
                        t -> {
                          if (t.errorCode() == Errors.NONE.code()) {
                            t.setTopicAuthorizedOperations(
                                authorization.authorizedOperations(
                                    context, ResourceType.TOPIC, t.name()));
                          }
                        });
              }
              if (data.includeClusterAuthorizedOperations()) {
                response.setClusterAuthorizedOperations(
                    authorization.authorizedOperations(
                        context, ResourceType.CLUSTER, Authorization.CLUSTER_NAME));
              }
              return new MetadataResponse(response, header.apiVersion());
            });
  }

  /**
   * The answer for one topic. A topic to be created gets its answer from {@code toCreate}, where it
   * is added once however often the request names it.
   */
  private CompletableFuture<MetadataResponseTopic> topicResponse(
      String name,
      boolean autoCreate,
      Map<String, CompletableFuture<MetadataResponseTopic>> toCreate,
      String listener) {
    if (name == null) {
      return CompletableFuture.completedFuture(error(null, Errors.INVALID_TOPIC_EXCEPTION));
    }
    TopicMetadata existing = metadata.topic(name).orElse(null);
    if (existing != null) {
      return CompletableFuture.completedFuture(describe(existing, metadata.image(), listener));
    }
    try {
      Topic.validate(name);
    } catch (InvalidTopicException e) {
      return CompletableFuture.completedFuture(error(name, Errors.INVALID_TOPIC_EXCEPTION));
    }
    if (!autoCreate || Topic.isInternal(name)) {
      return CompletableFuture.completedFuture(error(name, Errors.UNKNOWN_TOPIC_OR_PARTITION));
    }
    return toCreate.computeIfAbsent(name, n -> new CompletableFuture<>());
  }

  /**
   * Creates the request's unknown topics together and completes their answers; a topic beyond the
   * auto-creation quota is refused with THROTTLING_QUOTA_EXCEEDED (retriable: the client asks again
   * later).
   */
  private void create(
      Map<String, CompletableFuture<MetadataResponseTopic>> toCreate, RequestContext context) {
    creator
        .autoCreateTopics(List.copyOf(toCreate.keySet()), autoCreateQuota::record)
        .forEach(
            (name, outcome) ->
                outcome.whenComplete(
                    (created, e) ->
                        toCreate.get(name).complete(answer(name, created, e, context))));
  }

  private MetadataResponseTopic answer(
      String name, TopicMetadata created, Throwable e, RequestContext context) {
    String listener = context.listenerName();
    if (e == null) {
      return describe(created, metadata.image(), listener);
    }
    Errors error = ErrorMapping.errorOf(e, context.header);
    return error == Errors.TOPIC_ALREADY_EXISTS
        ? metadata
            .topic(name)
            .map(t -> describe(t, metadata.image(), listener))
            .orElse(error(name, Errors.LEADER_NOT_AVAILABLE))
        : error(name, error);
  }

  /**
   * A topic's partitions as the cluster knows them: leader and epoch, replicas, ISR, and the
   * replicas whose brokers are not registered. An offline partition answers LEADER_NOT_AVAILABLE;
   * one whose leader does not advertise the client's listener LISTENER_NOT_FOUND, as in Kafka.
   */
  private static MetadataResponseTopic describe(
      TopicMetadata topic, ClusterImage image, String listener) {
    MetadataResponseTopic response =
        new MetadataResponseTopic()
            .setName(topic.name())
            .setTopicId(topic.topicId())
            .setIsInternal(Topic.isInternal(topic.name()))
            .setErrorCode(Errors.NONE.code());
    for (int p = 0; p < topic.partitions(); p++) {
      List<Integer> replicas = topic.replicas(p);
      MetadataResponsePartition partition =
          new MetadataResponsePartition()
              .setPartitionIndex(p)
              .setReplicaNodes(replicas)
              .setOfflineReplicas(
                  replicas.stream().filter(r -> !image.brokers().containsKey(r)).toList());
      PartitionState state = image.partition(new TopicPartition(topic.name(), p)).orElse(null);
      if (state == null || state.leader() == PartitionState.NO_LEADER) {
        partition
            .setErrorCode(Errors.LEADER_NOT_AVAILABLE.code())
            .setLeaderId(PartitionState.NO_LEADER)
            .setLeaderEpoch(state == null ? -1 : state.leaderEpoch())
            .setIsrNodes(state == null ? List.of() : state.isr());
      } else if (image.brokers().get(state.leader()) != null
          && image.brokers().get(state.leader()).endpoint(listener).isEmpty()) {
        partition
            .setErrorCode(Errors.LISTENER_NOT_FOUND.code())
            .setLeaderId(PartitionState.NO_LEADER)
            .setLeaderEpoch(state.leaderEpoch())
            .setIsrNodes(state.isr());
      } else {
        partition
            .setErrorCode(Errors.NONE.code())
            .setLeaderId(state.leader())
            .setLeaderEpoch(state.leaderEpoch())
            .setIsrNodes(state.isr());
      }
      response.partitions().add(partition);
    }
    return response;
  }

  private static MetadataResponseTopic error(String name, Errors error) {
    return new MetadataResponseTopic()
        .setName(name)
        .setTopicId(Uuid.ZERO_UUID)
        .setErrorCode(error.code());
  }

  CompletableFuture<DescribeClusterResponse> describeCluster(
      RequestContext context, AbstractRequest request) {
    ClusterImage image = metadata.image();
    DescribeClusterRequestData asked = ((DescribeClusterRequest) request).data();
    DescribeClusterResponseData data =
        new DescribeClusterResponseData()
            .setErrorCode(Errors.NONE.code())
            .setClusterId(config.clusterId())
            .setControllerId(image.controllerId());
    for (BrokerInfo broker : image.brokers().values()) {
      broker
          .endpoint(context.listenerName())
          .ifPresent(
              endpoint ->
                  data.brokers()
                      .add(
                          new DescribeClusterBroker()
                              .setBrokerId(broker.id())
                              .setHost(endpoint.host())
                              .setPort(endpoint.port())
                              .setRack(broker.rack())));
    }
    if (asked.includeClusterAuthorizedOperations()) {
      data.setClusterAuthorizedOperations(
          authorization.allowedOnCluster(context, AclOperation.DESCRIBE)
              ? authorization.authorizedOperations(
                  context, ResourceType.CLUSTER, Authorization.CLUSTER_NAME)
              : 0);
    }
    return CompletableFuture.completedFuture(new DescribeClusterResponse(data));
  }
}
