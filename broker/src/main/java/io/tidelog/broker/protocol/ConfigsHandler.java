package io.tidelog.broker.protocol;

import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.TopicMetadata;
import io.tidelog.broker.config.BrokerConfig;
import io.tidelog.broker.config.TopicConfigs;
import io.tidelog.broker.security.Authorization;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.UnaryOperator;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.AlterConfigsRequestData;
import org.apache.kafka.common.message.AlterConfigsResponseData;
import org.apache.kafka.common.message.DescribeConfigsRequestData.DescribeConfigsResource;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsResourceResult;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsResult;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData.AlterConfigsResource;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData.AlterableConfig;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AlterConfigsRequest;
import org.apache.kafka.common.requests.AlterConfigsResponse;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.requests.DescribeConfigsRequest;
import org.apache.kafka.common.requests.DescribeConfigsResponse;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigSource;
import org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigType;
import org.apache.kafka.common.requests.IncrementalAlterConfigsRequest;
import org.apache.kafka.common.requests.IncrementalAlterConfigsResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.resource.ResourceType;

/**
 * DescribeConfigs (topics and this broker), AlterConfigs and IncrementalAlterConfigs (topics). A
 * topic's value comes from its override, else the broker's {@code log.*} default, else Kafka's
 * default, and DescribeConfigs reports which. Altered configs are stored, then applied to the live
 * logs. Broker configs are static: altering them is refused.
 *
 * <p>Authorized as in Kafka: describing needs DESCRIBE_CONFIGS, altering ALTER_CONFIGS, on the
 * topic (else TOPIC_AUTHORIZATION_FAILED) or, for a broker, on the cluster (else
 * CLUSTER_AUTHORIZATION_FAILED).
 */
public final class ConfigsHandler {
  private final BrokerConfig brokerConfig;
  private final MetadataStore metadata;
  private final Executor metadataExecutor;
  private final Authorization authorization;

  public ConfigsHandler(
      BrokerConfig brokerConfig,
      MetadataStore metadata,
      Executor metadataExecutor,
      Authorization authorization) {
    this.brokerConfig = brokerConfig;
    this.metadata = metadata;
    this.metadataExecutor = metadataExecutor;
    this.authorization = authorization;
  }

  /** Why the request may not do {@code operation} on the resource's configs, or null. */
  private Errors refusal(
      RequestContext context, AclOperation operation, byte resourceType, String name) {
    ConfigResource.Type type = ConfigResource.Type.forId(resourceType);
    if (type == ConfigResource.Type.TOPIC) {
      return authorization.allowed(context, operation, ResourceType.TOPIC, name)
          ? null
          : Errors.TOPIC_AUTHORIZATION_FAILED;
    }
    if (type == ConfigResource.Type.BROKER || type == ConfigResource.Type.BROKER_LOGGER) {
      return authorization.allowedOnCluster(context, operation)
          ? null
          : Errors.CLUSTER_AUTHORIZATION_FAILED;
    }
    return null;
  }

  CompletableFuture<DescribeConfigsResponse> describe(
      RequestContext context, AbstractRequest request) {
    RequestHeader header = context.header;
    DescribeConfigsResponseData data = new DescribeConfigsResponseData();
    for (DescribeConfigsResource resource : ((DescribeConfigsRequest) request).data().resources()) {
      DescribeConfigsResult result =
          new DescribeConfigsResult()
              .setResourceType(resource.resourceType())
              .setResourceName(resource.resourceName());
      Errors refused =
          refusal(
              context,
              AclOperation.DESCRIBE_CONFIGS,
              resource.resourceType(),
              resource.resourceName());
      if (refused != null) {
        data.results().add(result.setErrorCode(refused.code()));
        continue;
      }
      try {
        List<DescribeConfigsResourceResult> configs = describe(resource);
        if (resource.configurationKeys() != null) {
          configs.removeIf(c -> !resource.configurationKeys().contains(c.name()));
        }
        result.setErrorCode(Errors.NONE.code()).setConfigs(configs);
      } catch (RuntimeException e) {
        result
            .setErrorCode(ErrorMapping.errorOf(e, header).code())
            .setErrorMessage(ErrorMapping.messageOf(e));
      }
      data.results().add(result);
    }
    return CompletableFuture.completedFuture(new DescribeConfigsResponse(data));
  }

