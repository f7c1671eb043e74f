package io.tidelog.broker.cluster;

import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.Map;

/**
 * How a broker's dynamic configs are stored, under {@code broker-configs/<broker id>}, and the
 * cluster-wide default under {@code broker-configs/default}: a JSON object of key to value, as
 * Kafka's metadata log stores the {@code ConfigRecord}s of a BROKER resource.
 */
final class BrokerConfigRecord {
  static final String PREFIX = "broker-configs/";
  private static final String DEFAULT = "default";

  private BrokerConfigRecord() {}

  /** The key of {@code entity}: a broker id, or the empty name of the cluster default. */
  static String key(String entity) {
    return PREFIX + (entity.isEmpty() ? DEFAULT : entity);
  }

  /** The entity of a key under {@link #PREFIX}. */
  static String entityOf(String key) {
    String name = key.substring(PREFIX.length());
    if (name.equals(DEFAULT)) {
      return "";
    }
    return String.valueOf(Integer.parseInt(name));
  }

  static String toJson(Map<String, String> configs) {
    JsonObject json = new JsonObject();
    configs.forEach(json::put);
    return json.encode();
  }

  static Map<String, String> valuesOf(String value) {
    Map<String, String> configs = new HashMap<>();
    new JsonObject(value).forEach(e -> configs.put(e.getKey(), (String) e.getValue()));
    return Map.copyOf(configs);
  }
}
