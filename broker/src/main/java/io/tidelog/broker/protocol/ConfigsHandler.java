package io.tidelog.broker.protocol;

import io.tidelog.broker.cluster.MetadataStore;
import io.tidelog.broker.cluster.TopicMetadata;
import io.tidelog.broker.config.BrokerConfig;
import io.tidelog.broker.config.BrokerLoggers;
import io.tidelog.broker.config.DynamicBrokerConfig;
import io.tidelog.broker.config.TopicConfigs;
import io.tidelog.broker.security.Authorization;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.apache.kafka.clients.admin.AlterConfigOp.OpType;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.AlterConfigsRequestData;
import org.apache.kafka.common.message.AlterConfigsResponseData;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsRequestData.DescribeConfigsResource;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsResourceResult;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsResult;
import org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsSynonym;
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
 * DescribeConfigs, AlterConfigs and IncrementalAlterConfigs on topics and brokers, as Kafka serves
 * them. A topic's value comes from its override, else the broker's default of it ({@code log.*}:
 * this broker's dynamic config, the cluster's dynamic default, the static config), else Kafka's
 * default, and DescribeConfigs reports which ({@code includeSynonyms} lists every layer). A
 * broker's dynamic configs (one broker by id, or the cluster default by the empty name) are stored
 * in etcd and taken up by every broker from its watch ({@link DynamicBrokerConfig}); keys that need
 * a restart are refused with Kafka's INVALID_REQUEST, and DescribeConfigs shows them read-only.
 *
 * <p>Authorized as in Kafka: describing needs DESCRIBE_CONFIGS, altering ALTER_CONFIGS, on the
 * topic (else TOPIC_AUTHORIZATION_FAILED) or, for a broker, on the cluster (else
 * CLUSTER_AUTHORIZATION_FAILED).
 */
public final class ConfigsHandler {
  private final DynamicBrokerConfig brokerConfig;
  private final MetadataStore metadata;
  private final Executor metadataExecutor;
  private final Authorization authorization;
  private final String nodeId;

