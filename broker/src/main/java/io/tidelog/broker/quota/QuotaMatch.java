package io.tidelog.broker.quota;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.quota.ClientQuotaEntity;

/**
 * The quota of one kind that applies to a request's user and client id, and whom its usage is kept
 * for, found as Kafka finds it: the first set of, in Kafka's order, (user, client id), (user,
 * default client), (user), (default user, client id), (default user, default client), (default
 * user), (client id), (default client).
 */
record QuotaMatch(double bound, String user, String clientId) {
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
