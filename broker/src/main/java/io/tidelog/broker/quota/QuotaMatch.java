package io.tidelog.broker.quota;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.MeasurableStat;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.Quota;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.quota.ClientQuotaEntity;

/**
 * The quota of one kind that applies to a request's user and client id, and whom its usage is kept
 * for, found as Kafka finds it: the first set of, in Kafka's order, (user, client id), (user,
 * default client), (user), (default user, client id), (default user, default client), (default
 * user), (client id), (default client). Its usage is kept by a kafka-clients {@link Sensor} of
 * {@value ClientQuotaManager#SAMPLES} windows of {@value ClientQuotaManager#WINDOW_SECONDS} s,
 * dropped after an hour without use, as Kafka's are.
 */
record QuotaMatch(double bound, String user, String clientId) {
  private static final long INACTIVE_SENSOR_EXPIRY_SECONDS = 3_600;

  /**
   * The match for {@code user} and {@code clientId}, or null when no quota of {@code key} applies.
   */
  static QuotaMatch find(
      Map<ClientQuotaEntity, Map<String, Double>> quotas,
      String key,
      String user,
      String clientId) {
    String u = ClientQuotaEntity.USER;
    String c = ClientQuotaEntity.CLIENT_ID;
    Object[][] order = {
      {entity(u, user, c, clientId), user, clientId},
      {entity(u, user, c, null), user, clientId},
      {entity(u, user), user, ""},
      {entity(u, null, c, clientId), user, clientId},
      {entity(u, null, c, null), user, clientId},
      {entity(u, null), user, ""},
      {entity(c, clientId), "", clientId},
      {entity(c, null), "", clientId},
    };
    for (Object[] candidate : order) {
      Map<String, Double> values = quotas.get((ClientQuotaEntity) candidate[0]);
      if (values != null && values.containsKey(key)) {
        return new QuotaMatch(values.get(key), (String) candidate[1], (String) candidate[2]);
      }
    }
    return null;
  }

  /**
   * The sensor that keeps this match's usage of the quota {@code key}, made with {@code stat} the
   * first time; its bound follows the quota when that changed.
   */
  Sensor sensor(Metrics metrics, String key, Supplier<MeasurableStat> stat) {
    String name = key + ":" + user + ":" + clientId;
    MetricConfig config =
        new MetricConfig()
            .timeWindow(ClientQuotaManager.WINDOW_SECONDS, TimeUnit.SECONDS)
            .samples(ClientQuotaManager.SAMPLES)
            .quota(Quota.upperBound(bound));
    MetricName usage =
        new MetricName(
            key,
            "tidelog-quotas",
            "the usage " + key + " bounds",
            Map.of("user", user, "client-id", clientId));
    synchronized (metrics) {
      Sensor sensor = metrics.getSensor(name);
      if (sensor == null) {
        sensor = metrics.sensor(name, config, INACTIVE_SENSOR_EXPIRY_SECONDS);
        sensor.add(usage, stat.get());
      } else {
        metrics.metric(usage).config(config);
      }
      return sensor;
    }
  }

  private static ClientQuotaEntity entity(String type, String name) {
    Map<String, String> entries = new HashMap<>();
    entries.put(type, name);
    return new ClientQuotaEntity(entries);
  }

  private static ClientQuotaEntity entity(String type1, String name1, String type2, String name2) {
    Map<String, String> entries = new HashMap<>();
    entries.put(type1, name1);
    entries.put(type2, name2);
    return new ClientQuotaEntity(entries);
  }
}