  public ConfigsHandler(
      DynamicBrokerConfig brokerConfig,
      MetadataStore metadata,
      Executor metadataExecutor,
      Authorization authorization) {
    this.brokerConfig = brokerConfig;
    this.metadata = metadata;
    this.metadataExecutor = metadataExecutor;
    this.authorization = authorization;
    this.nodeId = String.valueOf(brokerConfig.staticConfig().nodeId());
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
    DescribeConfigsRequestData requestData = ((DescribeConfigsRequest) request).data();
    DescribeConfigsResponseData data = new DescribeConfigsResponseData();
    for (DescribeConfigsResource resource : requestData.resources()) {
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
        if (!requestData.includeSynonyms()) {
          configs.forEach(c -> c.setSynonyms(new ArrayList<>()));
        }
        if (!requestData.includeDocumentation()) {
          configs.forEach(c -> c.setDocumentation(null));
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
        Map<String, String> defaults = brokerConfig.topicDefaults();
        TopicConfigs.describable()
            .forEach(
                (key, def) -> {
                  List<DescribeConfigsSynonym> synonyms = new ArrayList<>();
                  String override = topic.configs().get(key);
                  if (override != null) {
                    synonyms.add(synonym(key, override, ConfigSource.TOPIC_CONFIG));
                  }
                  String brokerKey = BrokerConfig.brokerSynonymOf(key);
                  if (brokerKey != null) {
                    synonyms.addAll(dynamicSynonyms(brokerKey));
                    if (defaults.containsKey(key)
                        && !brokerConfig.own().containsKey(brokerKey)
                        && !brokerConfig.clusterDefault().containsKey(brokerKey)) {
                      synonyms.add(
                          synonym(brokerKey, defaults.get(key), ConfigSource.STATIC_BROKER_CONFIG));
                    }
                  }
                  if (def.hasDefault() && def.defaultValue != null) {
                    synonyms.add(
                        synonym(
                            key,
                            ConfigDef.convertToString(def.defaultValue, def.type),
                            ConfigSource.DEFAULT_CONFIG));
                  }
                  configs.add(entry(key, synonyms, def.type, false, false, def.documentation));
                });
      }
      case BROKER -> {
        String name = resource.resourceName();
        if (name.isEmpty()) {
          brokerConfig
              .clusterDefault()
              .forEach(
                  (key, value) ->
                      configs.add(
                          brokerEntry(
                              key,
                              List.of(
                                  synonym(
                                      key,
                                      hidden(key, value),
                                      ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)))));
        } else {
          thisBroker(name);
          BrokerConfig current = brokerConfig.current();
          BrokerConfig statics = brokerConfig.staticConfig();
          Map<String, String> staticValues = statics.describe();
          current
              .describe()
              .forEach(
                  (key, value) -> {
                    List<DescribeConfigsSynonym> synonyms = new ArrayList<>(dynamicSynonyms(key));
                    if (statics.isSet(key)) {
                      synonyms.add(
                          synonym(key, staticValues.get(key), ConfigSource.STATIC_BROKER_CONFIG));
                    }
                    ConfigDef.ConfigKey def = BrokerConfig.CONFIG_DEF.configKeys().get(key);
                    if (def != null && def.hasDefault() && def.defaultValue != null) {
                      synonyms.add(
                          synonym(
                              key,
                              BrokerConfig.isSensitive(key)
                                  ? null
                                  : ConfigDef.convertToString(def.defaultValue, def.type),
                              ConfigSource.DEFAULT_CONFIG));
                    }
                    configs.add(brokerEntry(key, synonyms).setValue(value));
                  });
          // Keys stored that Tidelog does not know: shown as Kafka shows them, hidden, read-only
          brokerConfig.own().keySet().stream()
              .filter(key -> !BrokerConfig.isKnown(key))
              .forEach(
                  key ->
                      configs.add(
                          brokerEntry(
                              key,
                              List.of(synonym(key, null, ConfigSource.DYNAMIC_BROKER_CONFIG)))));
        }
      }
      case BROKER_LOGGER -> {
        thisBroker(resource.resourceName());
        BrokerLoggers.levels()
            .forEach(
                (logger, level) ->
                    configs.add(
                        new DescribeConfigsResourceResult()
                            .setName(logger)
                            .setValue(level)
                            .setReadOnly(false)
                            .setConfigSource(ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG.id())
                            .setIsSensitive(false)
                            .setConfigType(ConfigType.UNKNOWN.id())));
      }
      default ->
          throw new InvalidRequestException("Unsupported resource type " + resource.resourceType());
    }
    return configs;
  }

  private void thisBroker(String name) {
    if (!name.equals(nodeId)) {
      throw new InvalidRequestException("This is broker " + nodeId + ", not " + name);
    }
  }

  /**
   * Changes log levels of this broker, all or none: each operation is checked first, as Kafka does
   * (SET to one of Kafka's levels, DELETE of any logger but the root, no APPEND or SUBTRACT).
   */
  private ApiError alterLoggers(
      String name,
      boolean validateOnly,
      Iterable<AlterableConfig> operations,
      RequestHeader header) {
    try {
      thisBroker(name);
      java.util.Set<String> loggers = BrokerLoggers.levels().keySet();
      for (AlterableConfig op : operations) {
        OpType type = OpType.forId(op.configOperation());
        if (type == OpType.SET) {
          BrokerLoggers.checkSet(loggers, op.name(), op.value());
        } else if (type == OpType.DELETE) {
          BrokerLoggers.checkUnset(loggers, op.name());
        } else {
          throw new InvalidRequestException(
              type + " operation is not allowed for the BROKER_LOGGER resource");
        }
      }
      if (!validateOnly) {
        for (AlterableConfig op : operations) {
          if (OpType.forId(op.configOperation()) == OpType.SET) {
            BrokerLoggers.set(op.name(), op.value());
          } else {
            BrokerLoggers.unset(op.name());
          }
        }
      }
      return ApiError.NONE;
    } catch (RuntimeException e) {
      return ErrorMapping.apiError(e, header);
    }
  }

