package io.tidelog.broker.protocol;

import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.TopicMetadata;
import io.tidelog.broker.config.BrokerConfig;
import io.tidelog.broker.config.BrokerConfig.Listener;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.DescribeClusterResponseData;
import org.apache.kafka.common.message.DescribeClusterResponseData.DescribeClusterBroker;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.MetadataResponseData.MetadataResponseBroker;
import org.apache.kafka.common.message.MetadataResponseData.MetadataResponsePartition;
import org.apache.kafka.common.message.MetadataResponseData.MetadataResponseTopic;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.DescribeClusterResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.RequestHeader;

/**
 * Metadata and DescribeCluster: this broker, and the topics asked for with their topic ids. A
 * single broker leads every partition at epoch 0, alone in its ISR. Unknown topics are created when
 * both {@code auto.create.topics.enable} and the request allow it.
 */
public final class MetadataHandler {
  private final BrokerConfig config;
  private final MetadataStore metadata;
  private final TopicAdminHandler topicAdmin;

  public MetadataHandler(
      BrokerConfig config, MetadataStore metadata, TopicAdminHandler topicAdmin) {
    this.config = config;
    this.metadata = metadata;
    this.topicAdmin = topicAdmin;
  }

  CompletableFuture<MetadataResponse> handle(RequestHeader header, AbstractRequest request) {
    MetadataRequestData data = ((MetadataRequest) request).data();
    List<CompletableFuture<MetadataResponseTopic>> topics = new ArrayList<>();
    if (data.topics() == null) {
      metadata.topics().forEach(t -> topics.add(CompletableFuture.completedFuture(describe(t))));
    } else {
      boolean autoCreate = config.autoCreateTopicsEnable() && data.allowAutoTopicCreation();
      for (MetadataRequestData.MetadataRequestTopic wanted : data.topics()) {
        topics.add(topicResponse(wanted.name(), autoCreate, header));
      }
    }
    return CompletableFuture.allOf(topics.toArray(CompletableFuture[]::new))
        .thenApply(
            v -> {
              MetadataResponseData response =
                  new MetadataResponseData()
                      .setClusterId(config.clusterId())
                      .setControllerId(config.nodeId());
              Listener advertised = config.advertisedListeners().get(0);
              response
                  .brokers()
                  .add(
                      new MetadataResponseBroker()
                          .setNodeId(config.nodeId())
                          .setHost(advertised.host())
                          .setPort(advertised.port())
                          .setRack(config.rack()));
              topics.forEach(t -> response.topics().add(t.join()));
              return new MetadataResponse(response, header.apiVersion());
            });
  }

  private CompletableFuture<MetadataResponseTopic> topicResponse(
      String name, boolean autoCreate, RequestHeader header) {
    if (name == null) {
      return CompletableFuture.completedFuture(error(null, Errors.INVALID_TOPIC_EXCEPTION));
    }
    TopicMetadata existing = metadata.topic(name).orElse(null);
    if (existing != null) {
      return CompletableFuture.completedFuture(describe(existing));
    }
    try {
      Topic.validate(name);
    } catch (InvalidTopicException e) {
      return CompletableFuture.completedFuture(error(name, Errors.INVALID_TOPIC_EXCEPTION));
    }
    if (!autoCreate) {
      return CompletableFuture.completedFuture(error(name, Errors.UNKNOWN_TOPIC_OR_PARTITION));
    }
    return topicAdmin
        .createTopic(name, -1, (short) -1, Map.of(), false, false)
        .handle(
            (created, e) -> {
              if (e == null) {
                return describe(created);
              }
              Errors error = ErrorMapping.errorOf(e, header);
              return error == Errors.TOPIC_ALREADY_EXISTS
                  ? metadata
                      .topic(name)
                      .map(this::describe)
                      .orElse(error(name, Errors.LEADER_NOT_AVAILABLE))
                  : error(name, error);
            });
  }

  private MetadataResponseTopic describe(TopicMetadata topic) {
    MetadataResponseTopic response =
        new MetadataResponseTopic()
            .setName(topic.name())
            .setTopicId(topic.topicId())
            .setIsInternal(false)
            .setErrorCode(Errors.NONE.code());
    for (int p = 0; p < topic.partitions(); p++) {
      response
          .partitions()
          .add(
              new MetadataResponsePartition()
                  .setPartitionIndex(p)
                  .setErrorCode(Errors.NONE.code())
                  .setLeaderId(config.nodeId())
                  .setLeaderEpoch(0)
                  .setReplicaNodes(List.of(config.nodeId()))
                  .setIsrNodes(List.of(config.nodeId()))
                  .setOfflineReplicas(List.of()));
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
      RequestHeader header, AbstractRequest request) {
    Listener advertised = config.advertisedListeners().get(0);
    DescribeClusterResponseData data =
        new DescribeClusterResponseData()
            .setErrorCode(Errors.NONE.code())
            .setClusterId(config.clusterId())
            .setControllerId(config.nodeId());
    data.brokers()
        .add(
            new DescribeClusterBroker()
                .setBrokerId(config.nodeId())
                .setHost(advertised.host())
                .setPort(advertised.port())
                .setRack(config.rack()));
    return CompletableFuture.completedFuture(new DescribeClusterResponse(data));
  }
}