  private List<DescribeConfigsResourceResult> describe(DescribeConfigsResource resource) {
    List<DescribeConfigsResourceResult> configs = new ArrayList<>();
    switch (ConfigResource.Type.forId(resource.resourceType())) {
      case TOPIC -> {
        TopicMetadata topic = topic(resource.resourceName());
        TopicConfigs.describable()
            .forEach(
                (key, def) -> {
                  String override = topic.configs().get(key);
                  String brokerDefault = brokerConfig.topicDefaults().get(key);
                  ConfigSource source =
                      override != null
                          ? ConfigSource.TOPIC_CONFIG
                          : brokerDefault != null
                              ? ConfigSource.STATIC_BROKER_CONFIG
                              : ConfigSource.DEFAULT_CONFIG;
                  String value =
                      override != null
                          ? override
                          : brokerDefault != null
                              ? brokerDefault
                              : ConfigDef.convertToString(def.defaultValue, def.type);
                  configs.add(config(key, value, source, def.type, false, def.documentation));
                });
      }
      case BROKER -> {
        if (!resource.resourceName().isEmpty()
            && !resource.resourceName().equals(String.valueOf(brokerConfig.nodeId()))) {
          throw new InvalidRequestException(
              "This is broker " + brokerConfig.nodeId() + ", not " + resource.resourceName());
        }
        brokerConfig
            .describe()
            .forEach(
                (key, value) ->
                    configs.add(
                        config(
                                key,
                                value,
                                ConfigSource.STATIC_BROKER_CONFIG,
                                BrokerConfig.typeOf(key),
                                true,
                                BrokerConfig.documentationOf(key))
                            .setIsSensitive(BrokerConfig.isSensitive(key))));
      }
      default ->
          throw new InvalidRequestException("Unsupported resource type " + resource.resourceType());
    }
    return configs;
  }

  private static DescribeConfigsResourceResult config(
      String name,
      String value,
      ConfigSource source,
      ConfigDef.Type type,
      boolean readOnly,
      String doc) {
    return new DescribeConfigsResourceResult()
        .setName(name)
        .setValue(value)
        .setReadOnly(readOnly)
        .setConfigSource(source.id())
        .setIsSensitive(false)
        .setConfigType(ConfigType.forId(configTypeId(type)).id())
        .setDocumentation(doc);
  }

  private static byte configTypeId(ConfigDef.Type type) {
    return switch (type) {
      case BOOLEAN -> ConfigType.BOOLEAN.id();
      case STRING -> ConfigType.STRING.id();
      case INT -> ConfigType.INT.id();
      case SHORT -> ConfigType.SHORT.id();
      case LONG -> ConfigType.LONG.id();
      case DOUBLE -> ConfigType.DOUBLE.id();
      case LIST -> ConfigType.LIST.id();
      case CLASS -> ConfigType.CLASS.id();
      case PASSWORD -> ConfigType.PASSWORD.id();
    };
  }

  CompletableFuture<IncrementalAlterConfigsResponse> incrementalAlter(
      RequestContext context, AbstractRequest request) {
    RequestHeader header = context.header;
    IncrementalAlterConfigsRequestData data = ((IncrementalAlterConfigsRequest) request).data();
    IncrementalAlterConfigsResponseData response = new IncrementalAlterConfigsResponseData();
    List<CompletableFuture<Void>> alters = new ArrayList<>();
    for (AlterConfigsResource resource : data.resources()) {
      AlterConfigsResourceResponse result =
          new AlterConfigsResourceResponse()
              .setResourceType(resource.resourceType())
              .setResourceName(resource.resourceName());
      response.responses().add(result);
      Errors refused =
          refusal(
              context,
              AclOperation.ALTER_CONFIGS,
              resource.resourceType(),
              resource.resourceName());
      if (refused != null) {
        result.setErrorCode(refused.code());
        continue;
      }
      alters.add(
          alter(
                  resource.resourceType(),
                  resource.resourceName(),
                  data.validateOnly(),
                  current -> applyOperations(current, resource.configs()),
                  header)
              .thenAccept(
                  error ->
                      result.setErrorCode(error.error().code()).setErrorMessage(error.message())));
    }
    return CompletableFuture.allOf(alters.toArray(CompletableFuture[]::new))
        .thenApply(v -> new IncrementalAlterConfigsResponse(response));
  }

