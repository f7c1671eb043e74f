package io.tidelog.broker.cluster;

import io.vertx.core.json.JsonObject;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.quota.ClientQuotaEntity;

/**
 * How a client quota is stored, under {@code quotas/<entity>}: the entity (user, client id, or
 * both; a null name is the default of its type) and its values ({@code producer_byte_rate} and the
 * others), as Kafka's metadata log stores a {@code ClientQuotaRecord}.
 */
final class ClientQuotaRecord {
  static final String PREFIX = "quotas/";

  private ClientQuotaRecord() {}

  /** The entity's key: its entries in name order, encoded so that any name fits a key. */
  static String key(ClientQuotaEntity entity) {
    StringBuilder key = new StringBuilder(PREFIX);
    new TreeMap<>(entity.entries())
        .forEach(
            (type, name) ->
                key.append(type)
                    .append(
                        name == null ? "" : "=" + URLEncoder.encode(name, StandardCharsets.UTF_8))
                    .append(';'));
    return key.toString();
  }

  static String toJson(ClientQuotaEntity entity, Map<String, Double> values) {
    JsonObject names = new JsonObject();
    entity.entries().forEach(names::put);
    JsonObject quotas = new JsonObject();
    values.forEach(quotas::put);
    return new JsonObject().put("entity", names).put("values", quotas).encode();
  }

  static ClientQuotaEntity entityOf(String value) {
    JsonObject names = new JsonObject(value).getJsonObject("entity");
    Map<String, String> entries = new HashMap<>();
    names.forEach(e -> entries.put(e.getKey(), (String) e.getValue()));
    return new ClientQuotaEntity(entries);
  }

  static Map<String, Double> valuesOf(String value) {
    JsonObject quotas = new JsonObject(value).getJsonObject("values");
    Map<String, Double> values = new HashMap<>();
    quotas.forEach(e -> values.put(e.getKey(), ((Number) e.getValue()).doubleValue()));
    return Map.copyOf(values);
  }
}