  /** The dynamic layers that set broker key {@code key}: this broker's, then the default's. */
  private List<DescribeConfigsSynonym> dynamicSynonyms(String key) {
    List<DescribeConfigsSynonym> synonyms = new ArrayList<>();
    String own = brokerConfig.own().get(key);
    if (own != null) {
      synonyms.add(synonym(key, hidden(key, own), ConfigSource.DYNAMIC_BROKER_CONFIG));
    }
    String clusterDefault = brokerConfig.clusterDefault().get(key);
    if (clusterDefault != null) {
      synonyms.add(
          synonym(key, hidden(key, clusterDefault), ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG));
    }
    return synonyms;
  }

  /** A stored value as DescribeConfigs may show it: null for sensitive and unknown keys. */
  private static String hidden(String key, String value) {
    return BrokerConfig.isKnown(key) && !BrokerConfig.isSensitive(key) ? value : null;
  }

  private static DescribeConfigsSynonym synonym(String name, String value, ConfigSource source) {
    return new DescribeConfigsSynonym().setName(name).setValue(value).setSource(source.id());
  }

  /** A broker config's entry: read-only unless dynamic; unknown keys are sensitive, as in Kafka. */
  private static DescribeConfigsResourceResult brokerEntry(
      String key, List<DescribeConfigsSynonym> synonyms) {
    boolean known = BrokerConfig.isKnown(key);
    return entry(
        key,
        synonyms,
        known ? BrokerConfig.typeOf(key) : ConfigDef.Type.PASSWORD,
        // Kafka describes its dynamic-only keys read-only, though AlterConfigs changes them
        !DynamicBrokerConfig.isDynamic(key) || BrokerConfig.LISTED_WHEN_SET.contains(key),
        !known || BrokerConfig.isSensitive(key),
        known ? BrokerConfig.documentationOf(key) : null);
  }

