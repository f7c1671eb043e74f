package io.tidelog.broker.config;

import io.tidelog.broker.log.LogConfig;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.InvalidConfigurationException;

/**
 * Every topic config a topic may set: each of Kafka 4.1's, under its name, type, default and checks
 * as Kafka's own {@code LogConfig} defines them (the names, each value, and how values go
 * together), and Tidelog's own {@value LogConfig#MAX_UNCOMPRESSED_MESSAGE_BYTES_CONFIG}. The log
 * honours those of {@link LogConfig}, replication {@code min.insync.replicas} and {@code
 * unclean.leader.election.enable}; the README lists those that are accepted with no effect here
 * (tiered storage, {@code preallocate}).
 */
public final class TopicConfigs {
  public static final ConfigDef CONFIG_DEF =
      org.apache.kafka.storage.internals.log.LogConfig.configDefCopy()
          .define(
              LogConfig.CONFIG_DEF
                  .configKeys()
                  .get(LogConfig.MAX_UNCOMPRESSED_MESSAGE_BYTES_CONFIG));

  private static final String INTERNAL_SEGMENT_BYTES =
      org.apache.kafka.storage.internals.log.LogConfig.INTERNAL_SEGMENT_BYTES_CONFIG;

  private TopicConfigs() {}

  /** The topic configs DescribeConfigs shows: all but Kafka's internal ones. */
  public static Map<String, ConfigDef.ConfigKey> describable() {
    Map<String, ConfigDef.ConfigKey> keys = new java.util.TreeMap<>(CONFIG_DEF.configKeys());
    keys.values().removeIf(key -> key.internalConfig);
    return keys;
  }

  /**
   * Checks a topic's overrides on top of the broker's defaults, as Kafka's controller does.
   *
   * @throws ConfigException naming the key when a key is unknown, a value invalid or two values
   *     conflict
   */
  public static void validate(Map<String, String> brokerDefaults, Map<String, String> overrides) {
    java.util.Properties kafkas = new java.util.Properties();
    List<String> nulls = new java.util.ArrayList<>();
    overrides.forEach(
        (key, value) -> {
          if (value == null) {
            nulls.add(key);
          } else if (!key.equals(LogConfig.MAX_UNCOMPRESSED_MESSAGE_BYTES_CONFIG)) {
            kafkas.put(key, value);
          }
        });
    if (!nulls.isEmpty()) {
      throw new ConfigException(
          "Null value not supported for topic configs: " + String.join(",", nulls));
    }
    try {
      org.apache.kafka.storage.internals.log.LogConfig.validate(
          Map.of(), kafkas, brokerDefaults, false);
    } catch (InvalidConfigurationException e) {
      throw new ConfigException(e.getMessage());
    }
    CONFIG_DEF.parse(merged(brokerDefaults, overrides));
  }

  /** The log config of a topic: Kafka's defaults, under the broker's, under the topic's. */
  public static LogConfig logConfig(
      Map<String, String> brokerDefaults, Map<String, String> overrides) {
    Map<String, String> merged = merged(brokerDefaults, overrides);
    // Kafka's internal.segment.bytes, for tests, overrides segment.bytes below its 1 MiB minimum
    String internal = merged.get(INTERNAL_SEGMENT_BYTES);
    if (internal != null) {
      merged.put(TopicConfig.SEGMENT_BYTES_CONFIG, internal);
    }
    merged.keySet().retainAll(LogConfig.CONFIG_DEF.names());
    return LogConfig.parse(merged);
  }

  /** A topic's value of {@code key} as a string: its override, else the broker's, else Kafka's. */
  public static String effectiveValue(
      Map<String, String> brokerDefaults, Map<String, String> overrides, String key) {
    ConfigDef.ConfigKey def = CONFIG_DEF.configKeys().get(key);
    Object value = def == null ? null : value(brokerDefaults, overrides, key);
    return value == null ? null : ConfigDef.convertToString(value, def.type);
  }

  /** The topic's {@code min.insync.replicas}. */
  public static int minInsyncReplicas(
      Map<String, String> brokerDefaults, Map<String, String> overrides) {
    return (Integer) value(brokerDefaults, overrides, TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG);
  }

  /** The topic's {@code unclean.leader.election.enable}. */
  public static boolean uncleanLeaderElectionEnable(
      Map<String, String> brokerDefaults, Map<String, String> overrides) {
    return (Boolean)
        value(brokerDefaults, overrides, TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG);
  }

  private static Object value(
      Map<String, String> brokerDefaults, Map<String, String> overrides, String key) {
    return CONFIG_DEF.parse(merged(brokerDefaults, overrides)).get(key);
  }

  private static Map<String, String> merged(
      Map<String, String> brokerDefaults, Map<String, String> overrides) {
    Map<String, String> merged = new HashMap<>(brokerDefaults);
    merged.putAll(overrides);
    return merged;
  }
}
