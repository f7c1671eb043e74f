package io.tidelog.broker.config;

import static org.apache.kafka.common.config.ConfigDef.Importance.MEDIUM;
import static org.apache.kafka.common.config.ConfigDef.Range.atLeast;
import static org.apache.kafka.common.config.ConfigDef.Type.BOOLEAN;
import static org.apache.kafka.common.config.ConfigDef.Type.INT;

import io.tidelog.broker.log.LogConfig;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.TopicConfig;

/**
 * Every topic config a topic may set, under Kafka's names: those the log honours ({@link
 * LogConfig}) and those of replication, {@code min.insync.replicas} and {@code
 * unclean.leader.election.enable}.
 */
public final class TopicConfigs {
  public static final ConfigDef CONFIG_DEF =
      new ConfigDef(LogConfig.CONFIG_DEF)
          .define(
              TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG,
              INT,
              1,
              atLeast(1),
              MEDIUM,
              TopicConfig.MIN_IN_SYNC_REPLICAS_DOC)
          .define(
              TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG,
              BOOLEAN,
              false,
              MEDIUM,
              TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_DOC);

  private TopicConfigs() {}

  /**
   * Checks a topic's overrides on top of the broker's defaults.
   *
   * @throws ConfigException naming the key when a key is unknown or a value invalid
   */
  public static void validate(Map<String, String> brokerDefaults, Map<String, String> overrides) {
    for (String key : overrides.keySet()) {
      if (!CONFIG_DEF.names().contains(key)) {
        throw new ConfigException("Unknown topic config '" + key + "'");
      }
    }
    CONFIG_DEF.parse(merged(brokerDefaults, overrides));
  }

  /** The log config of a topic: Kafka's defaults, under the broker's, under the topic's. */
  public static LogConfig logConfig(
      Map<String, String> brokerDefaults, Map<String, String> overrides) {
    Map<String, String> merged = merged(brokerDefaults, overrides);
    merged.keySet().retainAll(LogConfig.CONFIG_DEF.names());
    return LogConfig.parse(merged);
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