  /** An entry whose value and source are those of its first synonym (or Kafka's default, none). */
  private static DescribeConfigsResourceResult entry(
      String name,
      List<DescribeConfigsSynonym> synonyms,
      ConfigDef.Type type,
      boolean readOnly,
      boolean sensitive,
      String doc) {
    DescribeConfigsSynonym first =
        synonyms.isEmpty() ? synonym(name, null, ConfigSource.DEFAULT_CONFIG) : synonyms.get(0);
    return new DescribeConfigsResourceResult()
        .setName(name)
        .setValue(sensitive ? null : first.value())
        .setReadOnly(readOnly)
        .setConfigSource(first.source())
        .setIsSensitive(sensitive)
        .setSynonyms(new ArrayList<>(synonyms))
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
      if (ConfigResource.Type.forId(resource.resourceType()) == ConfigResource.Type.BROKER_LOGGER) {
        ApiError error =
            alterLoggers(resource.resourceName(), data.validateOnly(), resource.configs(), header);
        result.setErrorCode(error.error().code()).setErrorMessage(error.message());
        continue;
      }
      alters.add(
          alter(
                  resource.resourceType(),
                  resource.resourceName(),
                  data.validateOnly(),
                  (current, effective) ->
                      applyOperations(
                          resource.resourceType(), current, effective, resource.configs()),
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
                  (current, effective) -> replacement,
                  header)
              .thenAccept(
                  error ->
                      result.setErrorCode(error.error().code()).setErrorMessage(error.message())));
    }
    return CompletableFuture.allOf(alters.toArray(CompletableFuture[]::new))
        .thenApply(v -> new AlterConfigsResponse(response));
  }

  /**
   * What an alteration makes of a resource's stored configs, given them and the resource's
   * effective value of a key (what APPEND and SUBTRACT start from when nothing is stored).
   */
  private interface Change {
    Map<String, String> apply(Map<String, String> current, Function<String, String> effective);
  }

  /**
   * Computes a topic's new overrides, or a broker's new dynamic configs, validates them, stores
   * them (unless {@code validateOnly}), and every broker applies them from its watch.
   *
   * @return the outcome for the response: {@code NONE} or the error
   */
  private CompletableFuture<ApiError> alter(
      byte resourceType, String name, boolean validateOnly, Change change, RequestHeader header) {
    return CompletableFuture.<Void>supplyAsync(
            () -> {
              switch (ConfigResource.Type.forId(resourceType)) {
                case TOPIC -> alterTopic(name, validateOnly, change);
                case BROKER -> alterBroker(name, validateOnly, change);
                default ->
                    throw new InvalidRequestException(
                        "Configs of resource type " + resourceType + " cannot be altered");
              }
              return null;
            },
            metadataExecutor)
        .handle((v, e) -> ErrorMapping.apiError(e, header));
  }

  private void alterTopic(String name, boolean validateOnly, Change change) {
    TopicMetadata topic = topic(name);
    Map<String, String> defaults = brokerConfig.topicDefaults();
    Map<String, String> overrides =
        change.apply(
            new HashMap<>(topic.configs()),
            key -> TopicConfigs.effectiveValue(defaults, topic.configs(), key));
    try {
      TopicConfigs.validate(defaults, overrides);
    } catch (ConfigException e) {
      throw new InvalidConfigurationException(e.getMessage());
    }
    if (!validateOnly) {
      metadata.updateConfigs(name, overrides);
    }
  }

  /** A broker's dynamic configs: {@code name} is its id, or empty for the cluster default. */
  private void alterBroker(String name, boolean validateOnly, Change change) {
    if (!name.isEmpty() && !name.matches("[0-9]{1,9}")) {
      throw new InvalidRequestException("Invalid broker name " + name);
    }
    BrokerConfig effective = name.equals(nodeId) ? brokerConfig.current() : null;
    UnaryOperator<Map<String, String>> checked =
        stored -> {
          Map<String, String> next =
              change.apply(
                  stored,
                  key ->
                      effective != null
                          ? effective.describe().get(key)
                          : brokerConfig.staticConfig().describe().get(key));
          for (Map.Entry<String, String> config : next.entrySet()) {
            if (config.getValue() == null) {
              throw new InvalidRequestException(
                  "Null value not supported for broker config " + config.getKey());
            }
          }
          brokerConfig.validate(name, next);
          return next;
        };
    if (validateOnly) {
      checked.apply(new HashMap<>(metadata.image().brokerConfigs().getOrDefault(name, Map.of())));
    } else {
      metadata.alterBrokerConfigs(name, checked);
    }
  }

  private static Map<String, String> applyOperations(
      byte resourceType,
      Map<String, String> configs,
      Function<String, String> effective,
      Iterable<AlterableConfig> operations) {
    boolean topic = ConfigResource.Type.forId(resourceType) == ConfigResource.Type.TOPIC;
    for (AlterableConfig op : operations) {
      OpType type = OpType.forId(op.configOperation());
      if (type == null) {
        throw new InvalidRequestException("Unknown config operation " + op.configOperation());
      }
      switch (type) {
        case SET -> configs.put(op.name(), op.value());
        case DELETE -> configs.remove(op.name());
        case APPEND, SUBTRACT -> {
          ConfigDef.ConfigKey def =
              (topic ? TopicConfigs.CONFIG_DEF : BrokerConfig.CONFIG_DEF)
                  .configKeys()
                  .get(op.name());
          if (def == null || def.type != ConfigDef.Type.LIST) {
            throw new InvalidConfigurationException(
                topic
                    ? "Can't " + type + " to key " + op.name() + " because its type is not LIST."
                    : "Config value append is not allowed for config key: " + op.name());
          }
          String base =
              configs.containsKey(op.name()) ? configs.get(op.name()) : effective.apply(op.name());
          List<String> values =
              new ArrayList<>(
                  base == null || base.isEmpty() ? List.of() : List.of(base.split("\\s*,\\s*")));
          List<String> operands = List.of(op.value().split("\\s*,\\s*"));
          if (type == OpType.APPEND) {
            operands.stream().filter(v -> !values.contains(v)).forEach(values::add);
          } else {
            values.removeAll(operands);
          }
          configs.put(op.name(), String.join(",", values));
        }
      }
    }
    return configs;
  }

  private TopicMetadata topic(String name) {
    return metadata
        .topic(name)
        .orElseThrow(
            () -> new UnknownTopicOrPartitionException("Topic '" + name + "' does not exist"));
  }
}