  CompletableFuture<AlterConfigsResponse> alter(RequestContext context, AbstractRequest request) {
    RequestHeader header = context.header;
    AlterConfigsRequestData data = ((AlterConfigsRequest) request).data();
    AlterConfigsResponseData response = new AlterConfigsResponseData();
    List<CompletableFuture<Void>> alters = new ArrayList<>();
    for (AlterConfigsRequestData.AlterConfigsResource resource : data.resources()) {
      AlterConfigsResponseData.AlterConfigsResourceResponse result =
          new AlterConfigsResponseData.AlterConfigsResourceResponse()
              .setResourceType(resource.resourceType())
              .setResourceName(resource.resourceName());
      response.responses().add(result);
      Errors refused =
          refusal(
              context,
              AclOperation.ALTER_CONFIGS,
              resource.resourceType(),
              resource.resourceName());
      if (refused != null) {
        result.setErrorCode(refused.code());
        continue;
      }
      Map<String, String> replacement = new HashMap<>();
      resource.configs().forEach(c -> replacement.put(c.name(), c.value()));
      alters.add(
          alter(
                  resource.resourceType(),
                  resource.resourceName(),
                  data.validateOnly(),
                  current -> replacement,
                  header)
              .thenAccept(
                  error ->
                      result.setErrorCode(error.error().code()).setErrorMessage(error.message())));
    }
    return CompletableFuture.allOf(alters.toArray(CompletableFuture[]::new))
        .thenApply(v -> new AlterConfigsResponse(response));
  }

  /**
   * Computes a topic's new overrides, validates them, stores them and applies them to its logs.
   *
   * @return the outcome for the response: {@code NONE} or the error
   */
  private CompletableFuture<ApiError> alter(
      byte resourceType,
      String name,
      boolean validateOnly,
      UnaryOperator<Map<String, String>> change,
      RequestHeader header) {
    if (ConfigResource.Type.forId(resourceType) != ConfigResource.Type.TOPIC) {
      return CompletableFuture.completedFuture(
          new ApiError(
              Errors.INVALID_REQUEST,
              "Only topic configs can be altered; broker configs are static"));
    }
    return CompletableFuture.<TopicMetadata>supplyAsync(
            () -> {
              TopicMetadata topic = topic(name);
              Map<String, String> overrides = change.apply(new HashMap<>(topic.configs()));
              try {
                TopicConfigs.validate(brokerConfig.topicDefaults(), overrides);
              } catch (ConfigException e) {
                throw new InvalidConfigurationException(e.getMessage());
              }
              if (validateOnly) {
                return null;
              }
              return metadata.updateConfigs(name, overrides);
            },
            metadataExecutor)
        .handle((v, e) -> ErrorMapping.apiError(e, header));
  }

  private static Map<String, String> applyOperations(
      Map<String, String> overrides, Iterable<AlterableConfig> operations) {
    for (AlterableConfig op : operations) {
      switch (op.configOperation()) {
        case 0 -> overrides.put(op.name(), op.value()); // SET
        case 1 -> overrides.remove(op.name()); // DELETE
        default ->
            throw new InvalidRequestException(
                "APPEND and SUBTRACT apply to list configs, and no list config can take more than one value yet");
      }
    }
    return overrides;
  }

  private TopicMetadata topic(String name) {
    return metadata
        .topic(name)
        .orElseThrow(
            () -> new UnknownTopicOrPartitionException("Topic '" + name + "' does not exist"));
  }
}
